package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// Decision kinds a commit is verified as (Divergence.Decision and
// VerifyReport.Checked keys).
const (
	DecisionStart       = "start"         // TurnStarted: Config.Select + policy.StartTurn
	DecisionOutcome     = "outcome"       // AttemptFailed/AttemptSucceeded: policy.OnOutcome
	DecisionResume      = "resume"        // after a wait: policy.Resume
	DecisionSession     = "session"       // a session command: policy.SelectModel, PinProfile, …
	DecisionClear       = "profile_clear" // an operator's ProfileCleared: policy.ClearProfile
	DecisionAuthOrder   = "auth_order"    // an operator's AuthOrderSet: policy.Config.SetOrder
	DecisionConfig      = "config"        // ConfigApplied: the canonical config parses to its hash
	DecisionUnexplained = "unexplained"   // turn events no decision of the turn's state can produce
	DecisionDecode      = "decode"        // a message that cannot be decoded (no longer a divergence: see VerifyReport.Quarantined)
)

// Finding kinds ([Finding].Kind).
const (
	FindingQuarantined = "quarantined" // a stored message that is not a fledger commit
	FindingMissing     = "missing"     // sequences missing inside the stream
)

// Finding is a stored message verify cannot read as a fledger commit (it
// is skipped, as the engine's fold and the projections skip it), or a run
// of sequences missing from the stream.
type Finding struct {
	// Seq is the stream sequence; LastSeq the last one of a missing run.
	Seq     uint64 `json:"seq"`
	LastSeq uint64 `json:"last_seq,omitempty"`
	Kind    string `json:"kind"`
	// Subject and Size (bytes) describe a quarantined message.
	Subject string `json:"subject,omitempty"`
	Size    int    `json:"size,omitempty"`
	Reason  string `json:"reason"`
}

// String is the finding's report line: "seq N (subject S, B bytes): not
// a fledger commit: reason", or "sequence N missing from the stream".
func (f Finding) String() string {
	if f.Kind == FindingMissing {
		return events.GapText(f.Seq, max(f.LastSeq, f.Seq)) + " missing from the stream"
	}
	return fmt.Sprintf("seq %d (subject %s, %d bytes): not a fledger commit: %s", f.Seq, f.Subject, f.Size, f.Reason)
}

// VerifyOptions select what [Verify] checks.
type VerifyOptions struct {
	// Agent limits verification to one agent ("" = every agent).
	Agent string
	// ToSeq stops after this stream sequence (0 = the stream's end).
	ToSeq uint64
	// Window is how many commits verify reads ahead of its fold (0 =
	// [DefaultVerifyWindow]): a decision recorded with a basis (the stream
	// position its state was folded to) is re-decided on the fold at
	// exactly that position: in the one pass when the commit lies at most
	// Window commits after its basis, else in a second pass up to it.
	Window int
}

// DefaultVerifyWindow is the default [VerifyOptions].Window: far more
// commits than can land between a decision and its append under any
// concurrency fledger runs at (the lag is the decisions in flight).
const DefaultVerifyWindow = 8192

// Divergence is a recorded commit that does not follow from its inputs:
// the first event where what the deciders produce (Expected) and what was
// recorded (Recorded) differ.
type Divergence struct {
	// Seq is the commit's stream sequence and Index the event's position
	// in it (-1 = the commit as a whole).
	Seq   uint64 `json:"seq"`
	Index int    `json:"index"`
	Agent string `json:"agent"`
	// Turn or Session names the aggregate the decision belongs to.
	Turn    string `json:"turn,omitempty"`
	Session string `json:"session,omitempty"`
	// Decision is the kind of decision re-run (DecisionStart, …).
	Decision string `json:"decision"`
	// Type is the event type at Index (the recorded one when there is one).
	Type string `json:"type"`
	// Message says what differs in words.
	Message string `json:"message"`
	// Expected and Recorded are the canonical payloads at Index (absent
	// when that side has no event there).
	Expected json.RawMessage `json:"expected,omitempty"`
	Recorded json.RawMessage `json:"recorded,omitempty"`
	// Fields lists the differing payload fields.
	Fields []FieldDiff `json:"fields,omitempty"`
}

