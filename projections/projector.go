package projections

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/fledger/fledger/events"
)

// Source is what a [Projector] reads: the stream in order from a sequence
// to its current end. [events.Store] implements it.
type Source interface {
	Read(ctx context.Context, from uint64) iter.Seq2[events.Event, error]
}

// DefaultBatchEvents is the default number of events per transaction
// ([WithBatchEvents]). A batch always ends on a commit boundary, so it may
// hold a few more.
const DefaultBatchEvents = 8192

// DefaultCacheRows is how many rows of each keyed table (usage_stats,
// session_selection, turns) a catch-up keeps cached after a flush by
// default ([WithCacheRows]).
const DefaultCacheRows = 4096

// ErrInjected is returned by a catch-up that [WithFailAfter] made fail.
var ErrInjected = errors.New("projections: injected failure")

// errCheckpointMoved means another writer advanced the checkpoint while
// this catch-up was folding: its cache is stale and it starts over.
var errCheckpointMoved = errors.New("projections: checkpoint moved under a concurrent catch-up")

// UnknownTypeError reports an event whose type the projections do not know
// (they were built for an older catalog). errors.Is(err,
// events.ErrUnknownType) holds.
type UnknownTypeError struct {
	// Type is the event type, Seq the stream sequence of its commit and
	// Index its position in the commit.
	Type  string
	Seq   uint64
	Index int
}

// Error names the type and the sequence and says how to skip it.
func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("projections: event type %q at stream sequence %d (event %d of its commit) is unknown to projection schema version %d; upgrade fledger, or rerun with --skip-unknown to skip such events (they are logged and counted in skipped_events)",
		e.Type, e.Seq, e.Index, SchemaVersion)
}

// Unwrap returns events.ErrUnknownType.
func (e *UnknownTypeError) Unwrap() error { return events.ErrUnknownType }

// ProjectorOption configures a [Projector].
type ProjectorOption func(*Projector)

// WithBatchEvents sets how many events are folded per transaction before
// the next commit boundary ends the batch (default [DefaultBatchEvents];
// values < 1 mean 1). A commit's events are never split across
// transactions.
func WithBatchEvents(n int) ProjectorOption {
	return func(p *Projector) { p.batch = max(n, 1) }
}

// WithCacheRows bounds the catch-up's cache: once a batch committed, at
// most n clean rows per keyed table (usage_stats, session_selection,
// turns) stay in memory (default [DefaultCacheRows]; values < 0 mean 0).
// A finished turn leaves once written; beyond n the least recently folded
// rows leave. A row that left is read back from the database when
// its key comes again, so the rows written do not depend on n; only how
// often rows are read back does.
func WithCacheRows(n int) ProjectorOption {
	return func(p *Projector) { p.cacheRows = max(n, 0) }
}

// WithSkipUnknown makes events of unknown types a logged, counted skip
// (table skipped_events) instead of an error. An event the store could not
// decode because its type is unregistered takes its whole commit with it
// (the store decodes a commit whole or not at all), which is quarantined
// with or without this option; one the store decoded but the projections
// do not know is skipped alone.
func WithSkipUnknown(skip bool) ProjectorOption {
	return func(p *Projector) { p.skipUnknown = skip }
}

// WithProgress calls fn after every committed batch with the checkpoint
// reached and the target sequence of the catch-up (0 when unbounded).
func WithProgress(fn func(done, target uint64)) ProjectorOption {
	return func(p *Projector) { p.progress = fn }
}

// WithFailAfter makes the catch-up fail with [ErrInjected] when it is
// about to write its n-th row (n ≥ 1), inside a transaction that then
// rolls back: a crash in the middle of a batch, for tests. 0 disables it.
func WithFailAfter(n int) ProjectorOption {
	return func(p *Projector) { p.failAfter = n }
}

// WithProjectorLogger sets the logger for skipped events (default: the
// database's logger).
func WithProjectorLogger(l *slog.Logger) ProjectorOption {
	return func(p *Projector) {
		if l != nil {
			p.log = l
		}
	}
}

// Projector folds the stream into a [DB]. Each catch-up reads from the
// checkpoint + 1 (decoded ahead on other goroutines), folds whole commits
// with the policy evolve functions into an in-memory cache, and every
// batch writes the changed rows and the new checkpoint in one
// transaction, on a goroutine of its own while the next batch folds (one
// batch written at a time, in order). A Projector is not safe for concurrent
// use; two Projectors (or processes) on one database serialise on
// SQLite's write lock, and a catch-up that finds the checkpoint moved
// starts over from it.
type Projector struct {
	db          *DB
	batch       int
	cacheRows   int
	skipUnknown bool
	progress    func(done, target uint64)
	failAfter   int
	written     int
	readBack    int // rows read back so far (Result.ReadBack)
	log         *slog.Logger
	// bound is set once the database was checked against (or bound to)
	// the source's ledger.
	bound bool
	// open are the open turns, read at the first SessionPruned.
	open openTurns

	// stmts are the tables' statements during a CatchUp, one per table
	// with a cache, in [tables] order; drv their puts on the driver's
	// connection during one flush ([Projector.driverStmts]).
	stmts []prepared
	drv   []drvStmts
	// w collects each flush's rows and nv holds one statement's
	// arguments, both reused by every flush.
	w  writer
	nv []driver.NamedValue
}

