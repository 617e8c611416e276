package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fledger/fledger/internal/sqlitedb"
)

// DefaultFile is the projection database's file name inside the data
// directory (--data): <data>/projections.sqlite.
const DefaultFile = "projections.sqlite"

// Errors of [Open]. Both leave the event stream untouched: the projection
// database is derived data, and the remedy is to delete and rebuild it.
var (
	// ErrCorrupt: the file is not a SQLite database, is damaged, or is a
	// SQLite database that is not a fledger projection database.
	ErrCorrupt = errors.New("projections: database is corrupt or not a fledger projection database")
	// ErrNewerSchema: the database was written by a newer fledger
	// (its schema version is above [SchemaVersion]).
	ErrNewerSchema = errors.New("projections: database is from a newer fledger")
)

// DBError is the error [Open], queries and catch-ups return for an
// unusable projection database: it names the file and the command that
// rebuilds it. errors.Is(err, ErrCorrupt), errors.Is(err, ErrNewerSchema)
// or errors.Is(err, ErrOtherLedger) holds.
type DBError struct {
	// Path is the database file.
	Path string
	// Detail says what is wrong.
	Detail string
	// Err is ErrCorrupt, ErrNewerSchema or ErrOtherLedger.
	Err error
	// Rebuild is the complete command that rebuilds the database from the
	// right stream (the CLI sets it from its flags: --data, --nats, --db).
	// When empty, [RebuildCommand] of Path is shown.
	Rebuild string
	// Foreign is set when the file is not a fledger projection database
	// at all (not an SQLite database, or one without projection_meta):
	// a rebuild refuses to delete it ([Remove]), so the remedy is another
	// file.
	Foreign bool
}

// Error names the file, the problem and the rebuild command (for a
// foreign file: that fledger does not delete it).
func (e *DBError) Error() string {
	if e.Foreign {
		return fmt.Sprintf("%v: %s: %s; the event stream is not affected — this file is not a fledger projection database and fledger does not delete it: name another database file (--db), or delete it yourself if it is a damaged projection database",
			e.Err, e.Path, e.Detail)
	}
	cmd := e.Rebuild
	if cmd == "" {
		cmd = RebuildCommand(e.Path)
	}
	return fmt.Sprintf("%v: %s: %s; the event stream is not affected — rebuild the projections with `%s` (or delete the file)",
		e.Err, e.Path, e.Detail, cmd)
}

// RebuildCommand is the rebuild command for the database at path when
// nothing else is known: for <dir>/projections.sqlite it is
// `fledger --data <abs dir> stats --rebuild` (the embedded server's data
// directory holds both); for another file name the data directory (and
// --nats URL) cannot be told from the path, so it is a placeholder:
// `fledger --data <data dir> stats --rebuild --db <abs path>`.
func RebuildCommand(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if filepath.Base(abs) == DefaultFile {
		return "fledger --data " + ShellQuote(filepath.Dir(abs)) + " stats --rebuild"
	}
	return "fledger --data <data dir> stats --rebuild --db " + ShellQuote(abs)
}

// ShellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:=@,+ (for commands printed in messages).
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// Unwrap returns ErrCorrupt, ErrNewerSchema or ErrOtherLedger.
func (e *DBError) Unwrap() error { return e.Err }

// DB is an open projection database. It is safe for concurrent use, but
// catch-up writes are serialised by SQLite (one writer at a time; a
// second [Projector] waits up to the busy timeout and then resumes from
// the checkpoint the first one left).
type DB struct {
	sql  *sql.DB
	path string
	log  *slog.Logger
	// Rebuilt is true when Open found an older schema version and dropped
	// every table: the next catch-up starts at sequence 1.
	Rebuilt bool
}

// OpenOption configures [Open].
type OpenOption func(*openConfig)

type openConfig struct{ log *slog.Logger }

// WithLogger sets the logger for the rebuild-on-version-change line and
// skipped events (default slog.Default()).
func WithLogger(l *slog.Logger) OpenOption {
	return func(c *openConfig) {
		if l != nil {
			c.log = l
		}
	}
}

// Open opens or creates the projection database at path (its directory is
// created). A new file gets the schema of [SchemaVersion]; a database of
// an older version is emptied and recreated (logged at info, [DB].Rebuilt
// set), so the next catch-up rebuilds it from sequence 1. Errors: a
// *[DBError] wrapping ErrCorrupt (not a database, damaged, or not
// fledger's) or ErrNewerSchema.
func Open(ctx context.Context, path string, opts ...OpenOption) (*DB, error) {
	cfg := openConfig{log: slog.Default()}
	for _, o := range opts {
		o(&cfg)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("projections: %w", err)
		}
	}
	if err := refuseForeign(ctx, path); err != nil {
		return nil, err
	}
	sdb, err := sqlitedb.Open(ctx, path)
	if err != nil {
		if sqlitedb.IsCorrupt(err) {
			isSQLite, _ := sqlitedb.HasHeader(path)
			return nil, &DBError{Path: path, Detail: err.Error(), Err: ErrCorrupt, Foreign: !isSQLite}
		}
		return nil, fmt.Errorf("projections: open %s: %w", path, err)
	}
	db := &DB{sql: sdb, path: path, log: cfg.log}
	if err := db.migrate(ctx); err != nil {
		_ = sdb.Close()
		return nil, err
	}
	return db, nil
}