// VerifyReport is what [Verify] found.
type VerifyReport struct {
	// Commits and Events count what was read (of the selected agents);
	// LastSeq is the last sequence read.
	Commits int    `json:"commits"`
	Events  int    `json:"events"`
	LastSeq uint64 `json:"last_seq"`
	// Turns is the number of turns whose start was seen.
	Turns int `json:"turns"`
	// Checked counts the commits re-decided, by decision kind.
	Checked map[string]int `json:"checked"`
	// Diverged is the number of commits that did not match.
	Diverged int `json:"diverged"`
	// Divergences holds the first divergence of each turn (or session,
	// or agent config), in stream order.
	Divergences []Divergence `json:"divergences,omitempty"`
	// Notes are things verify could not check and took as recorded.
	Notes []string `json:"notes,omitempty"`
	// Quarantined lists the stored messages that are not fledger commits
	// (they cannot be decoded), in stream order: findings, not
	// divergences — no decision was taken on them, since every reader
	// skips them.
	Quarantined []Finding `json:"quarantined,omitempty"`
	// Missing lists the runs of sequences missing inside the stream: a
	// stored commit is gone, so its decision cannot be verified and the
	// ones after it were taken on state verify no longer has.
	Missing []Finding `json:"missing,omitempty"`
	// Snapshots holds the check of each agent's stored engine snapshot
	// ([VerifySnapshots]; set by the caller that has the store).
	Snapshots []SnapshotCheck `json:"snapshots,omitempty"`
}

// OK reports whether every recorded decision matched, no sequence is
// missing and every stored snapshot compared equals the fold.
// Quarantined messages do not make it false (see [StrictOK]).
func (r *VerifyReport) OK() bool {
	for _, c := range r.Snapshots {
		if !c.OK && c.Skipped == "" {
			return false
		}
	}
	return r.Diverged == 0 && len(r.Missing) == 0
}

// StrictOK is OK with no quarantined message either.
func (r *VerifyReport) StrictOK() bool { return r.OK() && len(r.Quarantined) == 0 }

// Verify folds the stream in order and, at every recorded decision,
// rebuilds the decider's inputs as the engine had them — the config in
// force (the agent's latest ConfigApplied, or the one TurnStarted names),
// the session, profile, probe-throttle and skip-cache state folded to the
// decision's basis (the stream position its state was folded to, recorded
// in the commit; for commits written before bases were recorded, the
// position just before the commit), the provider outcome recorded in the
// commit's AttemptFailed/AttemptSucceeded (classification included), and
// the decision time (the commit's event time) — re-runs the decider and
// compares its events with the recorded ones, payload by payload in
// canonical JSON.
//
// Under concurrency a decision's basis lies before commits of other turns
// that were stored between its read and its append, so verify reads up to
// VerifyOptions.Window commits ahead of its fold and re-decides each
// commit when the fold reaches its basis: one pass, linear in the stream.
// A commit whose basis is older than the window (a writer whose fold
// stood still) is re-decided at its basis in a second pass over the
// stream up to the latest such basis, and Notes say so.
//
// The classification itself is taken as recorded: the raw provider error
// is never stored (only redacted previews and a hash), so the classifier
// cannot be re-run. A decision re-decided after an append conflict is
// recorded once, with the basis of the decision that was stored.
//
// Errors are read errors only; divergences are in the report.
func Verify(ctx context.Context, src Source, opt VerifyOptions) (*VerifyReport, error) {
	v := &verifier{rep: &VerifyReport{Checked: map[string]int{}}, folds: map[string]*engine.Fold{}, seen: map[string]bool{}}
	window := opt.Window
	if window <= 0 {
		window = DefaultVerifyWindow
	}
	la := &lookahead{v: v}
	err := walk(ctx, src, 1, opt.ToSeq, func(c *commit) error {
		v.rep.LastSeq = c.Seq
		if c.Err != nil {
			var de *events.DecodeError
			if errors.As(c.Err, &de) {
				// Skipped as every reader skips it: a finding, not a
				// decision to re-decide.
				v.finding(de)
				return nil
			}
			la.push(c)
		} else {
			if opt.Agent != "" && c.agent() != opt.Agent {
				return nil
			}
			v.rep.Commits++
			v.rep.Events += len(c.Events)
			la.push(c)
		}
		for len(la.queue) > window {
			la.advance()
		}
		return nil
	})
	for len(la.queue) > 0 {
		la.advance()
	}
	if err == nil {
		err = v.recheckLate(ctx, src, la.late)
	}
	sort.SliceStable(v.rep.Divergences, func(i, j int) bool { return v.rep.Divergences[i].Seq < v.rep.Divergences[j].Seq })
	return v.rep, err
}

