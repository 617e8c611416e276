package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
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
const DefaultBatchEvents = 2000

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
// checkpoint + 1, folds whole commits with the policy evolve functions into
// an in-memory cache, and every batch writes the changed rows and the new
// checkpoint in one transaction. A Projector is not safe for concurrent
// use; two Projectors (or processes) on one database serialise on
// SQLite's write lock, and a catch-up that finds the checkpoint moved
// starts over from it.
type Projector struct {
	db          *DB
	batch       int
	skipUnknown bool
	progress    func(done, target uint64)
	failAfter   int
	written     int
	log         *slog.Logger
	// bound is set once the database was checked against (or bound to)
	// the source's ledger.
	bound bool

	stmts statements
}

// NewProjector returns a projector writing db.
func NewProjector(db *DB, opts ...ProjectorOption) *Projector {
	p := &Projector{db: db, batch: DefaultBatchEvents, log: db.log}
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
	defer p.stmts.close()
	var res Result
	for range 5 {
		r, err := p.run(ctx, src, to)
		if res.From == 0 && res.To == 0 {
			res.From = r.From
		}
		res.To = r.To
		res.Commits += r.Commits
		res.Events += r.Events
		res.Skipped += r.Skipped
		res.Quarantined += r.Quarantined
		res.Batches += r.Batches
		if errors.Is(err, errCheckpointMoved) {
			continue
		}
		res.Elapsed = time.Since(start)
		return res, err
	}
	res.Elapsed = time.Since(start)
	return res, fmt.Errorf("projections: the checkpoint kept moving under concurrent catch-ups; try again")
}

// run is one catch-up attempt with a fresh cache. Events are gathered per
// commit (they share a stream sequence) and a commit is folded only once
// it is complete and every type in it is known, so a batch never holds
// part of a commit and a failing commit leaves the batches before it
// committed.
func (p *Projector) run(ctx context.Context, src Source, to uint64) (Result, error) {
	base, err := p.db.Checkpoint(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{From: base, To: base}
	if to != 0 && base >= to {
		return res, nil
	}
	c := newCache(base)
	var (
		folded uint64         // sequence of the last commit folded into the cache
		commit []events.Event // the commit being gathered
	)
	flush := func() error {
		if folded <= c.base {
			return nil
		}
		n, err := p.flush(ctx, c, folded)
		if err != nil {
			return err
		}
		res.To = folded
		res.Commits += n.commits
		res.Events += n.events
		res.Skipped += n.skipped
		res.Quarantined += n.quarantined
		res.Batches++
		if p.progress != nil {
			p.progress(folded, to)
		}
		return nil
	}
	// fail flushes the complete commits folded so far and returns err.
	fail := func(err error) error {
		if ferr := flush(); ferr != nil {
			return ferr
		}
		return err
	}
	// end folds the gathered commit, then flushes when the batch is full.
	end := func() error {
		if len(commit) == 0 {
			return nil
		}
		if err := p.foldCommit(ctx, c, commit); err != nil {
			var ue *UnknownTypeError
			if errors.As(err, &ue) {
				return fail(err) // the cache holds none of this commit
			}
			return err // the cache may hold part of it: write nothing
		}
		folded = commit[0].Seq
		commit = commit[:0]
		if c.pending >= p.batch {
			return flush()
		}
		return nil
	}
	read, stop := pipelined(ctx, src, base+1)
	defer stop()
	for ev, rerr := range read {
		if rerr != nil {
			var de *events.DecodeError
			if !errors.As(rerr, &de) || de.Seq == 0 {
				if err := end(); err != nil {
					return res, err
				}
				return res, fail(fmt.Errorf("projections: read the stream after sequence %d: %w", folded, rerr))
			}
			if to != 0 && de.Seq > to {
				break
			}
			if err := end(); err != nil {
				return res, err
			}
			// A message the store cannot decode, or a run of missing
			// sequences, is quarantined: recorded with the checkpoint,
			// so a rebuild records the same, and folding goes on.
			q := *de
			if q.Gap() && to != 0 && q.Through > to {
				q.Through = to // the rest is found by the next catch-up
			}
			p.quarantine(c, &q)
			folded = max(q.Seq, q.Through)
			if c.pending >= p.batch {
				if err := flush(); err != nil {
					return res, err
				}
			}
			continue
		}
		if to != 0 && ev.Seq > to {
			break
		}
		if len(commit) > 0 && ev.Seq != commit[0].Seq {
			if err := end(); err != nil {
				return res, err
			}
		}
		commit = append(commit, ev)
	}
	if err := end(); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fail(err)
	}
	return res, flush()
}

