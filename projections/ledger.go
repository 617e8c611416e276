package projections

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fledger/fledger/events"
)

// ErrOtherLedger: the projection database was built from another event
// stream than the one it is being caught up from (different fingerprint),
// or its checkpoint is beyond the stream's last sequence. Nothing is
// folded: the remedy is a rebuild from the stream at hand. It is the Err
// of a *[DBError].
var ErrOtherLedger = errors.New("projections: database was built from another ledger")

// Ledger identifies the event stream (the ledger) a projection database
// is built from: [events.Ledger], whose Created and FirstID are the
// fingerprint the database is bound to ([DB.Bind]).
type Ledger = events.Ledger

// LedgerSource is a [Source] that names the ledger it reads:
// [events.Store] is one ([events.Store].Ledger).
type LedgerSource interface {
	Ledger(ctx context.Context) (events.Ledger, error)
}

// projection_meta keys of the ledger fingerprint.
const (
	metaStream  = "ledger_stream"
	metaCreated = "ledger_created"
	metaFirstID = "ledger_first_id"
)

// Ledger returns the ledger the database is bound to; ok is false when it
// is bound to none yet (nothing folded). LastSeq is not stored (0).
func (db *DB) Ledger(ctx context.Context) (l Ledger, ok bool, err error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT key, value FROM projection_meta WHERE key IN (?, ?, ?)`, metaStream, metaCreated, metaFirstID)
	if err != nil {
		return Ledger{}, false, db.wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return Ledger{}, false, db.wrap(err)
		}
		switch k {
		case metaStream:
			l.Stream, ok = v, true
		case metaCreated:
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return Ledger{}, false, &DBError{Path: db.path, Detail: fmt.Sprintf("projection_meta.%s %q is not a time", metaCreated, v), Err: ErrCorrupt}
			}
			l.Created = t
		case metaFirstID:
			l.FirstID = v
		}
	}
	return l, ok, db.wrap(rows.Err())
}

// Bind ties the database to ledger l (from [events.Store].Ledger) before anything
// is folded from it:
//
//   - a database with nothing folded (checkpoint 0) adopts l's fingerprint;
//   - one bound to another ledger, one with folded data but no
//     fingerprint, and one whose checkpoint is beyond l.LastSeq are
//     refused with a *[DBError] wrapping [ErrOtherLedger] that names both
//     ledgers. Nothing is written then.
//
// [Projector.CatchUp] calls it itself when its source is a [LedgerSource]
// (an [events.Store]).
func (db *DB) Bind(ctx context.Context, l Ledger) error {
	cp, err := db.Checkpoint(ctx)
	if err != nil {
		return err
	}
	have, ok, err := db.Ledger(ctx)
	if err != nil {
		return err
	}
	if cp == 0 {
		if ok && have.Stream == l.Stream && have.Created.Equal(l.Created) && have.FirstID == l.FirstID {
			return nil
		}
		return db.writeLedger(ctx, l)
	}
	switch {
	case !ok:
		return &DBError{Path: db.path, Err: ErrOtherLedger,
			Detail: fmt.Sprintf("it holds events up to sequence %d but no ledger fingerprint, so it cannot be matched with this stream (%s)", cp, l)}
	case !have.Same(l):
		return &DBError{Path: db.path, Err: ErrOtherLedger,
			Detail: fmt.Sprintf("it was built (up to sequence %d) from %s, but the stream it is read against is %s", cp, have, l)}
	case cp > l.LastSeq:
		return &DBError{Path: db.path, Err: ErrOtherLedger,
			Detail: fmt.Sprintf("its checkpoint %d is beyond the stream's last sequence %d (%s): it was built from a longer stream", cp, l.LastSeq, l)}
	case have.FirstID == "" && l.FirstID != "":
		return db.writeLedger(ctx, l) // bound while the stream was empty
	}
	return nil
}

// writeLedger stores l's fingerprint in projection_meta.
func (db *DB) writeLedger(ctx context.Context, l Ledger) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return db.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, kv := range [][2]string{
		{metaStream, l.Stream},
		{metaCreated, l.Created.UTC().Format(time.RFC3339Nano)},
		{metaFirstID, l.FirstID},
	} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO projection_meta (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, kv[0], kv[1]); err != nil {
			return db.wrap(err)
		}
	}
	return db.wrap(tx.Commit())
}
