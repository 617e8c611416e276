package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// benchConfigYAML returns a config with perProvider profiles for each of
// anthropic (primary), openai and google (fallbacks), in operator order.
func benchConfigYAML(perProvider int) string {
	var b strings.Builder
	b.WriteString("auth:\n  profiles:\n")
	provs := []string{"anthropic", "openai", "google"}
	for _, p := range provs {
		for i := range perProvider {
			fmt.Fprintf(&b, "    \"%s:p%03d\": {provider: %s, type: api_key}\n", p, i, p)
		}
	}
	b.WriteString("  order:\n")
	for _, p := range provs {
		ids := make([]string, perProvider)
		for i := range ids {
			ids[i] = fmt.Sprintf("\"%s:p%03d\"", p, i)
		}
		fmt.Fprintf(&b, "    %s: [%s]\n", p, strings.Join(ids, ", "))
	}
	b.WriteString(`agents:
  defaults:
    model:
      primary: anthropic/claude-opus-4-6
      fallbacks: [openai/gpt-5, google/gemini-2.5-pro]
`)
	return b.String()
}

// loadConfig parses benchConfigYAML(perProvider).
func loadConfig(perProvider int) (*config.Loaded, error) {
	return config.Parse([]byte(benchConfigYAML(perProvider)), "bench")
}

// sink receives one encoded commit: its subject, message id (the first
// event's id) and JSON body.
type sink func(subject, msgID string, body []byte) error

// generator produces a realistic fledger stream for one agent: it drives
// the real policy deciders (StartTurn, OnOutcome, Resume and session
// commands) on virtual time with a seeded outcome mix, encodes every
// decision as one commit with the store's registry, and folds every event
// back into its state through the policy's one dispatch (it is a
// policy.Folder), as the engine does.
type generator struct {
	reg      *events.Registry
	cfg      policy.Config
	agent    string
	now      int64
	rng      *rand.Rand
	profiles map[string]policy.ProfileState
	sessions map[string]policy.SessionState
	ts       policy.TurnState // the turn being generated
	emit     sink
	turnNo   int
	// nSessions is the number of sessions step cycles through (16).
	nSessions int
	Commits   int
	Events    int

	policy.Ignore // the config is fixed; orders are never set
}

func newGenerator(reg *events.Registry, l *config.Loaded, agent string, seed uint64, emit sink) (*generator, error) {
	g := &generator{reg: reg, cfg: l.Policy, agent: agent, now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli(),
		rng: rand.New(rand.NewPCG(seed, 0x5eed)), profiles: map[string]policy.ProfileState{},
		sessions: map[string]policy.SessionState{}, nSessions: 16, emit: emit}
	err := g.commit("", []events.Payload{events.ConfigApplied{Hash: l.Hash, Config: l.Canonical, Source: "bench"}})
	return g, err
}

// keyOf is the payload's own aggregate key; payloads the catalog does not
// know (none today) fall back to home, the turn they belong to.
func keyOf(p events.Payload, home string) string {
	if k := events.KeyOf(p); k != "" {
		return k
	}
	return home
}

// commit encodes ps as one commit under the subject an engine stores a
// decision on the turn under (its profile's or session's when it changes
// them; the first event's own subject when turn is "") and folds it.
func (g *generator) commit(turn string, ps []events.Payload) error {
	if len(ps) == 0 {
		return nil
	}
	at := time.UnixMilli(g.now).UTC()
	evs := make([]events.Event, len(ps))
	for i, p := range ps {
		var opts []events.EventOpt
		if turn != "" {
			opts = append(opts, events.WithCorrelation(turn))
		}
		if i > 0 {
			opts = append(opts, events.WithCausation(evs[0].ID))
		}
		evs[i] = events.New(g.agent, keyOf(p, turn), at, p, opts...)
		policy.FoldEvent(g, &evs[i])
	}
	var subj string
	var err error
	if turn != "" {
		subj, err = engine.TurnDecisionSubject(g.agent, turn, ps)
	} else {
		subj, err = evs[0].Subject()
	}
	if err != nil {
		return err
	}
	body, err := g.reg.EncodeCommit(evs)
	if err != nil {
		return err
	}
	g.Commits++
	g.Events += len(evs)
	return g.emit(subj, evs[0].ID, body)
}

// FoldProfile folds a profile event with policy.EvolveProfile.
func (g *generator) FoldProfile(key string, p events.Payload) {
	g.profiles[key] = policy.EvolveProfile(g.profiles[key], p)
}

// FoldSession folds a session event with policy.EvolveSession.
func (g *generator) FoldSession(key string, p events.Payload) {
	g.sessions[key] = policy.EvolveSession(g.sessions[key], p)
}

// FoldTurn folds an event of the turn being generated with
// policy.EvolveTurn.
func (g *generator) FoldTurn(_ string, p events.Payload) { g.ts = policy.EvolveTurn(g.ts, p) }