type verifier struct {
	rep   *VerifyReport
	folds map[string]*engine.Fold
	// seen holds the aggregates that already have a reported divergence.
	seen map[string]bool
}

func (v *verifier) fold(agent string) *engine.Fold {
	f := v.folds[agent]
	if f == nil {
		f = engine.NewFold(agent)
		v.folds[agent] = f
	}
	return f
}

func (v *verifier) diverge(d Divergence, key string) {
	v.rep.Diverged++
	if v.seen[key] {
		return
	}
	v.seen[key] = true
	v.rep.Divergences = append(v.rep.Divergences, d)
}

// finding records a quarantined message or a missing run.
func (v *verifier) finding(de *events.DecodeError) {
	if de.Gap() {
		v.rep.LastSeq = max(v.rep.LastSeq, de.Through)
		v.rep.Missing = append(v.rep.Missing, Finding{Seq: de.Seq, LastSeq: de.Through, Kind: FindingMissing, Reason: de.Reason()})
		return
	}
	v.rep.Quarantined = append(v.rep.Quarantined, Finding{Seq: de.Seq, Kind: FindingQuarantined, Subject: de.Subject, Size: de.Size, Reason: de.Reason()})
}

func (v *verifier) note(format string, a ...any) {
	v.rep.Notes = append(v.rep.Notes, fmt.Sprintf(format, a...))
}

// check re-decides one commit against f (the state just before it).
func (v *verifier) check(f *engine.Fold, c *commit) {
	ag := c.agent()
	now := events.Millis(c.Events[0].At)
	var turnEv, sessEv, profEv, orderEv *events.Event
	for i := range c.Events {
		ev := &c.Events[i]
		if ca, ok := ev.Data.(events.ConfigApplied); ok {
			v.checkConfig(c, i, ca)
			continue
		}
		switch ev.Aggregate {
		case events.AggTurn:
			if _, mark := ev.Data.(events.LiveSwitchMarked); mark {
				// Part of the user selection that marked it
				// (checkSession).
				continue
			}
			if turnEv == nil {
				turnEv = ev
			}
		case events.AggSession:
			if sessEv == nil {
				sessEv = ev
			}
		case events.AggProfile:
			if profEv == nil {
				profEv = ev
			}
		case events.AggOrder:
			if orderEv == nil {
				orderEv = ev
			}
		default:
			v.unknownType(c, ev)
		}
	}
	switch {
	case turnEv != nil:
		v.checkTurn(f, c, turnEv, now)
	case sessEv != nil:
		v.checkSession(f, c, sessEv)
	case profEv != nil:
		v.checkClear(f, c)
	case orderEv != nil:
		v.checkOrder(f, c)
	default:
		if _, ok := c.Events[0].Data.(events.ConfigApplied); !ok {
			v.note("seq %d (%s): not a decision verify knows; taken as recorded", c.Seq, c.Events[0].Type)
		}
	}
	_ = ag
}

