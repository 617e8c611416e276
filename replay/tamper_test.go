package replay_test

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

// foldStore folds agent's commits of st as the engine would.
func foldStore(t testing.TB, st events.Store, agent string) (*engine.Fold, time.Time) {
	t.Helper()
	f := engine.NewFold(agent)
	var last time.Time
	var cur []events.Event
	flush := func() {
		if len(cur) > 0 {
			f.Apply(cur[0].Seq, "", cur)
			cur = nil
		}
	}
	for ev, err := range st.Read(context.Background(), 1) {
		testutil.NoError(t, err)
		if ev.Agent != agent {
			continue
		}
		if len(cur) > 0 && cur[0].Seq != ev.Seq {
			flush()
		}
		cur = append(cur, ev)
		if ev.At.After(last) {
			last = ev.At
		}
	}
	flush()
	return f, last
}

// appendDecision appends ps as one commit, the way the engine stores a
// decision: under the profile it touches, else under the turn.
func appendDecision(t testing.TB, st events.Store, agent, turnID string, at time.Time, ps []events.Payload) uint64 {
	t.Helper()
	subject := events.MustSubject(agent, events.AggTurn, turnID)
	evs := make([]events.Event, len(ps))
	for i, p := range ps {
		key := turnID
		switch e := p.(type) {
		case events.ProfileFailureRecorded:
			key = e.ProfileID
			subject = events.MustSubject(agent, events.AggProfile, key)
		case events.ProfileSucceeded:
			key = e.ProfileID
			subject = events.MustSubject(agent, events.AggProfile, key)
		case events.SessionAuthPinned:
			key = e.Session
		case events.SessionAuthUnpinned:
			key = e.Session
		case events.FallbackNoticeStateChanged:
			key = e.Session
		}
		opts := []events.EventOpt{events.WithCorrelation(turnID)}
		if i > 0 {
			opts = append(opts, events.WithCausation(evs[0].ID))
		}
		evs[i] = events.New(agent, key, at, p, opts...)
	}
	res, err := st.Append(context.Background(), subject, events.AnySeq, evs...)
	testutil.NoError(t, err)
	return res.Seq
}

// startTurn decides and appends a new turn of session dm-alice at at.
func startTurn(t testing.TB, st events.Store, agent, turnID string, at time.Time) {
	t.Helper()
	f, _ := foldStore(t, st, agent)
	cfg := f.Current()
	now := events.Millis(at)
	env := f.Env(cfg, "dm-alice", now)
	sel, err := cfg.Select(env.Session, policy.SelectRequest{Now: now})
	testutil.NoError(t, err)
	dec, err := policy.StartTurn(sel, env, policy.StartInput{TurnID: turnID, Session: "dm-alice", Chat: "direct", Seed: 7})
	testutil.NoError(t, err)
	appendDecision(t, st, agent, turnID, at, dec.Events)
}

// decideFailure decides the outcome of the turn's attempt in flight.
func decideFailure(t testing.TB, st events.Store, agent, turnID string, at time.Time, out policy.Outcome) []events.Payload {
	t.Helper()
	f, _ := foldStore(t, st, agent)
	ts, ok := f.Turn(turnID)
	if !ok {
		t.Fatalf("turn %s not folded", turnID)
	}
	dec, err := policy.OnOutcome(ts, f.Env(f.Config(ts.ConfigHash), ts.Session, events.Millis(at)), out)
	testutil.NoError(t, err)
	return dec.Events
}

func requireDivergence(t *testing.T, rep *replay.VerifyReport, seq uint64, typ, field string) {
	t.Helper()
	if rep.OK() {
		t.Fatalf("verify passed a tampered stream:\n%s", dumpReport(t, rep))
	}
	for _, d := range rep.Divergences {
		if d.Seq != seq {
			continue
		}
		if d.Type != typ {
			t.Fatalf("divergence at seq %d names %s, want %s:\n%s", seq, d.Type, typ, dumpReport(t, rep))
		}
		for _, fd := range d.Fields {
			if fd.Path == field {
				return
			}
		}
		t.Fatalf("divergence at seq %d does not name field %s:\n%s", seq, field, dumpReport(t, rep))
	}
	t.Fatalf("no divergence at seq %d:\n%s", seq, dumpReport(t, rep))
}