func (g *generator) env(session string) policy.Env {
	return policy.Env{Config: &g.cfg, Profiles: g.profiles, Session: g.sessions[session], Now: g.now}
}

// outcome draws a provider outcome for attempt: the first attempt of a
// turn succeeds 70% of the time, later ones 85%; failures are mostly rate
// limits and overloads, with some timeouts, model_not_found, auth and
// billing.
func (g *generator) outcome(c *policy.Call) policy.Outcome {
	x := g.rng.IntN(100)
	if c.Attempt > 1 {
		if x < 85 { // retries, rotations and fallbacks mostly answer
			return policy.Outcome{OK: true, LatencyMs: 900}
		}
		x = 70 + g.rng.IntN(30)
	}
	fail := func(reason string, status int, msg string) policy.Outcome {
		return policy.Outcome{Reason: reason, Status: status, LatencyMs: 250,
			Error:    events.ProviderErrorRecord{Status: status, MessagePreview: msg, Hash: fmt.Sprintf("sha256:%08x", status*7919+len(msg))},
			Evidence: events.Evidence{Rule: fmt.Sprintf("status.%d", status), Source: "status"}}
	}
	switch {
	case x < 70:
		return policy.Outcome{OK: true, LatencyMs: 1200}
	case x < 84:
		return fail(policy.ReasonRateLimit, 429, "Rate limit reached for "+c.Model)
	case x < 90:
		return fail(policy.ReasonOverloaded, 529, "Overloaded")
	case x < 94:
		return fail(policy.ReasonTimeout, 408, "request timed out")
	case x < 96:
		return fail(policy.ReasonModelNotFound, 404, "model "+c.Model+" not found")
	case x < 98:
		return fail(policy.ReasonServerError, 500, "internal server error")
	case x < 99:
		return fail(policy.ReasonAuth, 401, "invalid x-api-key")
	default:
		return fail(policy.ReasonBilling, 402, "Your credit balance is too low")
	}
}

// start decides the start of a new turn on session: its id and first
// decision (not committed yet).
func (g *generator) start(session string) (string, policy.Decision, error) {
	g.turnNo++
	id := fmt.Sprintf("t-%s-%07d", g.agent, g.turnNo)
	sel, err := g.cfg.Select(g.sessions[session], policy.SelectRequest{Now: g.now})
	if err != nil {
		return id, policy.Decision{}, err
	}
	dec, err := policy.StartTurn(sel, g.env(session), policy.StartInput{TurnID: id, Session: session, Chat: "direct", Seed: uint64(g.turnNo), Rules: policy.CurrentRules})
	return id, dec, err
}

// abandon starts a turn on the next session and commits its start only
// (TurnStarted and the first AttemptStarted): a turn left open by a
// gateway that crashed mid-turn.
func (g *generator) abandon() error {
	id, dec, err := g.start(g.session())
	if err != nil {
		return err
	}
	err = g.commit(id, dec.Events)
	g.now += 1_000
	return err
}

// session is the session the next turn runs on: one of nSessions, in turn.
func (g *generator) session() string {
	return fmt.Sprintf("agent:%s:telegram:direct:%d", g.agent, g.turnNo%g.nSessions)
}

// turn runs one turn on session to its end (at most 24 calls).
func (g *generator) turn(session string) error {
	id, dec, err := g.start(session)
	if err != nil {
		return err
	}
	for calls := 0; ; {
		if err := g.commit(id, dec.Events); err != nil {
			return err
		}
		switch dec.Next.Kind {
		case policy.NextCall:
			if calls == 24 {
				return nil // left unfinished, as a crashed gateway would
			}
			calls++
			out := g.outcome(dec.Next.Call)
			g.now += out.LatencyMs
			dec, err = policy.OnOutcome(g.ts, g.env(session), out)
		case policy.NextWait:
			g.now = dec.Next.ResumeAt
			dec, err = policy.Resume(g.ts, g.env(session))
		default:
			return nil
		}
		if err != nil {
			return fmt.Errorf("turn %s: %w", id, err)
		}
	}
}

// step generates one unit of traffic: occasionally a session command,
// then one turn on the next of nSessions sessions, then a few seconds of
// idle time.
func (g *generator) step() error {
	s := g.session()
	var ps []events.Payload
	var err error
	switch g.turnNo % 97 {
	case 11:
		ps, err = policy.SelectModel(g.sessions[s], s, events.ModelRef{Provider: "openai", Model: "gpt-5"}, policy.SourceUser, nil)
	case 37:
		ps = policy.ResetSession(g.sessions[s], s, "reset")
	case 53:
		ps = g.cfg.ClearModel(g.sessions[s], s, g.agent)
	case 71:
		ps = g.cfg.Params.CompleteCompaction(g.sessions[s], s)
	}
	if err != nil {
		return err
	}
	if err := g.commit("", ps); err != nil {
		return err
	}
	if err := g.turn(s); err != nil {
		return err
	}
	g.now += 2_000 + int64(g.rng.IntN(8_000))
	return nil
}