func (v *verifier) checkConfig(c *commit, i int, ca events.ConfigApplied) {
	v.rep.Checked[DecisionConfig]++
	key := "config:" + c.agent() + ":" + ca.Hash
	d := Divergence{Seq: c.Seq, Index: i, Agent: c.agent(), Decision: DecisionConfig, Type: "ConfigApplied"}
	l, err := config.Parse(ca.Config, "ConfigApplied "+ca.Hash, config.Stored())
	if err != nil {
		d.Message = "the recorded canonical config does not parse: " + err.Error()
		v.diverge(d, key)
		return
	}
	if l.Hash != ca.Hash {
		d.Message = "the recorded canonical config does not hash to the recorded hash"
		d.Fields = []FieldDiff{{Path: "hash", Expected: l.Hash, Recorded: ca.Hash}}
		v.diverge(d, key)
	}
}

// checkTurn re-decides a turn commit: a start, an outcome or a resume.
func (v *verifier) checkTurn(f *engine.Fold, c *commit, first *events.Event, now int64) {
	key := "turn:" + c.agent() + ":" + first.Key
	base := Divergence{Seq: c.Seq, Index: -1, Agent: c.agent(), Turn: first.Key}
	for i := range c.Events {
		if ts, ok := c.Events[i].Data.(events.TurnStarted); ok {
			v.rep.Turns++
			base.Decision, base.Session = DecisionStart, ts.Session
			v.rep.Checked[DecisionStart]++
			dec, err := v.start(f, c, ts, now)
			v.compare(c, base, key, dec, err)
			return
		}
	}
	st, known := f.Turn(first.Key)
	base.Session = st.Session
	switch first.Data.(type) {
	case events.AttemptFailed, events.AttemptSucceeded:
		base.Decision = DecisionOutcome
		v.rep.Checked[DecisionOutcome]++
		if !known {
			base.Message, base.Type = "outcome of a turn that was never started", first.Type
			v.diverge(base, key)
			return
		}
		env, err := turnEnv(f, st, now)
		if err != nil {
			v.compare(c, base, key, policy.Decision{}, err)
			return
		}
		dec, err := policy.OnOutcome(st, env, outcomeOf(first.Data))
		v.compare(c, base, key, dec, err)
		return
	}
	if known && st.Phase == policy.PhaseWaiting {
		base.Decision = DecisionResume
		v.rep.Checked[DecisionResume]++
		env, err := turnEnv(f, st, now)
		if err != nil {
			v.compare(c, base, key, policy.Decision{}, err)
			return
		}
		dec, err := policy.Resume(st, env)
		v.compare(c, base, key, dec, err)
		return
	}
	v.rep.Checked[DecisionUnexplained]++
	phase := "unknown"
	if known {
		phase = string(st.Phase)
	}
	base.Decision, base.Type = DecisionUnexplained, first.Type
	base.Message = fmt.Sprintf("no decision produces this commit: the turn is %s, and only an attempt's outcome or the end of a wait is decided then", phase)
	base.Recorded, _, _ = canonical(first.Data)
	v.diverge(base, key)
}

// turnEnv is the engine's turnEnv: the config the turn names.
func turnEnv(f *engine.Fold, st policy.TurnState, now int64) (policy.Env, error) {
	cfg := f.Config(st.ConfigHash)
	if cfg == nil {
		return policy.Env{}, fmt.Errorf("turn %q ran under config %s, which no ConfigApplied before it records", st.TurnID, st.ConfigHash)
	}
	return f.Env(cfg, st.Session, now), nil
}

