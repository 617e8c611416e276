package replay

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/termtext"
)

// Path outcomes besides the turn outcomes (succeeded | exhausted |
// stopped | unfinished).
const (
	// OutcomeUnknown: the re-decided path calls a provider/model/profile
	// the recording has no (further) outcome for.
	OutcomeUnknown = "unknown"
	// OutcomeError: the deciders refused the inputs (e.g. no model).
	OutcomeError = "error"
)

// WhatIfOptions select the turns [WhatIf] re-decides.
type WhatIfOptions struct {
	// Agent limits the turns to one agent ("" = every agent).
	Agent string
	// ToSeq stops reading after this stream sequence (0 = the end).
	ToSeq uint64
	// Since and Until, when set, keep only the turns started in [Since,
	// Until] (both inclusive).
	Since, Until time.Time
}

// WhatIfReport lists the recorded turns whose path or outcome changes
// under the other config.
type WhatIfReport struct {
	ConfigHash string `json:"config_hash"`
	// Turns is the number of turns re-decided; Unknown how many of them
	// reach a call whose outcome was never recorded.
	Turns   int `json:"turns"`
	Unknown int `json:"unknown"`
	// Changed holds the turns whose path or outcome changes, in stream
	// order.
	Changed []TurnComparison `json:"changed"`
}

// TurnComparison is one turn, recorded and re-decided.
type TurnComparison struct {
	Agent     string    `json:"agent"`
	TurnID    string    `json:"turn_id"`
	Session   string    `json:"session"`
	StartedAt time.Time `json:"started_at"`
	Recorded  Path      `json:"recorded"`
	WhatIf    Path      `json:"what_if"`
}

// Path is what a turn did: its chain, each attempt and skip in order, and
// its end.
type Path struct {
	Chain []string `json:"chain"`
	Steps []string `json:"steps"`
	// Outcome is succeeded | exhausted | stopped | unfinished | unknown |
	// error; End says it in words.
	Outcome string `json:"outcome"`
	End     string `json:"end"`
	// UnknownFrom is the attempt number whose outcome is unknown (0 =
	// none).
	UnknownFrom int `json:"unknown_from,omitempty"`
	// Class is the outcome as [Classify] names it (first_try, rotated,
	// fell_back, …), or unknown or error; Model the provider/model that
	// answered ("" = none). Not in the CLI's JSON.
	Class string `json:"-"`
	Model string `json:"-"`
}

// turnCase is one recorded turn: the inputs of its start, snapshotted,
// and its recorded events.
type turnCase struct {
	agent   string
	start   events.TurnStarted
	req     policy.SelectRequest
	env     policy.Env
	evs     []events.Event
	started time.Time
}

