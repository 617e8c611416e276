package projections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// The stream generator drives the real policy deciders (StartTurn,
// OnOutcome, Resume, session commands) with a fixed config, fixed times
// and a seeded outcome script, and appends every decision as one commit,
// as the engine does. It stands in for fixtures/scenarios until the
// scenario runner exists.

const agent = "main"

// t0 is the generator's first decision time (Unix ms): 2026-01-06T10:40:00Z.
const t0 = int64(1_767_696_000_000)

func ref(p, m string) policy.ModelRef { return policy.ModelRef{Provider: p, Model: m} }

func genConfig() policy.Config {
	c := policy.DefaultConfig()
	c.Hash = "sha256:gen"
	c.Profiles = []policy.Profile{
		{ID: "anthropic:a", Provider: "anthropic", Type: policy.ProfileOAuth},
		{ID: "anthropic:b", Provider: "anthropic", Type: policy.ProfileAPIKey},
		{ID: "google:inline", Provider: "google", Type: policy.ProfileAPIKey, InlineKey: true},
		{ID: "openai:key", Provider: "openai", Type: policy.ProfileAPIKey},
		{ID: "openai:user", Provider: "openai", Type: policy.ProfileOAuth},
	}
	c.Defaults = policy.Models{Primary: ref("anthropic", "claude"), Fallbacks: []policy.ModelRef{ref("openai", "gpt-5"), ref("google", "gemini")}}
	return c
}

// gen appends decisions to a store and keeps the state the deciders need.
type gen struct {
	t        testing.TB
	ctx      context.Context
	st       events.Store
	cfg      policy.Config
	now      int64
	profiles map[string]policy.ProfileState
	sessions map[string]policy.SessionState
	commits  int
	events   int
	lastSeq  uint64
}

func newGen(t testing.TB, st events.Store) *gen {
	g := &gen{t: t, ctx: context.Background(), st: st, cfg: genConfig(), now: t0,
		profiles: map[string]policy.ProfileState{}, sessions: map[string]policy.SessionState{}}
	g.commit("", []events.Payload{events.ConfigApplied{Hash: g.cfg.Hash, Config: json.RawMessage(`{}`), Source: "test"}})
	return g
}

// commit appends payloads as one commit (under the turn's subject when
// there is a turn, else the first event's) and folds them into g's state.
func (g *gen) commit(turn string, ps []events.Payload) {
	g.t.Helper()
	if len(ps) == 0 {
		return
	}
	at := time.UnixMilli(g.now).UTC()
	evs := make([]events.Event, len(ps))
	for i, p := range ps {
		evs[i] = events.New(agent, aggregateKey(p, turn), at, p, events.WithCorrelation(turn))
		switch p.EventAggregate() {
		case events.AggProfile:
			k := evs[i].Key
			g.profiles[k] = policy.EvolveProfile(g.profiles[k], p)
		case events.AggSession:
			k := evs[i].Key
			g.sessions[k] = policy.EvolveSession(g.sessions[k], p)
		}
	}
	subj, err := evs[0].Subject()
	if turn != "" {
		subj, err = events.Subject(agent, events.AggTurn, turn)
	}
	if err != nil {
		g.t.Fatal(err)
	}
	res, err := g.st.Append(g.ctx, subj, events.AnySeq, evs...)
	if err != nil {
		g.t.Fatalf("append %v: %v", ps, err)
	}
	g.commits++
	g.events += len(evs)
	g.lastSeq = res.Seq
}

func (g *gen) env(session string) policy.Env {
	return policy.Env{Config: &g.cfg, Profiles: g.profiles, Session: g.sessions[session], Now: g.now}
}

// outcome builds a provider outcome for reason ("" = success).
func outcome(reason string, status int, msg string) policy.Outcome {
	if reason == "" {
		return policy.Outcome{OK: true, LatencyMs: 800}
	}
	return policy.Outcome{Reason: reason, Status: status, LatencyMs: 300,
		Error:    events.ProviderErrorRecord{Status: status, MessagePreview: msg, Hash: fmt.Sprintf("sha256:%x", len(msg)*7919+status)},
		Evidence: events.Evidence{Rule: fmt.Sprintf("status-%d", status), Source: "status"}}
}

