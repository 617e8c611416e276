package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// beginLate stores a user selection of raceModel on s-late (instance a),
// then begins t-late on it on instance b with during run on a between the
// start's decision and its append, and returns the stream and a context.
func beginLate(t *testing.T, during func(ctx context.Context, a *engine.Engine) error) (events.Store, *engine.Engine, context.Context) {
	t.Helper()
	st, a, b, _ := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if _, err := a.SelectModel(ctx, "s-late", raceModel, string(policy.SourceUser), nil, ""); err != nil {
		t.Fatal(err)
	}
	testutil.NoError(t, b.Sync(ctx))
	var raceErr error
	stop := raceFirstAppend(b, ".turn.", func() { raceErr = during(ctx, a) })
	if _, err := b.BeginTurn(ctx, engine.TurnRequest{TurnID: "t-late", Session: "s-late"}); err != nil {
		t.Fatal(err)
	}
	stop()
	testutil.NoError(t, raceErr)
	return st, b, ctx
}

// resets stores a /new on each session.
func resets(ctx context.Context, e *engine.Engine, sessions ...string) error {
	for _, s := range sessions {
		if _, err := e.Reset(ctx, s, "new"); err != nil {
			return err
		}
	}
	return nil
}

// A start decided on one instance and stored after four commits of the
// other (a /model on its session among them) lies more than a verify
// window of 2 after its basis: verify re-decides it at its basis in a
// second pass, where the session still held the selection it started on,
// instead of on the state just before it (which holds the new /model: a
// false divergence).
func TestVerify_LateBasisReDecidedInSecondPass(t *testing.T) {
	st, b, ctx := beginLate(t, func(ctx context.Context, a *engine.Engine) error {
		opus := events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
		if _, err := a.SelectModel(ctx, "s-late", opus, string(policy.SourceUser), nil, ""); err != nil {
			return err
		}
		return resets(ctx, a, "x1", "x2", "x3")
	})
	if tr, _ := b.Turn("t-late"); tr.Requested != raceModel {
		t.Fatalf("t-late started on %s, want %s (decided before the second /model)", tr.Requested, raceModel)
	}
	for _, w := range []int{2, 0} {
		rep, err := replay.Verify(ctx, st, replay.VerifyOptions{Window: w})
		testutil.NoError(t, err)
		if !rep.OK() {
			t.Fatalf("window %d: %d divergent commits; first: %+v", w, rep.Diverged, rep.Divergences[0])
		}
		second := strings.Contains(strings.Join(rep.Notes, "\n"), "re-decided at their basis in a second pass")
		if second != (w == 2) {
			t.Fatalf("window %d: notes %q; want the second pass only with the small window", w, rep.Notes)
		}
	}
}

// A forged start stored with a basis more than the window behind it (a
// copy of a real start naming another turn and model): the second pass
// re-decides it at its basis and reports the divergence, with an agent
// filter and a ToSeq that include it, and not with ones that leave it out.
func TestVerify_LateForgedCommitDiverges(t *testing.T) {
	st, _, ctx := beginLate(t, func(ctx context.Context, a *engine.Engine) error {
		return resets(ctx, a, "x1", "x2", "x3", "x4")
	})
	var started events.Event
	var basis uint64
	for ev, err := range st.Read(ctx, 1) {
		testutil.NoError(t, err)
		if _, ok := ev.Data.(events.TurnStarted); ok {
			started, basis = ev, ev.Basis
		}
	}
	ts := started.Data.(events.TurnStarted)
	ts.TurnID = "t-forged"
	ts.Requested = events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
	forged := events.New("main", "t-forged", started.At, ts)
	subj, _ := events.Subject("main", events.AggTurn, "t-forged")
	res, err := st.AppendCommit(ctx, events.AppendRequest{Subject: subj, Expected: 0, Basis: basis, Events: []events.Event{forged}})
	testutil.NoError(t, err)
	for _, o := range []replay.VerifyOptions{{Window: 2}, {Window: 2, Agent: "main"}, {Window: 2, ToSeq: res.Seq}, {Window: 2, Agent: "other"}, {Window: 2, ToSeq: res.Seq - 1}} {
		rep, err := replay.Verify(ctx, st, o)
		testutil.NoError(t, err)
		wantBad := o.Agent != "other" && (o.ToSeq == 0 || o.ToSeq >= res.Seq)
		if rep.OK() == wantBad {
			t.Errorf("%+v: OK=%v, want %v", o, rep.OK(), !wantBad)
		}
	}
}