// start re-decides a TurnStarted commit as engine.RunTurn does.
func (v *verifier) start(f *engine.Fold, c *commit, ts events.TurnStarted, now int64) (policy.Decision, error) {
	cfg := f.Current()
	if cfg == nil {
		return policy.Decision{}, fmt.Errorf("no config in force for agent %q", c.agent())
	}
	if t, ok := f.Turn(ts.TurnID); ok && t.Phase != "" {
		return policy.Decision{}, fmt.Errorf("turn %q already exists (phase %s)", ts.TurnID, t.Phase)
	}
	env := f.Env(cfg, ts.Session, now)
	sel, _, how, err := selectionFor(cfg, env.Session, ts, f.LastAutoProbeAt(ts.Session), now)
	if err != nil {
		return policy.Decision{}, err
	}
	if how != "" {
		v.note("seq %d turn %s: %s", c.Seq, ts.TurnID, how)
	}
	return policy.StartTurn(sel, env, policy.StartInput{TurnID: ts.TurnID, Session: ts.Session, Chat: ts.Chat, Seed: ts.Seed, Rules: policy.Rules(ts.Rules),
		SkipCacheSince: ts.SkipCacheSince})
}

// selectionFor finds the selection request that reproduces the recorded
// selection: the engine's request names the OpenClaw agent id (for
// agents.entries) and a cron payload, neither of which TurnStarted
// records, so each agent entry of the config is tried, and for a cron
// turn the payload model is the requested one. how says what had to be
// taken from the record ("" when nothing). When nothing reproduces it,
// the plain request's selection is returned: StartTurn then shows where
// it differs.
func selectionFor(cfg *policy.Config, sess policy.SessionState, ts events.TurnStarted, lastProbe, now int64) (policy.Selection, policy.SelectRequest, string, error) {
	agents := []string{""}
	for id := range cfg.Agents {
		agents = append(agents, id)
	}
	sort.Strings(agents[1:])
	crons := []*policy.CronPayload{nil}
	if policy.SelectionSource(ts.SelectionSource) == policy.SourceCron {
		var fb []policy.ModelRef
		for _, c := range ts.Chain[min(1, len(ts.Chain)):] {
			fb = append(fb, policy.ModelRef{Provider: c.Provider, Model: c.Model})
		}
		crons = append(crons, &policy.CronPayload{Model: ts.Requested},
			&policy.CronPayload{Model: ts.Requested, Fallbacks: fb, HasFallbacks: true})
	}
	// A caller's fallbacksOverride is not recorded either, only that there
	// was one: it is the recorded chain after the requested model.
	var override *[]policy.ModelRef
	if ts.FallbacksOverride {
		fb := []policy.ModelRef{}
		for _, c := range ts.Chain[min(1, len(ts.Chain)):] {
			fb = append(fb, policy.ModelRef{Provider: c.Provider, Model: c.Model})
		}
		override = &fb
	}
	for ci, cron := range crons {
		for _, a := range agents {
			req := policy.SelectRequest{Agent: a, Cron: cron, Now: now, LastAutoProbeAt: lastProbe, FallbacksOverride: override}
			sel, err := cfg.Select(sess, req)
			if err == nil && sameSelection(sel, ts) {
				how := ""
				switch ci {
				case 1:
					how = "cron payload model taken as the requested " + ts.Requested.String() + " (cron payloads are not recorded)"
				case 2:
					how = "cron payload model and fallbacks taken from the recorded chain (cron payloads are not recorded)"
				}
				return sel, req, how, nil
			}
		}
	}
	req := policy.SelectRequest{Now: now, LastAutoProbeAt: lastProbe, FallbacksOverride: override}
	sel, err := cfg.Select(sess, req)
	if err != nil {
		return sel, req, "", fmt.Errorf("selection: %w", err)
	}
	return sel, req, "", nil
}

func sameSelection(sel policy.Selection, ts events.TurnStarted) bool {
	if sel.Requested != ts.Requested || sel.Source != policy.SelectionSource(ts.SelectionSource) || sel.Strict != ts.Strict ||
		sel.AutoOriginProbe != ts.AutoOriginProbe || sel.FallbacksOverride != ts.FallbacksOverride || len(sel.Chain) != len(ts.Chain) {
		return false
	}
	for i := range sel.Chain {
		if sel.Chain[i] != ts.Chain[i] {
			return false
		}
	}
	return true
}

