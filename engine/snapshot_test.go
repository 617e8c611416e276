package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// stateOf is the canonical encoding of e's state.
func stateOf(t *testing.T, e *Engine) []byte {
	t.Helper()
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	b, err := e.st.encodeState()
	testutil.NoError(t, err)
	return b
}

// foldedFromOne is the encoding of agent main's state folded from
// sequence 1 to the stream's end, as a follower folds it.
func foldedFromOne(t *testing.T, st events.Store, keep int) []byte {
	t.Helper()
	ctx := testutil.Context(t)
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	f, err := FoldTo(ctx, st, "main", keep, last)
	testutil.NoError(t, err)
	b, err := f.StateEncoding()
	testutil.NoError(t, err)
	return b
}

// logTo is a logger writing text lines to buf.
func logTo(buf *testutil.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// logLines is what was logged to buf, a line each.
func logLines(buf *testutil.Buffer) []string {
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

func sameState(t *testing.T, what string, want, got []byte) {
	t.Helper()
	if d := SnapshotDiff(want, got); d != "" {
		t.Fatalf("%s: %s", what, d)
	}
}

// memFixture is an in-memory store (closed at the test's end) and a
// manual clock.
func memFixture(t *testing.T) (context.Context, events.Store, *testutil.ManualClock) {
	t.Helper()
	st, err := events.OpenMemory()
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return testutil.Context(t), st, testutil.NewManualClock(time.UnixMilli(1_700_000_000_000))
}

// TestSnapshot_RestartDecidesAsFoldFromOne: an engine started from the
// snapshot another saved on Close has the state of one folded from
// sequence 1, byte for byte, and a turn begun before the restart goes on
// to the same end on both.
func TestSnapshot_RestartDecidesAsFoldFromOne(t *testing.T) {
	ctx, st, clock := memFixture(t)
	var err error
	e1 := newEngine(t, st, clock)
	for i := range 4 {
		_, _ = e1.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprintf("t%d", i), Session: "s1"}, script{"anthropic/claude-sonnet-4": rateLimit()})
		clock.Advance(time.Second)
	}
	step, err := e1.BeginTurn(ctx, TurnRequest{TurnID: "open", Session: "s2"})
	testutil.NoError(t, err)
	if step.Next.Kind != policy.NextCall {
		t.Fatalf("begin: next %s, want call", step.Next.Kind)
	}
	e1.Close()

	var logs testutil.Buffer
	e2 := newEngineNoConfig(t, st, clock, WithLogger(logTo(&logs)))
	e3 := newEngineNoConfig(t, st, clock, WithSnapshotEvery(0))
	if e2.StartedFrom() != e1.Position() || e2.StartedFrom() == 0 || e3.StartedFrom() != 0 {
		t.Fatalf("restarted from snapshot seq %d (and %d), want %d (and 0)", e2.StartedFrom(), e3.StartedFrom(), e1.Position())
	}
	if l := logLines(&logs); len(l) != 1 || !strings.Contains(l[0], "started from snapshot") {
		t.Fatalf("log lines %q, want one 'started from snapshot'", l)
	}
	sameState(t, "restored vs followed from 1", stateOf(t, e3), stateOf(t, e2))
	sameState(t, "restored vs FoldTo", foldedFromOne(t, st, DefaultFinishedTurns), stateOf(t, e2))

	next, err := e2.ReportOutcome(ctx, "open", AttemptReport{Attempt: step.Next.Call.Attempt, Err: rateLimit()})
	testutil.NoError(t, err)
	again, err := e3.ReportOutcome(ctx, "open", AttemptReport{Attempt: step.Next.Call.Attempt, Err: rateLimit()})
	testutil.NoError(t, err)
	if !again.Replayed || norm(again.Next) != norm(next.Next) {
		t.Fatalf("the engine folded from 1 answers %s, the restored one %s", norm(again.Next), norm(next.Next))
	}
	testutil.NoError(t, e3.Sync(ctx))
	sameState(t, "after the continued turn", stateOf(t, e3), stateOf(t, e2))
}