// TestVerify_TamperedCooldownIsNamed appends a billing failure whose
// disable window does not follow from the profile's state: verify must
// fail and name that commit and ProfileFailureRecorded.disabled_until.
func TestVerify_TamperedCooldownIsNamed(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "incident-day", "demo")
	_, last := foldStore(t, st, "demo")
	at := last.Add(time.Hour)
	startTurn(t, st, "demo", "tampered", at)

	failed := at.Add(300 * time.Millisecond)
	ps := decideFailure(t, st, "demo", "tampered", failed, policy.Outcome{Reason: policy.ReasonBilling, Status: 402,
		Disposition: policy.DispositionFailover, Error: events.ProviderErrorRecord{Status: 402, MessagePreview: "credit balance too low"},
		Evidence: events.Evidence{Rule: "test"}, LatencyMs: 300})
	found := false
	for i, p := range ps {
		if pf, ok := p.(events.ProfileFailureRecorded); ok {
			pf.DisabledUntil += time.Hour.Milliseconds()
			ps[i], found = pf, true
		}
	}
	if !found {
		t.Fatalf("the billing failure recorded no ProfileFailureRecorded: %v", ps)
	}
	seq := appendDecision(t, st, "demo", "tampered", failed, ps)

	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	requireDivergence(t, rep, seq, "ProfileFailureRecorded", "disabled_until")
	if len(rep.Divergences) != 1 {
		t.Fatalf("want exactly the tampered turn to diverge:\n%s", dumpReport(t, rep))
	}
}

// TestVerify_FallbackToAModelOutsideTheChainIsNamed appends a fallback
// step to a model the turn's chain does not have.
func TestVerify_FallbackToAModelOutsideTheChainIsNamed(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "incident-day", "demo")
	_, last := foldStore(t, st, "demo")
	at := last.Add(time.Hour)
	startTurn(t, st, "demo", "tampered", at)

	failed := at.Add(time.Second)
	ps := decideFailure(t, st, "demo", "tampered", failed, policy.Outcome{Reason: policy.ReasonModelNotFound, Status: 404,
		Disposition: policy.DispositionFailover, Error: events.ProviderErrorRecord{Status: 404, MessagePreview: "model not found"},
		Evidence: events.Evidence{Rule: "test"}, LatencyMs: 1000})
	found := false
	for i, p := range ps {
		if fs, ok := p.(events.FallbackStepped); ok && fs.Decision == policy.DecisionCandidateFailed {
			fs.NextCandidateModel, fs.FallbackStepToModel = "gpt-9-turbo", "openai/gpt-9-turbo"
			ps[i], found = fs, true
		}
	}
	if !found {
		t.Fatalf("the failure stepped no fallback: %v", ps)
	}
	seq := appendDecision(t, st, "demo", "tampered", failed, ps)

	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	requireDivergence(t, rep, seq, "FallbackStepped", "nextCandidateModel")
}

// TestVerify_UnexplainedCommitIsNamed appends turn events to a turn that
// already ended: no decision produces them.
func TestVerify_UnexplainedCommitIsNamed(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "incident-day", "demo")
	_, last := foldStore(t, st, "demo")
	seq := appendDecision(t, st, "demo", "storm", last.Add(time.Minute), []events.Payload{
		events.FallbackStepped{TurnID: "storm", Decision: policy.DecisionSkipCandidate, CandidateProvider: "openai", CandidateModel: "gpt-5"},
	})
	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if rep.OK() || len(rep.Divergences) != 1 || rep.Divergences[0].Seq != seq || rep.Divergences[0].Decision != replay.DecisionUnexplained {
		t.Fatalf("want one unexplained divergence at seq %d:\n%s", seq, dumpReport(t, rep))
	}
}

// An AuthOrderSet naming a profile the config does not have (appended by
// hand) is reported: SetOrder refuses it.
func TestVerify_TamperedAuthOrderIsNamed(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "stored-order", "demo")
	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() || rep.Checked[replay.DecisionAuthOrder] != 2 {
		t.Fatalf("clean run: want 2 auth orders verified:\n%s", dumpReport(t, rep))
	}
	_, last := foldStore(t, st, "demo")
	ev := events.New("demo", "openai", last.Add(time.Minute),
		events.AuthOrderSet{Provider: "openai", ProfileIDs: []string{"openai:team-a", "openai:ghost"}, By: "cli"})
	res, err := st.Append(context.Background(), events.MustSubject("demo", events.AggOrder, "openai"), events.AnySeq, ev)
	testutil.NoError(t, err)
	rep, err = replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if rep.OK() || len(rep.Divergences) != 1 {
		t.Fatalf("want one divergence at seq %d:\n%s", res.Seq, dumpReport(t, rep))
	}
	d := rep.Divergences[0]
	if d.Seq != res.Seq || d.Decision != replay.DecisionAuthOrder || !strings.Contains(d.Message, `"openai:ghost"`) {
		t.Fatalf("divergence %+v", d)
	}
}