// foldCommit folds one complete commit into the cache. Unknown types are
// checked first, so an error leaves the cache without any of the commit.
func (p *Projector) foldCommit(ctx context.Context, c *cache, commit []events.Event) error {
	for i := range commit {
		ev := &commit[i]
		if !knownTypes[ev.Type] || ev.Data == nil {
			ue := &UnknownTypeError{Type: ev.Type, Seq: ev.Seq, Index: ev.Index}
			if !p.skipUnknown {
				return ue
			}
		}
	}
	c.commits++
	for i := range commit {
		ev := &commit[i]
		if !knownTypes[ev.Type] || ev.Data == nil {
			p.skip(c, ev.Type, ev.Seq, "not a type of this projection schema version")
			continue
		}
		if err := p.apply(ctx, c, ev); err != nil {
			return err
		}
	}
	return nil
}

// quarantine logs and records one undecodable message or gap.
func (p *Projector) quarantine(c *cache, de *events.DecodeError) {
	r := newQuarantineRow(de)
	if de.Gap() {
		p.log.Warn(QuarantineLogPrefix+" stream sequences missing", "seq", r.Seq, "through", r.LastSeq)
	} else {
		p.log.Warn(QuarantineLogPrefix+" a message that is not a fledger commit", "seq", r.Seq, "subject", r.Subject, "bytes", r.Size, "why", r.Reason)
	}
	c.quarantined = append(c.quarantined, r)
	c.pending++
}

// skip logs and counts one skipped event.
func (p *Projector) skip(c *cache, typ string, seq uint64, why string) {
	if typ == "" {
		typ = "(unreadable)"
	}
	p.log.Warn("projections: skipping an event of unknown type", "type", typ, "seq", seq, "why", why)
	s := c.skipped[typ]
	if s == nil {
		s = &skipRow{typ: typ}
		c.skipped[typ] = s
	}
	if s.count == 0 {
		s.firstSeq = seq
	}
	s.count++
	s.lastSeq = seq
	s.dirty = true
	c.nSkipped++
	c.pending++
}

// apply folds one decoded event into the cache.
func (p *Projector) apply(ctx context.Context, c *cache, ev *events.Event) error {
	c.pending++
	c.events++
	k := key{ev.Agent, ev.Key}
	at := ev.At.UnixMilli()
	switch ev.Aggregate {
	case events.AggProfile:
		r, err := p.profile(ctx, c, k)
		if err != nil {
			return err
		}
		r.fold(ev.Data, at, ev.Seq)
	case events.AggSession:
		r, err := p.session(ctx, c, k)
		if err != nil {
			return err
		}
		r.fold(ev.Data, at, ev.Seq)
	case events.AggTurn:
		r, err := p.turn(ctx, c, k, ev.Data)
		if err != nil {
			return err
		}
		r.fold(ev.Data, at, ev.Seq)
		if fs, ok := ev.Data.(events.FallbackStepped); ok {
			c.decisions = append(c.decisions, newDecisionRow(ev, &fs))
		}
	}
	return nil
}

// knownTypes are the event types the projection schema folds or
// deliberately ignores (ConfigApplied, RetryScheduled, … change no
// projected column beyond what EvolveTurn keeps).
var knownTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range []string{
		"ConfigApplied",
		"ProfileFailureRecorded", "ProfileSucceeded", "ProfileUsed", "ProfileCleared",
		"SessionModelSelected", "SessionModelCleared", "SessionAuthPinned",
		"SessionAuthUnpinned", "SessionReset", "FallbackNoticeStateChanged",
		"CompactionCompleted",
		"TurnStarted", "AttemptStarted", "AttemptFailed", "AttemptSucceeded",
		"RetryScheduled", "CandidateSkipped", "FallbackStepped",
		"ChainRetryScheduled", "NoticeSent", "TurnSucceeded", "TurnExhausted",
		"TurnStopped",
		// AuthOrderSet (aggregate order) is a decider input, not a
		// projected row: known, and folded by nothing here.
		"AuthOrderSet",
	} {
		m[t] = true
	}
	return m
}()