// newEngineNoConfig starts an engine on a stream that has its config.
func newEngineNoConfig(t *testing.T, st events.Store, clock Clock, opts ...Option) *Engine {
	t.Helper()
	e, err := New(testutil.Context(t), st, "main", append([]Option{WithClock(clock), WithSeeds(func(string) uint64 { return 42 })}, opts...)...)
	testutil.NoError(t, err)
	t.Cleanup(e.Close)
	return e
}

// fixedSnapshot is a store whose snapshot is data (a tampered one).
type fixedSnapshot struct {
	events.Store
	data []byte
	// offBy moves the seq the store says the snapshot is stored at.
	offBy uint64
	// err is the load's error instead (a refused object store).
	err error
}

func (f fixedSnapshot) LoadSnapshot(context.Context, string) ([]byte, uint64, error) {
	if f.err != nil {
		return nil, 0, f.err
	}
	var seq uint64 // stored at the seq the snapshot names, as a save stores it
	if sn, _ := DecodeSnapshot(f.data); sn != nil {
		seq = sn.Seq
	}
	return f.data, seq + f.offBy, nil
}
func (f fixedSnapshot) SaveSnapshot(context.Context, string, uint64, []byte) (bool, error) {
	return false, nil
}
func (f fixedSnapshot) SnapshotAgents(context.Context) ([]string, error) {
	return []string{"main"}, nil
}

// TestSnapshot_DiscardedWithOneLine: a snapshot this engine cannot use is
// discarded with one log line naming why, and the engine folds from
// sequence 1.
func TestSnapshot_DiscardedWithOneLine(t *testing.T) {
	ctx, st, clock := memFixture(t)
	var err error
	e1 := newEngine(t, st, clock)
	_, err = e1.RunTurn(ctx, TurnRequest{TurnID: "t1", Session: "s1"}, script{})
	testutil.NoError(t, err)
	e1.Close()
	good, _, err := st.(events.Snapshots).LoadSnapshot(ctx, "main")
	testutil.NoError(t, err)
	want := foldedFromOne(t, st, DefaultFinishedTurns)

	edit := func(f func(sn *Snapshot)) []byte {
		sn, err := DecodeSnapshot(good)
		testutil.NoError(t, err)
		f(sn)
		b, err := json.Marshal(sn)
		testutil.NoError(t, err)
		return b
	}
	// What LoadSnapshot returns for a user the server does not let open
	// the object store (deploy/nats-cluster's accounts.conf before it
	// granted it): the reason names the refusal, not a timeout.
	refused := &events.PermissionError{Op: `load the snapshot of agent "main" from object store FLEDGER_SNAPSHOTS`, Action: "publish",
		Subject: "$JS.API.STREAM.INFO.OBJ_FLEDGER_SNAPSHOTS",
		Err:     errors.New(`nats: permissions violation: Permissions Violation for Publish to "$JS.API.STREAM.INFO.OBJ_FLEDGER_SNAPSHOTS"`)}
	for _, tc := range []struct {
		name, reason string
		data         []byte
		offBy        uint64
		err          error
	}{
		{"stored seq", "stored at seq 4, the snapshot says 3", good, 1, nil},
		{"code version", "written by code", edit(func(sn *Snapshot) { sn.Compat = "fold 0, rules 3, catalog x" }), 0, nil},
		{"format", "snapshot format 9", edit(func(sn *Snapshot) { sn.Format = 9 }), 0, nil},
		{"agent", `snapshot of agent \"other\"`, edit(func(sn *Snapshot) { sn.Agent = "other" }), 0, nil},
		{"eviction bound", "keeps 7 finished turns", edit(func(sn *Snapshot) { sn.KeepFinished = 7 }), 0, nil},
		{"ledger", "taken on another ledger", edit(func(sn *Snapshot) { sn.Created = sn.Created.Add(time.Second) }), 0, nil},
		{"past the end", "past the stream's last sequence", edit(func(sn *Snapshot) {
			sn.Seq += 100
			sn.State = bytes.Replace(sn.State, []byte(fmt.Sprintf(`"applied":%d`, sn.Seq-100)), []byte(fmt.Sprintf(`"applied":%d`, sn.Seq)), 1)
			sn.Digest = digestOf(sn.State)
		}), 0, nil},
		{"digest", "does not match", edit(func(sn *Snapshot) {
			sn.State = bytes.Replace(sn.State, []byte(`"phase":"succeeded"`), []byte(`"phase":"exhausted"`), 1)
		}), 0, nil},
		{"not a snapshot", "does not decode", []byte("{"), 0, nil},
		{"object store refused", `permission refused: the NATS server does not let this user publish to \"$JS.API.STREAM.INFO.OBJ_FLEDGER_SNAPSHOTS\"`, nil, 0, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs testutil.Buffer
			e, err := New(ctx, fixedSnapshot{Store: st, data: tc.data, offBy: tc.offBy, err: tc.err}, "main", WithLogger(logTo(&logs)))
			testutil.NoError(t, err)
			defer e.Close()
			l := logLines(&logs)
			if len(l) != 1 || !strings.Contains(l[0], "snapshot discarded, folding from sequence 1") || !strings.Contains(l[0], tc.reason) {
				t.Fatalf("log lines %q, want one discard naming %q", l, tc.reason)
			}
			if e.StartedFrom() != 0 {
				t.Fatalf("started from snapshot seq %d", e.StartedFrom())
			}
			sameState(t, "folded from 1", want, stateOf(t, e))
		})
	}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestEviction_FinishedTurnsLookedUp: with two finished turns kept, the