// outcomeOf rebuilds the Outcome the engine passed to OnOutcome from the
// recorded attempt result (the engine's outcomeOf maps the classifier's
// result onto exactly these fields).
func outcomeOf(p events.Payload) policy.Outcome {
	switch e := p.(type) {
	case events.AttemptSucceeded:
		return policy.Outcome{OK: true, LatencyMs: e.LatencyMs}
	case events.AttemptFailed:
		out := policy.Outcome{Reason: e.Reason, Status: e.Status, Code: e.Error.Code, Disposition: e.Disposition,
			RetryAfterMs: e.RetryAfterMs, OutputStarted: e.ReplayUnsafe, Error: e.Error, Evidence: e.Evidence,
			LatencyMs: e.LatencyMs, Reset: e.Reset, LongWindow: e.LongWindow, ToolBatchSettled: e.ToolBatchSettled}
		if len(e.RequestSizeCeiling) > 0 {
			out.RequestSizeCeiling = true
			out.CeilingTokens = append([]int64(nil), e.RequestSizeCeiling...)
		}
		return out
	}
	return policy.Outcome{}
}

// checkSession re-decides a session command (the command is not recorded,
// so it is read back from the commit's first event).
func (v *verifier) checkSession(f *engine.Fold, c *commit, first *events.Event) {
	session := first.Key
	key := "session:" + c.agent() + ":" + session
	base := Divergence{Seq: c.Seq, Index: -1, Agent: c.agent(), Session: session, Decision: DecisionSession}
	v.rep.Checked[DecisionSession]++
	if e, ok := first.Data.(events.SessionPruned); ok {
		// Session maintenance: the age is recorded, the session's
		// activity and running turns are the fold's.
		at, running := f.SessionActivity(session)
		out := policy.PruneStale(session, at, running, events.Millis(first.At), e.PruneAfterMs)
		v.compare(c, base, key, policy.Decision{Events: out}, nil)
		return
	}
	cfg := f.Current()
	if cfg == nil {
		v.compare(c, base, key, policy.Decision{}, fmt.Errorf("no config in force for agent %q", c.agent()))
		return
	}
	s := f.Session(session)
	var lastPin *events.SessionAuthPinned
	for i := range c.Events {
		if p, ok := c.Events[i].Data.(events.SessionAuthPinned); ok {
			lastPin = &p
		}
	}
	var out []events.Payload
	var err error
	switch e := first.Data.(type) {
	case events.SessionModelSelected:
		profile := ""
		if lastPin != nil && policy.PinSource(lastPin.Source) == policy.PinUser {
			profile = lastPin.ProfileID
		} else if lastPin == nil {
			profile = repeatedPin(c, s)
		}
		out, err = engine.SelectionDecision(cfg, s, f.Running(session), session, e.Model, e.Source, e.Origin, profile)
	case events.SessionReset:
		out = policy.ResetSession(s, session, e.Kind)
	case events.CompactionCompleted:
		out = cfg.CompleteCompaction(s, session)
	case events.SessionModelCleared, events.SessionAuthUnpinned:
		if un, ok := e.(events.SessionAuthUnpinned); ok && un.Cause != policy.UnpinDefaultCommand {
			if lastPin == nil {
				break
			}
			out, err = pinCommand(cfg, s, session, lastPin)
			break
		}
		// `/model default`: the agent is not recorded; try each.
		running := f.Running(session)
		out = engine.ClearDecision(cfg, s, running, session, "")
		for id := range cfg.Agents {
			if o := engine.ClearDecision(cfg, s, running, session, id); samePayloads(o, c.Events) {
				out = o
				break
			}
		}
	case events.SessionAuthPinned:
		out, err = pinCommand(cfg, s, session, lastPin)
	case events.FallbackNoticeStateChanged:
		v.note("seq %d (%s): session event verify cannot re-decide; taken as recorded", c.Seq, first.Type)
		return
	default:
		v.unknownType(c, first)
		return
	}
	v.compare(c, base, key, policy.Decision{Events: out}, err)
}

