package projections

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/fledger/fledger/internal/sqlitedb"
)

// readOnlyBusyMs is how long a read-only query waits for a writer's lock:
// short, since its callers (shell completion) must answer at once.
const readOnlyBusyMs = 200

// OpenReadOnly opens the existing projection database at path for
// reading only, as it is: nothing is created (a missing file is an
// error wrapping [os.ErrNotExist]), migrated or caught up, and every
// statement is query-only. Meant for quick lookups such as shell
// completion; an older or foreign schema makes the queries fail.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("projections: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("projections: %s is not a file", path)
	}
	sdb, err := sqlitedb.OpenReadOnly(ctx, path, readOnlyBusyMs)
	if err != nil {
		return nil, fmt.Errorf("projections: open %s: %w", path, err)
	}
	return &DB{sql: sdb, path: path, log: slog.Default()}, nil
}

// Agents lists every agent the projections hold a turn, profile or
// session of, sorted.
func (db *DB) Agents(ctx context.Context) ([]string, error) {
	return db.strings(ctx, `SELECT agent FROM turns UNION SELECT agent FROM usage_stats
		UNION SELECT agent FROM session_selection ORDER BY 1`)
}

// TurnRef names a turn for a lookup: [DB.RecentTurns].
type TurnRef struct {
	Agent     string
	TurnID    string
	SessionID string
	StartedAt UnixMillis
	Outcome   string
}

// RecentTurns returns the n most recently started turns whose id starts
// with prefix (of agent; "" = every agent), most recent first.
func (db *DB) RecentTurns(ctx context.Context, agent, prefix string, n int) ([]TurnRef, error) {
	var w where
	w.eq("agent", agent)
	if prefix != "" {
		// substr, not LIKE: a prefix holding % or _ matches literally.
		w.add("substr(turnId, 1, length(?)) = ?", prefix)
		w.args = append(w.args, prefix)
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT agent, turnId, sessionId, startedAt, outcome FROM turns"+w.sql()+
		" ORDER BY startedAt DESC, agent, turnId LIMIT ?", append(w.args, n)...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []TurnRef
	for rows.Next() {
		var t TurnRef
		if err := rows.Scan(&t.Agent, &t.TurnID, &t.SessionID, &t.StartedAt, &t.Outcome); err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, t)
	}
	return out, db.wrap(rows.Err())
}