// turn runs one turn on session, answering each call with the next
// outcome from next (called with the call), until it ends or maxCalls
// calls were made (then it is left unfinished).
func (g *gen) turn(id, session string, next func(c *policy.Call) policy.Outcome, maxCalls int) policy.TurnState {
	g.t.Helper()
	sel, err := g.cfg.Select(g.sessions[session], policy.SelectRequest{Now: g.now})
	if err != nil {
		g.t.Fatal(err)
	}
	dec, err := policy.StartTurn(sel, g.env(session), policy.StartInput{TurnID: id, Session: session, Chat: "direct", Seed: uint64(len(id))})
	if err != nil {
		g.t.Fatal(err)
	}
	var ts policy.TurnState
	calls := 0
	for {
		for _, p := range dec.Events {
			ts = policy.EvolveTurn(ts, p)
		}
		g.commit(id, dec.Events)
		switch dec.Next.Kind {
		case policy.NextCall:
			if calls == maxCalls {
				return ts
			}
			calls++
			out := next(dec.Next.Call)
			g.now += out.LatencyMs
			dec, err = policy.OnOutcome(ts, g.env(session), out)
		case policy.NextWait:
			g.now = dec.Next.ResumeAt
			dec, err = policy.Resume(ts, g.env(session))
		default:
			return ts
		}
		if err != nil {
			g.t.Fatalf("turn %s: %v", id, err)
		}
	}
}

// session applies a session decision.
func (g *gen) session(ps []events.Payload, err error) {
	g.t.Helper()
	if err != nil {
		g.t.Fatal(err)
	}
	g.commit("", ps)
}

// randomOutcomes returns a seeded outcome script: mostly successes, rate
// limits, overloads, billing, model_not_found, auth, timeouts.
func randomOutcomes(seed uint64) func(c *policy.Call) policy.Outcome {
	r := rand.New(rand.NewPCG(seed, 42))
	return func(c *policy.Call) policy.Outcome {
		switch x := r.IntN(100); {
		case x < 55:
			return outcome("", 0, "")
		case x < 70:
			return outcome(policy.ReasonRateLimit, 429, "Rate limit reached for "+c.Model)
		case x < 78:
			return outcome(policy.ReasonOverloaded, 529, "Overloaded")
		case x < 81:
			return outcome(policy.ReasonBilling, 402, "Your credit balance is too low")
		case x < 86:
			return outcome(policy.ReasonModelNotFound, 404, "model "+c.Model+" not found")
		case x < 90:
			return outcome(policy.ReasonAuth, 401, "invalid x-api-key")
		case x < 95:
			return outcome(policy.ReasonTimeout, 408, "request timed out")
		default:
			return outcome(policy.ReasonServerError, 500, "internal server error")
		}
	}
}

// generate appends a realistic stream of at least minEvents events: turns
// over four sessions with rotations, cooldowns, billing disables,
// fallbacks and notices, interleaved with user selections, resets,
// compactions and an operator clear, ending with an unfinished turn.
func generate(t testing.TB, st events.Store, minEvents int) *gen {
	g := newGen(t, st)
	script := randomOutcomes(7)
	sessions := []string{"s-alpha", "s-beta", "s-gamma", "s-delta"}
	for i := 0; g.events < minEvents; i++ {
		s := sessions[i%len(sessions)]
		switch {
		case i%29 == 7:
			g.session(policy.SelectModel(g.sessions[s], s, ref("openai", "gpt-5"), policy.SourceUser, nil))
		case i%31 == 11:
			g.session(policy.ResetSession(g.sessions[s], s, "reset"), nil)
		case i%37 == 13:
			g.session(g.cfg.Params.CompleteCompaction(g.sessions[s], s), nil)
		case i%41 == 17:
			g.session(g.cfg.ClearModel(g.sessions[s], s, agent), nil)
		case i%43 == 19:
			g.session([]events.Payload{policy.ClearProfile(policy.Profile{ID: "anthropic:b", Provider: "anthropic"}, "ops", "recharged")}, nil)
		}
		g.turn(fmt.Sprintf("turn-%06d", i), s, script, 40)
		g.now += 7_000 + int64(i%13)*1_000
	}
	g.turn("turn-unfinished", "s-alpha", script, 0)
	return g
}

// TestGenerateDataDir fills $FLEDGER_GEN_DIR (a --data directory) with a
// generated stream of $FLEDGER_GEN_EVENTS events (default 5000), for trying
// the query commands by hand. Skipped unless the variable is set.
func TestGenerateDataDir(t *testing.T) {
	dir := os.Getenv("FLEDGER_GEN_DIR")
	if dir == "" {
		t.Skip("set FLEDGER_GEN_DIR to fill a data directory")
	}
	n := 5000
	if s := os.Getenv("FLEDGER_GEN_EVENTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	st, err := events.Open(context.Background(), events.WithDataDir(dir), events.WithSyncAlways(false, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := generate(t, st, n)
	t.Logf("%d commits, %d events, last sequence %d", g.commits, g.events, g.lastSeq)
}

// aggregateKey is the payload's own key; the generator's test-only types
// fall back to the turn they belong to.
func aggregateKey(p events.Payload, turn string) string {
	if k := events.KeyOf(p); k != "" {
		return k
	}
	if e, ok := p.(interface{ ProfileKey() string }); ok {
		return e.ProfileKey()
	}
	return turn
}