// WhatIf re-decides every recorded turn under cfg. Each turn starts from
// the state recorded just before it (session, profiles, probe throttle,
// skip cache) with cfg in place of the config it ran under, and is walked
// with the deciders; each provider call the new path makes is answered by
// the recording — the n-th call to the same provider, model and profile
// in the turn gets the n-th recorded outcome of that call — and a call
// the recording has no outcome for ends the simulation there, as unknown:
// an outcome is never invented. Profile and session state evolve within
// the turn from the re-decided events; turns are re-decided
// independently (a changed cooldown is not carried into the next turn).
// Time advances by the recorded call latencies and the decided waits.
func WhatIf(ctx context.Context, src Source, cfg *policy.Config, opt WhatIfOptions) (*WhatIfReport, error) {
	folds := map[string]*engine.Fold{}
	var cases []*turnCase
	byTurn := map[[2]string]*turnCase{}
	err := walk(ctx, src, 1, opt.ToSeq, func(c *commit) error {
		if c.Err != nil || len(c.Events) == 0 {
			return nil
		}
		ag := c.agent()
		if opt.Agent != "" && ag != opt.Agent {
			return nil
		}
		f := folds[ag]
		if f == nil {
			f = engine.NewFold(ag)
			folds[ag] = f
		}
		for _, ev := range c.Events {
			if ts, ok := ev.Data.(events.TurnStarted); ok && inRange(ev.At, opt.Since, opt.Until) {
				if tc := snapshot(f, ag, ts, ev.At); tc != nil {
					cases = append(cases, tc)
					byTurn[[2]string{ag, ts.TurnID}] = tc
				}
			}
			id := ev.CorrelationID
			if ev.Aggregate == events.AggTurn {
				id = ev.Key
			}
			if tc := byTurn[[2]string{ag, id}]; tc != nil {
				tc.evs = append(tc.evs, ev)
			}
		}
		f.Apply(c.Seq, "", c.Events)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep := &WhatIfReport{ConfigHash: cfg.Hash, Changed: []TurnComparison{}}
	for _, tc := range cases {
		rep.Turns++
		rec := pathOf(payloads(tc.evs))
		wi := simulate(tc, cfg)
		if wi.Outcome == OutcomeUnknown {
			rep.Unknown++
		}
		if rec.Outcome == wi.Outcome && rec.End == wi.End && strings.Join(rec.Steps, "\n") == strings.Join(wi.Steps, "\n") {
			continue
		}
		rep.Changed = append(rep.Changed, TurnComparison{Agent: tc.agent, TurnID: tc.start.TurnID, Session: tc.start.Session,
			StartedAt: tc.started, Recorded: rec, WhatIf: wi})
	}
	return rep, nil
}

// inRange reports whether t is in [since, until] (a zero bound is open).
func inRange(t, since, until time.Time) bool {
	return (since.IsZero() || !t.Before(since)) && (until.IsZero() || !t.After(until))
}

// snapshot copies the inputs a turn started on (nil when the recorded
// config is unknown).
func snapshot(f *engine.Fold, agent string, ts events.TurnStarted, at time.Time) *turnCase {
	cfg := f.Config(ts.ConfigHash)
	if cfg == nil {
		cfg = f.Current()
	}
	if cfg == nil {
		return nil
	}
	now := events.Millis(at)
	env := f.Env(cfg, ts.Session, now)
	env.Profiles, env.ProbeAt, env.SkipMarks = clone(env.Profiles), clone(env.ProbeAt), clone(env.SkipMarks)
	env.ProfileSkipMarks = clone(env.ProfileSkipMarks)
	_, req, _, _ := selectionFor(cfg, env.Session, ts, f.LastAutoProbeAt(ts.Session), now)
	return &turnCase{agent: agent, start: ts, req: req, env: env, started: at}
}

func clone[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func payloads(evs []events.Event) []events.Payload {
	out := make([]events.Payload, len(evs))
	for i := range evs {
		out[i] = evs[i].Data
	}
	return out
}

type callKey struct{ provider, model, profile string }

// oracle returns the recorded outcomes of the turn by call, in order.
func oracle(evs []events.Event) map[callKey][]policy.Outcome {
	out := map[callKey][]policy.Outcome{}
	started := map[int]callKey{}
	for _, ev := range evs {
		switch e := ev.Data.(type) {
		case events.AttemptStarted:
			started[e.Attempt] = callKey{e.Provider, e.Model, e.ProfileID}
		case events.AttemptFailed:
			k := started[e.Attempt]
			out[k] = append(out[k], outcomeOf(e))
		case events.AttemptSucceeded:
			k := started[e.Attempt]
			out[k] = append(out[k], outcomeOf(e))
		}
	}
	return out
}

// simulate re-decides one turn under cfg with the recorded outcomes.
func simulate(tc *turnCase, cfg *policy.Config) Path {
	outs := oracle(tc.evs)
	used := map[callKey]int{}
	env := tc.env
	env.Config = cfg
	var all []events.Payload
	fail := func(err error) Path {
		p := pathOf(all)
		p.Outcome, p.End, p.Class, p.Model = OutcomeError, "the deciders refuse: "+err.Error(), OutcomeError, ""
		return p
	}
	req := tc.req
	sel, err := cfg.Select(env.Session, req)
	if err != nil {
		return fail(err)
	}
	dec, err := policy.StartTurn(sel, env, policy.StartInput{TurnID: tc.start.TurnID, Session: tc.start.Session, Chat: tc.start.Chat, Seed: tc.start.Seed, Rules: policy.Rules(tc.start.Rules),
		SkipCacheSince: tc.start.SkipCacheSince})
	if err != nil {
		return fail(err)
	}
	w := policy.NewWorld(policy.TurnState{}, env)
	now := env.Now
	for range 10000 {
		w.Fold(dec.Events...)
		all = append(all, dec.Events...)
		switch dec.Next.Kind {
		case policy.NextCall:
			c := dec.Next.Call
			k := callKey{c.Provider, c.Model, c.ProfileID}
			if used[k] >= len(outs[k]) {
				p := pathOf(all)
				p.Outcome, p.UnknownFrom, p.Class, p.Model = OutcomeUnknown, c.Attempt, OutcomeUnknown, ""
				if n := len(p.Steps); n > 0 {
					p.Steps[n-1] += " ? unknown"
				}
				p.End = fmt.Sprintf("unknown from attempt #%d: %s/%s%s was never tried in reality", c.Attempt, c.Provider, c.Model, atProfile(c.ProfileID))
				if used[k] > 0 {
					p.End = fmt.Sprintf("unknown from attempt #%d: %s/%s%s was tried only %d %s in reality", c.Attempt, c.Provider, c.Model, atProfile(c.ProfileID), used[k], plural(used[k], "time"))
				}
				return p
			}
			out := outs[k][used[k]]
			used[k]++
			now += out.LatencyMs
			env.Now = now
			dec, err = policy.OnOutcome(w.Turn(), w.Env(env), out)
		case policy.NextWait:
			now = max(now, dec.Next.ResumeAt)
			env.Now = now
			dec, err = policy.Resume(w.Turn(), w.Env(env))
		default:
			return pathOf(all)
		}
		if err != nil {
			return fail(err)
		}
	}
	return fail(fmt.Errorf("no end after 10000 decisions"))
}

// pathOf summarises a turn's events.
func pathOf(ps []events.Payload) (p Path) {
	p = Path{Outcome: "unfinished", End: "unfinished", Steps: []string{}}
	var requested string
	attempts := 0
	defer func() { p.Class = Classify(p.Outcome, attempts, requested, p.Model) }()
	for _, x := range ps {
		switch e := x.(type) {
		case events.TurnStarted:
			requested = e.Requested.String()
			for _, c := range e.Chain {
				p.Chain = append(p.Chain, c.Provider+"/"+c.Model)
			}
		case events.AttemptStarted:
			attempts++
			p.Steps = append(p.Steps, fmt.Sprintf("#%d %s %s/%s%s", e.Attempt, e.Kind, e.Provider, e.Model, atProfile(e.ProfileID)))
		case events.AttemptFailed:
			if n := len(p.Steps); n > 0 {
				p.Steps[n-1] += " ✗ " + e.Reason
			}
		case events.AttemptSucceeded:
			if n := len(p.Steps); n > 0 {
				p.Steps[n-1] += " ✓"
			}
		case events.CandidateSkipped:
			p.Steps = append(p.Steps, fmt.Sprintf("skip %s/%s (%s)", e.Provider, e.Model, e.Reason))
		case events.ChainRetryScheduled:
			p.Steps = append(p.Steps, fmt.Sprintf("whole-chain retry round %d in %d ms", e.Round, e.DelayMs))
		case events.TurnSucceeded:
			p.Outcome, p.End, p.Model = "succeeded", fmt.Sprintf("succeeded: %s%s", e.AnsweredBy, atProfile(e.ProfileID)), e.AnsweredBy.String()
		case events.TurnExhausted:
			p.Outcome, p.End = "exhausted", "exhausted: "+oneLine(e.Summary, 160)
		case events.TurnStopped:
			p.Outcome, p.End = "stopped", fmt.Sprintf("stopped: %s (%s)", e.Disposition, e.Reason)
		case events.TurnSwitched:
			p.Outcome, p.End = "switched", "switched: "+e.Model.String()
		}
	}
	return p
}

// WriteWhatIf renders the changed turns side by side: recorded on the
// left, what-if on the right.
func WriteWhatIf(w io.Writer, rep *WhatIfReport) error {
	var b strings.Builder
	linef(&b, "what-if config %s: %d %s re-decided, %d %s, %d with an unknown outcome\n",
		rep.ConfigHash, rep.Turns, plural(rep.Turns, "turn"), len(rep.Changed), plural(len(rep.Changed), "change"), rep.Unknown)
	for _, c := range rep.Changed {
		linef(&b, "\nturn %s  agent %s  session %s  %s\n", c.TurnID, c.Agent, c.Session, c.StartedAt.UTC().Format(TimeLayout))
		left := []string{"recorded", "chain " + strings.Join(c.Recorded.Chain, " → ")}
		right := []string{"what-if", "chain " + strings.Join(c.WhatIf.Chain, " → ")}
		left = append(left, c.Recorded.Steps...)
		right = append(right, c.WhatIf.Steps...)
		for len(left) < len(right) {
			left = append(left, "")
		}
		for len(right) < len(left) {
			right = append(right, "")
		}
		left = append(left, "⇒ "+c.Recorded.End)
		right = append(right, "⇒ "+c.WhatIf.End)
		for i := range left {
			left[i], right[i] = termtext.Line(left[i]), termtext.Line(right[i])
		}
		width := 0
		for _, l := range left {
			width = max(width, utf8.RuneCountInString(l))
		}
		width = min(width, 70)
		for i := range left {
			l := left[i]
			pad := max(width-utf8.RuneCountInString(l), 0)
			linef(&b, "  %s%s │ %s\n", l, strings.Repeat(" ", pad), right[i])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