// refuseForeign checks, read-only, an existing SQLite database that is
// not in WAL mode — every projection database is — before the
// read-write open switches it to WAL (a write to another application's
// database): one without fledger's projection_meta table is refused
// untouched (a *DBError with Foreign set).
func refuseForeign(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil // created, or refused by the open
	}
	isSQLite, wal, err := sqlitedb.Format(path)
	if err != nil || !isSQLite || wal {
		return nil
	}
	ours, err := hasMetaTable(ctx, path)
	if err != nil || ours {
		return err
	}
	return &DBError{Path: path, Detail: "it is an SQLite database without fledger's projection_meta table", Err: ErrCorrupt, Foreign: true}
}

// migrate creates the schema, accepts the current version, rebuilds an
// older one and refuses a newer one or a foreign database. The version is
// first read without a lock: the current one is accepted and a newer or
// foreign database refused at once. Creating the schema in an empty file
// and rebuilding an older one are decided again and done inside one write
// transaction (BEGIN IMMEDIATE, see [sqlitedb.Open]), so that processes
// opening the same new or old file at once are serialised: the first
// creates or rebuilds the schema, the others wait for it (up to the busy
// timeout) and then find the current version. SQLite's DDL is
// transactional: a crash in the middle of a rebuild leaves the old
// schema, never a half-dropped one.
func (db *DB) migrate(ctx context.Context) error {
	have, empty, err := db.classify(ctx, db.sql)
	if err != nil || (!empty && have == SchemaVersion) {
		return err
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return db.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	if have, empty, err = db.classify(ctx, tx); err != nil || (!empty && have == SchemaVersion) {
		return err // refused, or another process created or rebuilt it first
	}
	if !empty {
		if _, err := tx.ExecContext(ctx, dropSQL()); err != nil {
			return db.wrap(err)
		}
	}
	if _, err := tx.ExecContext(ctx, schemaSQL()); err != nil {
		return db.wrap(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO projection_meta (key, value) VALUES ('schema_version', ?)`, strconv.Itoa(SchemaVersion)); err != nil {
		return db.wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return db.wrap(err)
	}
	if !empty {
		db.Rebuilt = true
		db.log.Info("projection schema version changed: rebuilding the projections from sequence 1",
			"db", db.path, "database_version", have, "code_version", SchemaVersion)
	}
	return nil
}

// classify reads, with q, whether the database has no tables yet (empty)
// or else its schema version; a newer version, or tables without a
// fledger schema version, is the *DBError that refuses it.
func (db *DB) classify(ctx context.Context, q querier) (version int, empty bool, err error) {
	var nTables int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&nTables); err != nil {
		return 0, false, db.wrap(err)
	}
	if nTables == 0 {
		return 0, true, nil
	}
	var v string
	if err := q.QueryRowContext(ctx, `SELECT value FROM projection_meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		var meta int
		foreign := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'projection_meta'`).Scan(&meta) == nil && meta == 0
		return 0, false, &DBError{Path: db.path, Detail: "it has tables but no fledger schema version (" + err.Error() + ")", Err: ErrCorrupt, Foreign: foreign}
	}
	have, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return 0, false, &DBError{Path: db.path, Detail: fmt.Sprintf("schema version %q is not a number", v), Err: ErrCorrupt}
	case have > SchemaVersion:
		return 0, false, &DBError{Path: db.path, Err: ErrNewerSchema,
			Detail: fmt.Sprintf("its schema version is %d, this fledger writes version %d", have, SchemaVersion)}
	}
	return have, false, nil
}

// wrap turns SQLite corruption errors into a *DBError; others get the
// package prefix.
func (db *DB) wrap(err error) error {
	if err == nil {
		return nil
	}
	if sqlitedb.IsCorrupt(err) {
		return &DBError{Path: db.path, Detail: err.Error(), Err: ErrCorrupt}
	}
	var de *DBError
	if errors.As(err, &de) {
		return err
	}
	return fmt.Errorf("projections: %w", err)
}

// Path returns the database file.
func (db *DB) Path() string { return db.path }

// SQL returns the underlying database handle (read-only use: queries of
// other packages, e.g. an HTTP API).
func (db *DB) SQL() *sql.DB { return db.sql }

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// Checkpoint returns the last stream sequence folded into the tables
// (0 for an empty projection).
func (db *DB) Checkpoint(ctx context.Context) (uint64, error) {
	var seq int64
	if err := db.sql.QueryRowContext(ctx, `SELECT seq FROM checkpoint WHERE id = 1`).Scan(&seq); err != nil {
		return 0, db.wrap(err)
	}
	return uint64(seq), nil
}