// oldest are evicted from memory (turns, turnLast, their subject's
// sequence) and still answered as before: a begin with an evicted id
// replays it for its session and is refused for another, a late duplicate
// outcome is replayed, a mismatched one refused, its current step read.
func TestEviction_FinishedTurnsLookedUp(t *testing.T) {
	ctx, st, clock := memFixture(t)
	var err error
	e := newEngine(t, st, clock, WithFinishedTurns(2))
	full := newEngineNoConfig(t, st, clock, WithFinishedTurns(1000), WithSnapshotEvery(0))
	first, err := e.BeginTurn(ctx, TurnRequest{TurnID: "t0", Session: "s"})
	testutil.NoError(t, err)
	done, err := e.ReportOutcome(ctx, "t0", AttemptReport{Attempt: first.Next.Call.Attempt, OK: true})
	testutil.NoError(t, err)
	for i := 1; i < 5; i++ {
		_, err := e.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprintf("t%d", i), Session: "s"}, script{})
		testutil.NoError(t, err)
	}
	testutil.NoError(t, full.Sync(ctx))
	e.st.mu.RLock()
	turns, last, evicted := len(e.st.turns), len(e.st.turnLast), e.st.evicted
	_, subj := e.st.subjectSeq["fledger.main.turn.t0"]
	e.st.mu.RUnlock()
	if turns != 2 || last != 2 || evicted != 3 || subj {
		t.Fatalf("kept %d turns, %d turnLast, evicted %d, t0's subject kept %v; want 2, 2, 3, false", turns, last, evicted, subj)
	}
	if _, ok := e.Turn("t0"); ok {
		t.Fatal("t0 still in memory")
	}

	for _, tc := range []struct {
		name string
		run  func(e *Engine) (string, error)
	}{
		{"begin same session", func(e *Engine) (string, error) {
			s, err := e.BeginTurn(ctx, TurnRequest{TurnID: "t0", Session: "s"})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%v %s", s.Replayed, norm(s.Next)), nil
		}},
		{"begin other session", func(e *Engine) (string, error) {
			_, err := e.BeginTurn(ctx, TurnRequest{TurnID: "t0", Session: "other"})
			return "", err
		}},
		{"run turn", func(e *Engine) (string, error) {
			_, err := e.RunTurn(ctx, TurnRequest{TurnID: "t0", Session: "s"}, script{})
			return "", err
		}},
		{"late duplicate outcome", func(e *Engine) (string, error) {
			s, err := e.ReportOutcome(ctx, "t0", AttemptReport{Attempt: 1, OK: true})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%v %s", s.Replayed, norm(s.Next)), nil
		}},
		{"mismatched outcome", func(e *Engine) (string, error) {
			_, err := e.ReportOutcome(ctx, "t0", AttemptReport{Attempt: 1, Err: rateLimit()})
			return "", err
		}},
		{"unplanned attempt", func(e *Engine) (string, error) {
			_, err := e.ReportOutcome(ctx, "t0", AttemptReport{Attempt: 2, OK: true})
			return "", err
		}},
		{"resume", func(e *Engine) (string, error) {
			s, err := e.ResumeTurn(ctx, "t0")
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%v %s", s.Replayed, norm(s.Next)), nil
		}},
		{"lookup", func(e *Engine) (string, error) {
			t, ok, err := e.LookupTurn(ctx, "t0")
			return fmt.Sprintf("%v %+v", ok, t), err
		}},
		{"unknown", func(e *Engine) (string, error) {
			_, err := e.CurrentStep(ctx, "nope")
			return "", err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := st.LastSeq(ctx, "")
			testutil.NoError(t, err)
			want, werr := tc.run(full)
			got, gerr := tc.run(e)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || want != got {
				t.Fatalf("evicted turn answers %q, %v; kept turn %q, %v", got, gerr, want, werr)
			}
			after, err := st.LastSeq(ctx, "")
			testutil.NoError(t, err)
			if after != before {
				t.Fatalf("appended %d commits", after-before)
			}
		})
	}
	if s, _ := e.ReportOutcome(ctx, "t0", AttemptReport{Attempt: 1, OK: true}); norm(s.Next) != norm(done.Next) {
		t.Fatalf("late duplicate: %s, want the recorded %s", norm(s.Next), norm(done.Next))
	}
	if _, err := e.BeginTurn(ctx, TurnRequest{TurnID: "t0", Session: "other"}); !errors.Is(err, ErrTurnExists) {
		t.Fatalf("begin with an evicted id for another session: %v, want ErrTurnExists", err)
	}
	sameState(t, "evicting engine vs FoldTo", foldedFromOne(t, st, 2), stateOf(t, e))
}