// pinCommand is engine.PinProfile for the recorded pin's profile and source.
func pinCommand(cfg *policy.Config, s policy.SessionState, session string, pin *events.SessionAuthPinned) ([]events.Payload, error) {
	if policy.PinSource(pin.Source) != policy.PinAuto {
		return cfg.PinProfile(s, session, pin.ProfileID)
	}
	p, ok := cfg.Profile(pin.ProfileID)
	if !ok {
		return nil, fmt.Errorf("%w: %q", policy.ErrUnknownProfile, pin.ProfileID)
	}
	if s.Pin == pin.ProfileID && s.PinSource == policy.PinAuto {
		return nil, nil
	}
	var out []events.Payload
	if s.Pin != "" {
		out = append(out, events.SessionAuthUnpinned{Session: session, ProfileID: s.Pin, Source: string(s.PinSource), Cause: policy.UnpinReplaced})
	}
	return append(out, events.SessionAuthPinned{Session: session, ProfileID: pin.ProfileID, Provider: p.Provider, Source: string(policy.PinAuto)}), nil
}

// checkClear re-decides an operator's ProfileCleared commit.
func (v *verifier) checkClear(f *engine.Fold, c *commit) {
	first := c.Events[0]
	key := "profile:" + c.agent() + ":" + first.Key
	base := Divergence{Seq: c.Seq, Index: -1, Agent: c.agent(), Decision: DecisionClear}
	v.rep.Checked[DecisionClear]++
	var cl events.ProfileCleared
	switch e := first.Data.(type) {
	case events.ProfileCleared:
		cl = e
	case events.ProfileFailureRecorded, events.ProfileSucceeded, events.ProfileUsed:
		v.unexplained(base, key, first, "a profile health event outside any turn decision: only an operator's ProfileCleared is decided alone")
		return
	default:
		v.unknownType(c, &first)
		return
	}
	cfg := f.Current()
	if cfg == nil {
		v.compare(c, base, key, policy.Decision{}, fmt.Errorf("no config in force for agent %q", c.agent()))
		return
	}
	prof, ok := cfg.Profile(cl.ProfileID)
	if !ok {
		v.compare(c, base, key, policy.Decision{}, fmt.Errorf("%w: %q", policy.ErrUnknownProfile, cl.ProfileID))
		return
	}
	v.compare(c, base, key, policy.Decision{Events: []events.Payload{policy.ClearProfile(prof, cl.By, cl.Note)}}, nil)
}

// checkOrder re-decides an operator's AuthOrderSet commit (`auth order
// set`): every id must be a configured profile of the provider, once.
func (v *verifier) checkOrder(f *engine.Fold, c *commit) {
	first := c.Events[0]
	key := "order:" + c.agent() + ":" + first.Key
	base := Divergence{Seq: c.Seq, Index: -1, Agent: c.agent(), Decision: DecisionAuthOrder}
	v.rep.Checked[DecisionAuthOrder]++
	set, ok := first.Data.(events.AuthOrderSet)
	if !ok {
		v.unknownType(c, &first)
		return
	}
	cfg := f.Current()
	if cfg == nil {
		v.compare(c, base, key, policy.Decision{}, fmt.Errorf("no config in force for agent %q", c.agent()))
		return
	}
	p, err := cfg.SetOrder(set.Provider, set.ProfileIDs, set.By)
	v.compare(c, base, key, policy.Decision{Events: []events.Payload{p}}, err)
}

// unknownType notes an event of a type verify has no case for: it is
// taken as recorded. No type of the catalog gets here
// (TestVerify_ChecksEveryCatalogType): a new type needs its case in
// check, checkSession, checkClear or checkOrder (a turn's are re-decided
// by the decision that produced them).
func (v *verifier) unknownType(c *commit, ev *events.Event) {
	v.note("seq %d (%s, a %s event): a type verify does not know; taken as recorded", c.Seq, ev.Type, ev.Aggregate)
}