// NewProjector returns a projector writing db.
func NewProjector(db *DB, opts ...ProjectorOption) *Projector {
	p := &Projector{db: db, batch: DefaultBatchEvents, cacheRows: DefaultCacheRows, log: db.log}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Result describes one catch-up.
type Result struct {
	// From is the checkpoint the catch-up started at, To the one it
	// reached.
	From, To uint64
	// Commits and Events count what was folded; Skipped the events skipped
	// as unknown (with [WithSkipUnknown]); Quarantined the stored messages
	// that could not be decoded and the runs of missing sequences, each
	// recorded in the quarantined table ([DB.Quarantined]).
	Commits, Events, Skipped, Quarantined int
	// Batches is the number of transactions committed.
	Batches int
	// ReadBack counts the rows read back from the database because the
	// catch-up's cache did not hold them: rows of earlier catch-ups, and
	// rows the bounded cache let go ([WithCacheRows]).
	ReadBack int
	// Elapsed is the wall time of the catch-up.
	Elapsed time.Duration
}

// CatchUp folds every commit after the checkpoint up to sequence to (0 =
// whatever src yields) and returns what it did. On error, every batch
// committed before it stays (the checkpoint names the last one), so
// running CatchUp again resumes without loss or double counting.
//
// When src is a [LedgerSource] (an [events.Store]), the first CatchUp of a
// Projector first reads the stream's [Ledger] and [DB.Bind]s the database
// to it: a database built from another ledger, or with a checkpoint
// beyond the stream's end, fails with a *[DBError] wrapping
// [ErrOtherLedger] before anything is read or written.
//
// A message that cannot be decoded (a *[events.DecodeError] from src) and
// a run of missing sequences (one wrapping events.ErrGap) are not errors:
// they are quarantined — logged and recorded in the quarantined table in
// the transaction of the checkpoint that passes them ([DB.Quarantined],
// [Result].Quarantined) — and folding goes on.
//
// Errors: an *[UnknownTypeError] for a type the projections do not know
// (unless [WithSkipUnknown]), a *[DBError] for a corrupt database,
// [ErrInjected], the source's or SQLite's error.
func (p *Projector) CatchUp(ctx context.Context, src Source, to uint64) (Result, error) {
	start := time.Now()
	if !p.bound {
		if ls, ok := src.(LedgerSource); ok {
			l, err := ls.Ledger(ctx)
			if err != nil {
				return Result{}, err
			}
			if err := p.db.Bind(ctx, l); err != nil {
				return Result{}, err
			}
			p.bound = true
		}
	}
	if err := p.prepare(ctx); err != nil {
		return Result{}, err
	}
	defer p.closeStmts()
	var res Result
	// A catch-up racing another one on the same database (two readers
	// opening a fresh projection at once) finds the checkpoint moved
	// under it: it starts again from there while the other makes
	// progress, and is done once the other reached its target.
	var seen uint64
	for stalled, attempts := 0, 0; stalled < 5 && attempts < 100; stalled, attempts = stalled+1, attempts+1 {
		n0 := p.readBack
		r, err := p.run(ctx, src, to)
		res.ReadBack += p.readBack - n0
		if attempts == 0 {
			res.From = r.From // where this catch-up started
		}
		res.To = r.To
		res.Commits += r.Commits
		res.Events += r.Events
		res.Skipped += r.Skipped
		res.Quarantined += r.Quarantined
		res.Batches += r.Batches
		if errors.Is(err, errCheckpointMoved) {
			cp, cerr := p.db.Checkpoint(ctx)
			if cerr != nil {
				return res, cerr
			}
			if to != 0 && cp >= to {
				if p.progress != nil {
					p.progress(cp, to)
				}
				res.To, res.Elapsed = cp, time.Since(start)
				return res, nil
			}
			if cp > seen {
				seen, stalled = cp, -1
			}
			continue
		}
		res.Elapsed = time.Since(start)
		return res, err
	}
	res.Elapsed = time.Since(start)
	return res, fmt.Errorf("projections: the checkpoint kept moving under concurrent catch-ups; try again")
}

// prepare prepares every cached table's statements for one CatchUp.
func (p *Projector) prepare(ctx context.Context) error {
	// A put of several rows (putChunk) runs in a statement transaction,
	// whose journal is a temporary file by default: a write syscall per
	// page, more than the rows themselves cost. In memory it holds the
	// pages one statement of putChunk rows touches. closeStmts restores
	// the default. (The database has a single connection, sqlitedb.)
	if _, err := p.db.sql.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
		return p.db.wrap(err)
	}
	for _, t := range tables {
		if t.rows.newRows == nil {
			continue
		}
		st := prepared{t: t, db: p.db, i: len(p.stmts), cacheRows: p.cacheRows, readBack: &p.readBack, open: &p.open}
		var err error
		if t.rows.loads {
			st.get, err = p.db.sql.PrepareContext(ctx, t.getSQL())
		}
		p.stmts = append(p.stmts, st)
		if err != nil {
			p.closeStmts()
			return p.db.wrap(err)
		}
	}
	return nil
}

func (p *Projector) closeStmts() {
	for i := range p.stmts {
		p.stmts[i].close()
	}
	p.stmts = p.stmts[:0]
	p.w.reset()
	_, _ = p.db.sql.Exec(`PRAGMA temp_store = DEFAULT`)
}