// key identifies an aggregate instance: agent and envelope key.
type key struct{ agent, id string }

// cache is the folded state of one catch-up: every row touched since it
// began (dirty ones are written at the next flush) and the pending
// decision rows.
type cache struct {
	base     uint64 // checkpoint the cache is consistent with
	profiles map[key]*profileRow
	sessions map[key]*sessionRow
	turns    map[key]*turnRow
	skipped  map[string]*skipRow

	decisions   []decisionRow
	quarantined []quarantineRow
	pending     int // events (and skips) folded since the last flush
	commits     int
	events      int
	nSkipped    int
}

func newCache(base uint64) *cache {
	return &cache{base: base, profiles: map[key]*profileRow{}, sessions: map[key]*sessionRow{},
		turns: map[key]*turnRow{}, skipped: map[string]*skipRow{}}
}

type flushed struct{ commits, events, skipped, quarantined int }

// flush writes every dirty row, the pending decisions and checkpoint seq in
// one transaction.
func (p *Projector) flush(ctx context.Context, c *cache, seq uint64) (flushed, error) {
	tx, err := p.db.sql.BeginTx(ctx, nil)
	if err != nil {
		return flushed{}, p.db.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	var have int64
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM checkpoint WHERE id = 1`).Scan(&have); err != nil {
		return flushed{}, p.db.wrap(err)
	}
	if uint64(have) != c.base {
		return flushed{}, errCheckpointMoved
	}
	usage, sess, turn, dec, skip := tx.StmtContext(ctx, p.stmts.usage), tx.StmtContext(ctx, p.stmts.session),
		tx.StmtContext(ctx, p.stmts.turn), tx.StmtContext(ctx, p.stmts.decision), tx.StmtContext(ctx, p.stmts.skip)
	quar := tx.StmtContext(ctx, p.stmts.quarantine)
	exec := func(st *sql.Stmt, args []any) error {
		if p.failAfter > 0 {
			p.written++
			if p.written >= p.failAfter {
				return ErrInjected
			}
		}
		_, err := st.ExecContext(ctx, args...)
		return err
	}
	for _, r := range c.profiles {
		if r.dirty {
			if err := exec(usage, r.args()); err != nil {
				return flushed{}, p.rowErr(err, "usage_stats")
			}
		}
	}
	for _, r := range c.sessions {
		if r.dirty {
			if err := exec(sess, r.args()); err != nil {
				return flushed{}, p.rowErr(err, "session_selection")
			}
		}
	}
	for _, r := range c.turns {
		if r.dirty {
			if err := exec(turn, r.args()); err != nil {
				return flushed{}, p.rowErr(err, "turns")
			}
		}
	}
	for i := range c.decisions {
		if err := exec(dec, c.decisions[i].args()); err != nil {
			return flushed{}, p.rowErr(err, "fallback_decisions")
		}
	}
	for _, s := range c.skipped {
		if s.dirty {
			if err := exec(skip, []any{s.typ, s.count, int64(s.firstSeq), int64(s.lastSeq)}); err != nil {
				return flushed{}, p.rowErr(err, "skipped_events")
			}
		}
	}
	for i := range c.quarantined {
		r := &c.quarantined[i]
		if r.Kind == QuarantineMissing && r.Seq > 1 {
			// The rest of a run an earlier catch-up stopped inside:
			// extend its row, so the rows are a rebuild's.
			res, err := tx.ExecContext(ctx, `UPDATE quarantined SET lastSeq = ? WHERE kind = ? AND lastSeq = ?`,
				int64(r.LastSeq), QuarantineMissing, int64(r.Seq-1))
			if err != nil {
				return flushed{}, p.rowErr(err, "quarantined")
			}
			if n, _ := res.RowsAffected(); n > 0 {
				continue
			}
		}
		if err := exec(quar, r.args()); err != nil {
			return flushed{}, p.rowErr(err, "quarantined")
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE checkpoint SET seq = ?, commits = commits + ?, events = events + ? WHERE id = 1`,
		int64(seq), c.commits, c.events); err != nil {
		return flushed{}, p.db.wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return flushed{}, p.db.wrap(err)
	}
	n := flushed{commits: c.commits, events: c.events, skipped: c.nSkipped, quarantined: len(c.quarantined)}
	c.base, c.pending, c.commits, c.events, c.nSkipped = seq, 0, 0, 0, 0
	c.decisions = c.decisions[:0]
	c.quarantined = c.quarantined[:0]
	for _, r := range c.profiles {
		r.dirty = false
	}
	for _, r := range c.sessions {
		r.dirty = false
	}
	for k, r := range c.turns {
		r.dirty = false
		if r.finished() {
			delete(c.turns, k) // reloaded from its row if anything follows
		}
	}
	for _, s := range c.skipped {
		s.dirty, s.count = false, 0 // count is the delta since the last flush
	}
	return n, nil
}