// unexplained reports an operator-command commit whose first event no
// decision of its kind produces.
func (v *verifier) unexplained(base Divergence, key string, first events.Event, msg string) {
	base.Decision, base.Type, base.Message = DecisionUnexplained, first.Type, msg
	base.Recorded, _, _ = canonical(first.Data)
	v.rep.Checked[DecisionUnexplained]++
	v.diverge(base, key)
}

func samePayloads(exp []events.Payload, rec []events.Event) bool {
	if len(exp) != len(rec) {
		return false
	}
	for i := range exp {
		a, _, _ := canonical(exp[i])
		b, _, _ := canonical(rec[i].Data)
		if string(a) != string(b) {
			return false
		}
	}
	return true
}

// compare reports the first event where dec and the commit differ.
func (v *verifier) compare(c *commit, base Divergence, key string, dec policy.Decision, err error) {
	if err != nil {
		base.Type = c.Events[0].Type
		base.Message = "the decider refuses these inputs: " + err.Error()
		base.Recorded, _, _ = canonical(c.Events[0].Data)
		v.diverge(base, key)
		return
	}
	exp := dec.Events
	if len(c.Events) > 0 && c.Events[0].Basis == 0 {
		exp = legacyDecision(exp)
	}
	for i := 0; i < max(len(exp), len(c.Events)); i++ {
		d := base
		d.Index = i
		switch {
		case i >= len(exp):
			d.Type = c.Events[i].Type
			d.Recorded, _, _ = canonical(c.Events[i].Data)
			d.Message = "recorded, but the decider does not produce it"
		case i >= len(c.Events):
			d.Type = exp[i].EventType()
			d.Expected, _, _ = canonical(exp[i])
			d.Message = "the decider produces it, but it was not recorded"
		default:
			e, et, _ := canonical(exp[i])
			r, rt, _ := canonical(c.Events[i].Data)
			if exp[i].EventType() == c.Events[i].Type && string(e) == string(r) {
				continue
			}
			d.Type, d.Expected, d.Recorded = c.Events[i].Type, e, r
			if exp[i].EventType() != c.Events[i].Type {
				d.Message = fmt.Sprintf("the decider produces %s here, the record has %s", exp[i].EventType(), c.Events[i].Type)
			} else {
				d.Fields = diffFields(et, rt)
				d.Message = fmt.Sprintf("%s differs in %d %s", d.Type, len(d.Fields), plural(len(d.Fields), "field"))
			}
		}
		v.diverge(d, key)
		return
	}
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	if strings.HasSuffix(s, "y") {
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// legacyDecision is what a fledger from before recorded bases (and so
// before ProfileUsed) recorded for the decision exp: a success on a clean
// profile was a ProfileSucceeded with nothing kept, the same fields and the
// same effect on the fold. Commits without a basis are re-decided by
// today's deciders and compared through it, so a ledger written by an
// earlier build still verifies.
func legacyDecision(exp []events.Payload) []events.Payload {
	out := exp
	for i, p := range exp {
		u, ok := p.(events.ProfileUsed)
		if !ok {
			continue
		}
		if &out[0] == &exp[0] {
			out = append([]events.Payload(nil), exp...)
		}
		out[i] = events.ProfileSucceeded{ProfileID: u.ProfileID, Provider: u.Provider, Model: u.Model,
			TurnID: u.TurnID, Attempt: u.Attempt, LastUsed: u.LastUsed}
	}
	return out
}

// repeatedPin is the profile of a `/model p/m@profile` whose profile was
// already the session's user pin: the command stores no pin then, and the
// only trace of its profile is the live switch it marked. A mark naming
// the session's user pin can come from nothing else (a profile that was
// not the pin would have been pinned in the same commit), so that is the
// command's profile; any other mark's profile is left to the re-decision
// to refuse ("" = none).
func repeatedPin(c *commit, s policy.SessionState) string {
	for _, ev := range c.Events {
		if m, ok := ev.Data.(events.LiveSwitchMarked); ok && m.ProfileID != "" &&
			m.ProfileID == s.Pin && s.PinSource == policy.PinUser {
			return m.ProfileID
		}
	}
	return ""
}