// TestSnapshot_ConcurrentEngines: three engines on one stream run turns
// at once, taking snapshots every few sequences; each saved snapshot
// equals the fold from the stream's first sequence to its seq, and an engine started last
// (from the newest) has the state of the fold of the whole stream.
func TestSnapshot_ConcurrentEngines(t *testing.T) {
	ctx, st, clock := memFixture(t)
	newEngine(t, st, clock, WithSnapshotEvery(0)) // applies the config
	var saved []*Engine
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for i := range 3 {
		e := newEngineNoConfig(t, st, clock, WithSnapshotEvery(3), WithFinishedTurns(4))
		saved = append(saved, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 8 {
				_, err := e.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprintf("e%d-%d", i, j), Session: fmt.Sprintf("s%d", j%3)},
					script{"anthropic/claude-sonnet-4": rateLimit()})
				var ex *ExhaustedError
				if err != nil && !errors.As(err, &ex) {
					errs <- fmt.Errorf("turn e%d-%d: %w", i, j, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, e := range saved {
		e.Close()
	}
	data, seq, err := st.(events.Snapshots).LoadSnapshot(ctx, "main")
	testutil.NoError(t, err)
	sn, err := DecodeSnapshot(data)
	testutil.NoError(t, err)
	f, err := FoldTo(ctx, st, "main", 4, seq)
	testutil.NoError(t, err)
	b, err := f.StateEncoding()
	testutil.NoError(t, err)
	sameState(t, "stored snapshot vs FoldTo", b, sn.State)
	last := newEngineNoConfig(t, st, clock, WithFinishedTurns(4))
	if last.StartedFrom() != seq {
		t.Fatalf("started from %d, want the stored %d", last.StartedFrom(), seq)
	}
	sameState(t, "restored vs FoldTo the end", foldedFromOne(t, st, 4), stateOf(t, last))
}

// TestSnapshot_ReadOnlyLoadsButNeverSaves: an engine with
// WithSnapshotsReadOnly (fledger view) starts from the stored snapshot
// and, after commits of its agent and Close, leaves it as it was.
func TestSnapshot_ReadOnlyLoadsButNeverSaves(t *testing.T) {
	ctx, st, clock := memFixture(t)
	e1 := newEngine(t, st, clock)
	_, _ = e1.RunTurn(ctx, TurnRequest{TurnID: "t0", Session: "s1"}, script{"anthropic/claude-sonnet-4": rateLimit()})
	e1.Close()
	ss := st.(events.Snapshots)
	before, seq, err := ss.LoadSnapshot(ctx, "main")
	testutil.NoError(t, err)

	e2 := newEngineNoConfig(t, st, clock, WithSnapshotsReadOnly(), WithSnapshotEvery(1))
	if e2.StartedFrom() != e1.Position() {
		t.Fatalf("read-only engine started from %d, want the snapshot at %d", e2.StartedFrom(), e1.Position())
	}
	e4 := newEngineNoConfig(t, st, clock, WithSnapshotEvery(0)) // a writer that takes none
	_, _ = e4.RunTurn(ctx, TurnRequest{TurnID: "t1", Session: "s1"}, script{"anthropic/claude-sonnet-4": rateLimit()})
	testutil.NoError(t, e2.Sync(ctx))
	e4.Close()
	e2.Close()
	after, seq2, err := ss.LoadSnapshot(ctx, "main")
	testutil.NoError(t, err)
	if seq2 != seq || !bytes.Equal(after, before) {
		t.Fatalf("the stored snapshot moved from seq %d to %d under a read-only engine", seq, seq2)
	}
}

// TestSnapshot_CloseSavesPastOtherAgents: an engine that folded only other
// agents' commits since its snapshot saves a new one on Close once they
// reach closeSaveSkipped sequences (its next start does not read them
// again), and not for fewer.
func TestSnapshot_CloseSavesPastOtherAgents(t *testing.T) {
	ctx, st, clock := memFixture(t)
	e1 := newEngine(t, st, clock)
	_, _ = e1.RunTurn(ctx, TurnRequest{TurnID: "t0", Session: "s1"}, script{"anthropic/claude-sonnet-4": rateLimit()})
	e1.Close()
	first := e1.Position()
	other := newAgentEngine(t, st, clock, "coder", WithSnapshotEvery(0))
	resets := func(n int) { resetSessions(t, other, n) }
	for _, tc := range []struct {
		name   string
		others int
		want   func(last uint64) uint64 // the next start's snapshot
	}{
		{"few", 10, func(uint64) uint64 { return first }},
		{"many", closeSaveSkipped, func(last uint64) uint64 { return last }},
	} {
		e := newEngineNoConfig(t, st, clock)
		resets(tc.others)
		testutil.NoError(t, e.Sync(ctx))
		last := e.Position()
		e.Close()
		next := newEngineNoConfig(t, st, clock)
		if got, want := next.StartedFrom(), tc.want(last); got != want {
			t.Fatalf("%s: %d other commits since the snapshot at %d; the next start began at %d, want %d", tc.name, tc.others, first, got, want)
		}
		next.Close()
	}
}

// An engine of an agent with no events at all (a misspelt --agent on a
// writing command that then fails) saves no snapshot on Close, however
// many of other agents' commits it folded.
func TestSnapshot_CloseSavesNothingForAgentWithoutEvents(t *testing.T) {
	ctx, st, clock := memFixture(t)
	other := newAgentEngine(t, st, clock, "coder", WithSnapshotEvery(0))
	resetSessions(t, other, closeSaveSkipped)
	other.Close()
	e, err := New(ctx, st, "typo", WithClock(clock))
	testutil.NoError(t, err)
	e.Close()
	agents, err := st.(events.Snapshots).SnapshotAgents(ctx)
	testutil.NoError(t, err)
	if len(agents) != 0 {
		t.Fatalf("snapshots stored for %v, want none", agents)
	}
}

// resetSessions stores a /new on sessions s0 … s(n−1) with e.
func resetSessions(t *testing.T, e *Engine, n int) {
	t.Helper()
	for i := range n {
		if _, err := e.Reset(testutil.Context(t), fmt.Sprintf("s%d", i), "new"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSnapshot_RemovedRootIsNotSavedAgain: an engine whose starting
// snapshot was removed (`fledger snapshots rm`) does not store the state
// it folded on it again — not on Close, when the operator stops it to
// restart — and logs that once; the engine started after it folds from
// sequence 1 and saves as before.
func TestSnapshot_RemovedRootIsNotSavedAgain(t *testing.T) {
	ctx, st, clock := memFixture(t)
	e1 := newEngine(t, st, clock)
	_, _ = e1.RunTurn(ctx, TurnRequest{TurnID: "t0", Session: "s1"}, script{"anthropic/claude-sonnet-4": rateLimit()})
	e1.Close()

	var logs testutil.Buffer
	e2 := newEngineNoConfig(t, st, clock, WithLogger(logTo(&logs)), WithSnapshotEvery(1))
	if e2.StartedFrom() != e1.Position() {
		t.Fatalf("started from %d, want the snapshot at %d", e2.StartedFrom(), e1.Position())
	}
	seq, err := st.(events.SnapshotDeleter).DeleteSnapshot(ctx, "main")
	if err != nil || seq != e1.Position() {
		t.Fatalf("delete: seq %d, %v; want %d", seq, err, e1.Position())
	}
	for i := range 3 { // past snapshotEvery: the background saves are tried too
		_, _ = e2.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprintf("t%d", i+1), Session: "s1"}, script{"anthropic/claude-sonnet-4": rateLimit()})
	}
	e2.Close()
	stat := st.(events.SnapshotStat)
	if seq, _, err := stat.StatSnapshot(ctx, "main"); !errors.Is(err, events.ErrNoSnapshot) {
		t.Fatalf("after the engine on the removed snapshot closed: a snapshot at %d (%v), want none", seq, err)
	}
	var removed int
	for _, l := range logLines(&logs) {
		if strings.Contains(l, "the snapshot this engine started from was removed") {
			removed++
		}
	}
	if removed != 1 {
		t.Fatalf("%d 'was removed' lines, want 1:\n%s", removed, strings.Join(logLines(&logs), "\n"))
	}

	e3 := newEngineNoConfig(t, st, clock)
	if e3.StartedFrom() != 0 {
		t.Fatalf("the next engine started from %d, want sequence 1", e3.StartedFrom())
	}
	_, _ = e3.RunTurn(ctx, TurnRequest{TurnID: "t9", Session: "s1"}, script{"anthropic/claude-sonnet-4": rateLimit()})
	e3.Close()
	if seq, _, err := stat.StatSnapshot(ctx, "main"); err != nil || seq != e3.Position() {
		t.Fatalf("the engine folded from 1 saved at %d (%v), want %d", seq, err, e3.Position())
	}
}