func (p *Projector) rowErr(err error, table string) error {
	if errors.Is(err, ErrInjected) {
		return err
	}
	return fmt.Errorf("projections: write %s: %w", table, p.db.wrap(err))
}

// statements are prepared once per catch-up on the single connection.
type statements struct {
	usage, session, turn, decision, skip *sql.Stmt
	quarantine                           *sql.Stmt
	loadUsage, loadSession, loadTurn     *sql.Stmt
}

func (p *Projector) prepare(ctx context.Context) error {
	for _, s := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&p.stmts.usage, upsertSQL("usage_stats", usageColumns, 2)},
		{&p.stmts.session, upsertSQL("session_selection", sessionColumns, 2)},
		{&p.stmts.turn, upsertSQL("turns", turnColumns, 2)},
		{&p.stmts.decision, insertSQL("fallback_decisions", decisionColumns)},
		{&p.stmts.skip, insertSQL("skipped_events", []string{"type", "count", "firstSeq", "lastSeq"}) +
			" ON CONFLICT (type) DO UPDATE SET count = count + excluded.count, lastSeq = excluded.lastSeq"},
		{&p.stmts.quarantine, insertSQL("quarantined", quarantineColumns)},
		{&p.stmts.loadUsage, selectSQL("usage_stats", usageColumns, 2)},
		{&p.stmts.loadSession, selectSQL("session_selection", sessionColumns, 2)},
		{&p.stmts.loadTurn, selectSQL("turns", turnColumns, 2)},
	} {
		st, err := p.db.sql.PrepareContext(ctx, s.q)
		if err != nil {
			p.stmts.close()
			return p.db.wrap(err)
		}
		*s.dst = st
	}
	return nil
}

func (s *statements) close() {
	for _, st := range []*sql.Stmt{s.usage, s.session, s.turn, s.decision, s.skip, s.quarantine, s.loadUsage, s.loadSession, s.loadTurn} {
		if st != nil {
			_ = st.Close()
		}
	}
	*s = statements{}
}

// insertSQL builds INSERT INTO table (cols) VALUES (?, …).
func insertSQL(table string, cols []string) string {
	return "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
}

// upsertSQL builds an INSERT … ON CONFLICT (first nKey cols) DO UPDATE SET
// every other column.
func upsertSQL(table string, cols []string, nKey int) string {
	set := make([]string, 0, len(cols)-nKey)
	for _, c := range cols[nKey:] {
		set = append(set, c+" = excluded."+c)
	}
	return insertSQL(table, cols) + " ON CONFLICT (" + strings.Join(cols[:nKey], ", ") + ") DO UPDATE SET " + strings.Join(set, ", ")
}

// selectSQL builds SELECT non-key cols FROM table WHERE key cols = ?.
func selectSQL(table string, cols []string, nKey int) string {
	where := make([]string, nKey)
	for i, c := range cols[:nKey] {
		where[i] = c + " = ?"
	}
	return "SELECT " + strings.Join(cols[nKey:], ", ") + " FROM " + table + " WHERE " + strings.Join(where, " AND ")
}

// skipRow is one skipped_events row's change since the last flush.
type skipRow struct {
	typ string
	// count is the number skipped since the last flush (added to the
	// row's count); firstSeq is kept from the row's first insert.
	count             int
	firstSeq, lastSeq uint64
	dirty             bool
}

// b2i stores a bool as 0/1.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
