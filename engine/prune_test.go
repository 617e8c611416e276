package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

const day = 24 * time.Hour

// pruneLedger writes, on one engine with a manual clock at T0: a turn
// of s-old that succeeds at T0, a /model of s-edge at T0+1d, a turn of
// s-open begun at T0 and left running, and a /model of s-new at T0+20d;
// then moves the clock to T0+31d.
func pruneLedger(t *testing.T) (events.Store, *engine.Engine, *testutil.ManualClock) {
	t.Helper()
	ctx := testutil.Context(t)
	st := testutil.Store(t)
	clock := testutil.NewManualClock(testutil.T0)
	e, err := engine.New(ctx, st, "main", engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 42 }))
	testutil.NoError(t, err)
	t.Cleanup(e.Close)
	applyTwoProvider(t, e)
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	if _, err := e.BeginTurn(ctx, engine.TurnRequest{TurnID: "t-old", Session: "s-old"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ReportOutcome(ctx, "t-old", engine.AttemptReport{Attempt: 1, OK: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.BeginTurn(ctx, engine.TurnRequest{TurnID: "t-open", Session: "s-open"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(day)
	if _, err := e.SelectModel(ctx, "s-edge", gpt, string(policy.SourceUser), nil, ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(19 * day)
	if _, err := e.SelectModel(ctx, "s-new", gpt, string(policy.SourceUser), nil, ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(11 * day)
	return st, e, clock
}

func applyTwoProvider(t *testing.T, e *engine.Engine) {
	t.Helper()
	l, err := config.Parse([]byte(testutil.TwoProviderConfig), "test")
	testutil.NoError(t, err)
	if _, _, err := e.ApplyConfig(testutil.Context(t), "test", l); err != nil {
		t.Fatal(err)
	}
}

func prunedKeys(r *engine.PruneReport) string {
	var keys []string
	for _, p := range r.Pruned {
		keys = append(keys, p.Session+"@"+p.LastActiveAt.Format(time.RFC3339))
	}
	return strings.Join(keys, ",")
}

// At T0+31d with a 30-day age the cutoff is T0+1d: s-old (last active
// at T0) is pruned, s-edge (active exactly at the cutoff) and s-new are
// kept, and s-open is kept for its running turn. The dry run lists the
// same and appends nothing; the prune drops the session from the engine
// (state, subject sequence), a later /model and turn on it start it
// afresh, and replay --verify re-decides the prune.
func TestPruneSessions_StaleOnly(t *testing.T) {
	ctx := testutil.Context(t)
	st, e, _ := pruneLedger(t)
	before := e.Held()
	dry, err := e.PruneSessions(ctx, engine.PruneOptions{After: 30 * day, DryRun: true})
	testutil.NoError(t, err)
	wantOld := "s-old@" + testutil.T0.UTC().Format(time.RFC3339)
	if got := prunedKeys(dry); got != wantOld || dry.Running != 1 || dry.Sessions != 4 {
		t.Fatalf("dry run: pruned %q running %d sessions %d, want %q, 1, 4", got, dry.Running, dry.Sessions, wantOld)
	}
	if want := testutil.T0.Add(day).UTC(); !dry.Cutoff.Equal(want) {
		t.Fatalf("cutoff %s, want %s", dry.Cutoff, want)
	}
	if pos := e.Position(); dry.Pruned[0].Seq != 0 || e.Held() != before {
		t.Fatalf("dry run appended (seq %d, position %d)", dry.Pruned[0].Seq, pos)
	}

	rep, err := e.PruneSessions(ctx, engine.PruneOptions{After: 30 * day})
	testutil.NoError(t, err)
	if got := prunedKeys(rep); got != wantOld || rep.Pruned[0].Seq == 0 || rep.Kept != 0 {
		t.Fatalf("pruned %q (seq %d, kept %d), want %q", got, rep.Pruned[0].Seq, rep.Kept, wantOld)
	}
	h := e.Held()
	if h.Sessions != before.Sessions-1 || h.Subjects != before.Subjects-1 {
		t.Fatalf("held %+v after the prune, before %+v: want one session and its subject fewer", h, before)
	}
	if s := e.Session("s-old"); !reflect.DeepEqual(s, policy.SessionState{}) {
		t.Fatalf("s-old after the prune: %+v, want nothing", s)
	}
	if s := e.Session("s-edge"); s.Model.Model != "gpt-5" {
		t.Fatalf("s-edge lost its selection: %+v", s)
	}
	again, err := e.PruneSessions(ctx, engine.PruneOptions{After: 30 * day})
	testutil.NoError(t, err)
	if len(again.Pruned) != 0 {
		t.Fatalf("second run pruned %s", prunedKeys(again))
	}

	// The session comes back: its subject's sequence is looked up after
	// one conflict, and it starts from nothing.
	sel, err := e.SelectModel(ctx, "s-old", events.ModelRef{Provider: "openai", Model: "gpt-5"}, string(policy.SourceUser), nil, "")
	testutil.NoError(t, err)
	if len(sel) == 0 || sel[0].Seq <= rep.Pruned[0].Seq {
		t.Fatalf("selection after the prune: %+v", sel)
	}
	if _, err := e.BeginTurn(ctx, engine.TurnRequest{TurnID: "t-back", Session: "s-old"}); err != nil {
		t.Fatal(err)
	}
	verifyOK(t, st)

	// A fold from sequence 1 holds what the engine holds.
	fresh, err := engine.New(ctx, st, "main", engine.WithSnapshotEvery(0))
	testutil.NoError(t, err)
	defer fresh.Close()
	testutil.NoError(t, fresh.Sync(ctx))
	if fresh.Held() != e.Held() {
		t.Fatalf("refolded engine holds %+v, the running one %+v", fresh.Held(), e.Held())
	}
}

// A /model stored on a stale session between its prune's decision and
// the prune's append (another instance) makes the prune conflict on the
// session's subject; decided again, the session is active and kept.
func TestPruneSessions_CommandRacingPruneKeepsSession(t *testing.T) {
	st, a, _, _, rep := pruneRacing(t, func(ctx context.Context, b *engine.Engine) error {
		_, err := b.Reset(ctx, "s-race", "new")
		return err
	})
	if len(rep.Pruned) != 0 || rep.Kept != 1 {
		t.Fatalf("pruned %q kept %d, want none pruned and s-race kept", prunedKeys(rep), rep.Kept)
	}
	if s := a.Session("s-race"); s.Model != raceModel || s.LastReset != "new" {
		t.Fatalf("s-race after the race: %+v", s)
	}
	verifyOK(t, st)
}

// raceModel is the user selection s-race holds in pruneRacing.
var raceModel = events.ModelRef{Provider: "openai", Model: "gpt-5"}

// pruneRacing stores a user /model of raceModel on s-race (instance a),
// moves the clock 31 days on, and runs a 30-day prune on a (one worker)
// with during run on instance b between the prune's decision and its
// append. It returns the stream, both instances, the clock and a's
// report.
func pruneRacing(t *testing.T, during func(context.Context, *engine.Engine) error) (events.Store, *engine.Engine, *engine.Engine, *raceClock, *engine.PruneReport) {
	t.Helper()
	st, a, b, clock := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if _, err := a.SelectModel(ctx, "s-race", raceModel, string(policy.SourceUser), nil, ""); err != nil {
		t.Fatal(err)
	}
	clock.Sleep(ctx, 31*day) //nolint:errcheck // moves the clock
	testutil.NoError(t, b.Sync(ctx))
	var raceErr error
	stop := raceFirstAppend(a, ".session.", func() { raceErr = during(ctx, b) })
	rep, err := a.PruneSessions(ctx, engine.PruneOptions{After: 30 * day, Workers: 1})
	stop()
	testutil.NoError(t, err)
	testutil.NoError(t, raceErr)
	return st, a, b, clock, rep
}

// Two instances pruning at once: each session is pruned once (the loser
// of a session's subject decides again on a state without it), and the
// ledger verifies.
func TestPruneSessions_TwoInstancesPruneOnce(t *testing.T) {
	st, a, b, clock := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 40
	for i := range n {
		if _, err := a.Reset(ctx, "s-"+string(rune('a'+i%26))+string(rune('a'+i/26)), "new"); err != nil {
			t.Fatal(err)
		}
	}
	clock.Sleep(ctx, 31*day) //nolint:errcheck // moves the clock
	testutil.NoError(t, b.Sync(ctx))
	var wg sync.WaitGroup
	reps := make([]*engine.PruneReport, 2)
	errs := make([]error, 2)
	for i, e := range []*engine.Engine{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = e.PruneSessions(ctx, engine.PruneOptions{After: 30 * day, Workers: 4})
		}()
	}
	wg.Wait()
	testutil.NoError(t, errs[0])
	testutil.NoError(t, errs[1])
	if got := len(reps[0].Pruned) + len(reps[1].Pruned); got != n {
		t.Fatalf("pruned %d + %d sessions, want %d in all", len(reps[0].Pruned), len(reps[1].Pruned), n)
	}
	// A session the other run pruned first is counted as such, not as
	// one active again.
	for i, r := range reps {
		if r.Kept != 0 || r.Unsettled != 0 {
			t.Errorf("run %d: pruned %d, elsewhere %d, kept %d, unsettled %d; want none kept or unsettled", i, len(r.Pruned), r.Elsewhere, r.Kept, r.Unsettled)
		}
	}
	testutil.NoError(t, a.Sync(ctx))
	if h := a.Held(); h.Sessions != 0 {
		t.Fatalf("a holds %d sessions after both runs", h.Sessions)
	}
	verifyOK(t, st)
}

func TestPruneSessions_RefusesBadOptions(t *testing.T) {
	_, e, _ := pruneLedger(t)
	for _, opt := range []engine.PruneOptions{{}, {After: time.Microsecond}, {After: day, Limit: -1}} {
		if _, err := e.PruneSessions(testutil.Context(t), opt); err == nil || !strings.Contains(err.Error(), "bad request") && !strings.Contains(err.Error(), "must be") && !strings.Contains(err.Error(), "negative") {
			t.Errorf("%+v: err %v, want a refusal", opt, err)
		}
	}
}

// Limit prunes the oldest first and says how many are left.
func TestPruneSessions_LimitOldestFirst(t *testing.T) {
	ctx := testutil.Context(t)
	_, e, clock := pruneLedger(t)
	clock.Advance(30 * day) // s-edge and s-new are stale too now
	rep, err := e.PruneSessions(ctx, engine.PruneOptions{After: 30 * day, Limit: 2})
	testutil.NoError(t, err)
	want := "s-old@" + testutil.T0.UTC().Format(time.RFC3339) + ",s-edge@" + testutil.T0.Add(day).UTC().Format(time.RFC3339)
	if got := prunedKeys(rep); got != want || rep.Remaining != 1 {
		t.Fatalf("pruned %q remaining %d, want %q, 1", got, rep.Remaining, want)
	}
}

// A run stopped from outside (shutdown, Ctrl-C) says so with what it
// did; what it pruned stays pruned and the next run prunes the rest.
func TestPruneSessions_CancelledRunReportsAndResumes(t *testing.T) {
	st, a, _, clock := twoInstances(t)
	ctx := testutil.Context(t)
	const n = 12
	for i := range n {
		if _, err := a.Reset(ctx, "s-"+string(rune('a'+i)), "new"); err != nil {
			t.Fatal(err)
		}
	}
	clock.Sleep(ctx, 31*day) //nolint:errcheck // moves the clock
	run, cancel := context.WithCancel(ctx)
	appends := 0
	engine.SetBeforeAppend(a, func(string) {
		if appends++; appends == 3 {
			cancel()
		}
	})
	rep, err := a.PruneSessions(run, engine.PruneOptions{After: 30 * day, Workers: 1})
	engine.SetBeforeAppend(a, nil)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if rep == nil || len(rep.Pruned) == 0 || len(rep.Pruned) >= n {
		t.Fatalf("cancelled run pruned %d of %d", len(rep.Pruned), n)
	}
	again, err := a.PruneSessions(ctx, engine.PruneOptions{After: 30 * day})
	testutil.NoError(t, err)
	// The append cancelled in flight may have been stored: the reports
	// count at most n, the engine holds none.
	if got := len(rep.Pruned) + len(again.Pruned); got < n-1 || got > n || a.Held().Sessions != 0 {
		t.Fatalf("pruned %d then %d of %d; %d held", len(rep.Pruned), len(again.Pruned), n, a.Held().Sessions)
	}
	verifyOK(t, st)
}

// A turn begun on a stale session (another instance) between its prune's
// decision and the prune's append is not ordered by the session's guard
// (a plain begin is stored under the turn's subject): the prune is
// stored, and void — folded while a turn of the session is open, it
// changes nothing. The session keeps the user's selection, the turn runs
// on, the run counts the session kept, and replay --verify re-decides
// the prune on its basis (no turn then) and folds it void, as the
// engines did.
func TestPruneSessions_TurnRacingPruneVoidsIt(t *testing.T) {
	st, a, b, clock, rep := pruneRacing(t, func(ctx context.Context, b *engine.Engine) error {
		_, err := b.BeginTurn(ctx, engine.TurnRequest{TurnID: "t-race", Session: "s-race"})
		return err
	})
	ctx := testutil.Context(t)
	gpt := raceModel
	if len(rep.Pruned) != 0 || rep.Kept != 1 {
		t.Fatalf("pruned %q kept %d, want the session kept", prunedKeys(rep), rep.Kept)
	}
	for name, e := range map[string]*engine.Engine{"a": a, "b": b} {
		testutil.NoError(t, e.Sync(ctx))
		if s := e.Session("s-race"); s.Model != gpt {
			t.Errorf("%s: s-race after the void prune: %+v, want its selection", name, s)
		}
		if tr, _ := e.Turn("t-race"); !tr.Phase.Open() || tr.Requested != gpt {
			t.Errorf("%s: t-race %s on %s, want running on %s", name, tr.Phase, tr.Requested, gpt)
		}
		if h := e.Held(); h.Pruned != 0 || h.Sessions != 1 {
			t.Errorf("%s: held %+v, want the session and no prune", name, h)
		}
	}
	var types []string
	for ev, err := range st.Read(ctx, 1) {
		testutil.NoError(t, err)
		types = append(types, ev.Type)
	}
	if !strings.Contains(strings.Join(types, " "), "TurnStarted AttemptStarted SessionPruned") {
		t.Fatalf("stream %v: want the prune stored after the turn's start", types)
	}
	verifyOK(t, st)
	// The session_selection projection voids it the same way.
	if rows := sessionRows(t, st); rows != "s-race=openai/gpt-5" {
		t.Fatalf("session_selection after the void prune: %q", rows)
	}
	// Once the turn has ended the session is idle again; the next run
	// prunes it.
	if _, err := a.ReportOutcome(ctx, "t-race", engine.AttemptReport{Attempt: 1, OK: true}); err != nil {
		t.Fatal(err)
	}
	clock.Sleep(ctx, 31*day) //nolint:errcheck // moves the clock
	rep, err := a.PruneSessions(ctx, engine.PruneOptions{After: 30 * day})
	testutil.NoError(t, err)
	if len(rep.Pruned) != 1 {
		t.Fatalf("after the turn: pruned %q", prunedKeys(rep))
	}
	verifyOK(t, st)
	if rows := sessionRows(t, st); rows != "" {
		t.Fatalf("session_selection after the prune: %q, want no row", rows)
	}
}

// The other order: a start decided on a state without the prune (instance
// b) and sent after the prune was stored (instance a) is guarded by its
// idle session's subject, so it conflicts and is decided again on the
// pruned session: the turn starts on the agent's default, as every later
// reader of the stream sees the session at its place, instead of on the
// selection the prune removed.
func TestPruneSessions_BeginRacingPruneDecidesAgain(t *testing.T) {
	st, a, b, clock := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := a.SelectModel(ctx, "s-race", raceModel, string(policy.SourceUser), nil, ""); err != nil {
		t.Fatal(err)
	}
	clock.Sleep(ctx, 31*day) //nolint:errcheck // moves the clock
	testutil.NoError(t, b.Sync(ctx))
	var (
		rep   *engine.PruneReport
		prErr error
	)
	stop := raceFirstAppend(b, ".turn.", func() { rep, prErr = a.PruneSessions(ctx, engine.PruneOptions{After: 30 * day, Workers: 1}) })
	if _, err := b.BeginTurn(ctx, engine.TurnRequest{TurnID: "t-race", Session: "s-race"}); err != nil {
		t.Fatal(err)
	}
	starts := stop()
	testutil.NoError(t, prErr)
	if len(rep.Pruned) != 1 || rep.Pruned[0].Session != "s-race" || starts != 2 {
		t.Fatalf("pruned %q, %d start appends; want s-race pruned and the start sent twice", prunedKeys(rep), starts)
	}
	primary := events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
	for name, e := range map[string]*engine.Engine{"a": a, "b": b} {
		testutil.NoError(t, e.Sync(ctx))
		if tr, _ := e.Turn("t-race"); tr.Requested != primary || tr.SelectionSource != string(policy.SourceDefault) {
			t.Errorf("%s: t-race requested %s (%s), want %s (default): the start must see the prune", name, tr.Requested, tr.SelectionSource, primary)
		}
		if s := e.Session("s-race"); s.Model != (events.ModelRef{}) {
			t.Errorf("%s: s-race after the prune: %+v, want no selection", name, s)
		}
	}
	var types []string
	for ev, err := range st.Read(ctx, 1) {
		testutil.NoError(t, err)
		types = append(types, ev.Type)
	}
	if !strings.Contains(strings.Join(types, " "), "SessionPruned TurnStarted") {
		t.Fatalf("stream %v: want the start stored after the prune", types)
	}
	verifyOK(t, st)
}

// A start on a session active within beginGuardIdle keeps its turn's
// guard: a session command stored between its decision and its append
// (another instance) does not make it decide again (rule revision 5 takes
// the command up at the turn's next decision instead).
func TestBeginOnActiveSessionKeepsTurnGuard(t *testing.T) {
	_, a, b, clock := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := a.SelectModel(ctx, "s-busy", raceModel, string(policy.SourceUser), nil, ""); err != nil {
		t.Fatal(err)
	}
	clock.Sleep(ctx, 8*time.Second) //nolint:errcheck // moves the clock
	testutil.NoError(t, b.Sync(ctx))
	var raceErr error
	stop := raceFirstAppend(b, ".turn.", func() { _, raceErr = a.Reset(ctx, "s-busy", "new") })
	if _, err := b.BeginTurn(ctx, engine.TurnRequest{TurnID: "t-busy", Session: "s-busy"}); err != nil {
		t.Fatal(err)
	}
	starts := stop()
	testutil.NoError(t, raceErr)
	if tr, _ := b.Turn("t-busy"); starts != 1 || tr.Requested != raceModel {
		t.Fatalf("%d start appends, t-busy on %s; want one, on %s", starts, tr.Requested, raceModel)
	}
}

// sessionRows rebuilds the projections of st into a fresh database and
// lists its session_selection rows as "session=provider/model".
func sessionRows(t *testing.T, st events.Store) string {
	t.Helper()
	ctx := testutil.Context(t)
	db, err := projections.Open(ctx, filepath.Join(t.TempDir(), "p.sqlite"))
	testutil.NoError(t, err)
	defer db.Close()
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	_, err = projections.NewProjector(db).CatchUp(ctx, st, last)
	testutil.NoError(t, err)
	rows, err := db.Sessions(ctx, projections.SessionFilter{})
	testutil.NoError(t, err)
	var out []string
	for _, r := range rows {
		out = append(out, r.SessionKey+"="+r.ProviderOverride+"/"+r.ModelOverride)
	}
	return strings.Join(out, ",")
}
