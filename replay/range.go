package replay

import (
	"context"
	"sort"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Turn outcomes of a [TurnMark] (and of a what-if [Path]'s Class): how a
// turn ended, telling a first-try answer from a rotation and a fallback.
const (
	// ClassFirstTry: succeeded on the first attempt.
	ClassFirstTry = "first_try"
	// ClassRotated: succeeded on the requested model after more than one
	// attempt (another auth profile, or a same-profile retry).
	ClassRotated = "rotated"
	// ClassFellBack: succeeded on another model than the requested one.
	ClassFellBack  = "fell_back"
	ClassExhausted = "exhausted"
	ClassStopped   = "stopped"
	ClassSwitched  = "switched"
	// ClassRunning: no end recorded (yet).
	ClassRunning = "running"
)

// Classify names a turn's outcome from its end (succeeded | exhausted |
// stopped | switched | unfinished), its attempts, and the model it
// requested and the one that answered.
func Classify(end string, attempts int, requested, answered string) string {
	switch end {
	case "succeeded":
		switch {
		case answered != requested:
			return ClassFellBack
		case attempts <= 1:
			return ClassFirstTry
		}
		return ClassRotated
	case "exhausted":
		return ClassExhausted
	case "stopped":
		return ClassStopped
	case "switched":
		return ClassSwitched
	}
	return ClassRunning
}

// Profile window states of a [ProfileWindow].
const (
	WindowCooldown = "cooldown"
	WindowDisabled = "disabled"
	WindowBlocked  = "blocked"
)

// Default and largest number of turns a [RangeTimeline] holds.
const (
	DefaultRangeTurns = 10000
	MaxRangeTurns     = 50000
)

// RangeOptions select what [ReadRange] reads.
type RangeOptions struct {
	// Agent is the agent whose profiles and turns are read (required).
	Agent string
	// Since and Until bound the range, both inclusive. A zero Until is the
	// time of the agent's last event (the ledger's end); a zero Since is
	// Until − 1 h: the default range is the last hour of the ledger.
	Since, Until time.Time
	// Limit is the most turns held (0 = DefaultRangeTurns).
	Limit int
}

// RangeTimeline is one agent's profile windows and turns over a time
// range (GET /v1/timeline): what the incident viewer draws. Times are RFC
// 3339 UTC with milliseconds; an absent one is "".
type RangeTimeline struct {
	Agent       string        `json:"agent"`
	Since       string        `json:"since,omitempty"`
	Until       string        `json:"until,omitempty"`
	LedgerFirst string        `json:"ledger_first,omitempty"`
	LedgerLast  string        `json:"ledger_last,omitempty"`
	LastSeq     uint64        `json:"last_seq"`
	Profiles    []ProfileLane `json:"profiles"`
	Turns       []TurnMark    `json:"turns"`
	Truncated   bool          `json:"truncated"`
}

// ProfileLane is one auth profile's non-ready windows in the range.
type ProfileLane struct {
	ProfileID string          `json:"profile_id"`
	Provider  string          `json:"provider"`
	Windows   []ProfileWindow `json:"windows"`
}

// ProfileWindow is one cooldown, disable or provider block as recorded:
// From is the time of the event that set it, Until its recorded deadline,
// EndedAt when it really ended (the event that cleared or replaced it
// early, ClearedSeq; else Until; "" while still active at the last event).
type ProfileWindow struct {
	State      string `json:"state"`
	Reason     string `json:"reason"`
	Model      string `json:"model"`
	Source     string `json:"source,omitempty"`
	From       string `json:"from"`
	Until      string `json:"until"`
	EndedAt    string `json:"ended_at,omitempty"`
	SetSeq     uint64 `json:"set_seq"`
	ClearedSeq uint64 `json:"cleared_seq"`

	from, until, ended int64 // Unix ms; ended 0 = still active
}

// TurnMark is one turn started in the range.
type TurnMark struct {
	TurnID         string `json:"turn_id"`
	Session        string `json:"session"`
	Outcome        string `json:"outcome"`
	Reason         string `json:"reason,omitempty"`
	StartedAt      string `json:"started_at"`
	EndedAt        string `json:"ended_at,omitempty"`
	RequestedModel string `json:"requested_model"`
	FinalModel     string `json:"final_model"`
	FinalProfile   string `json:"final_profile"`
	Attempts       int    `json:"attempts"`
	StartSeq       uint64 `json:"start_seq"`
	EndSeq         uint64 `json:"end_seq"`

	started int64 // Unix ms
}

// FormatTime is t as the timeline writes times: RFC 3339, UTC,
// milliseconds always.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

func formatMs(ms int64) string { return FormatTime(time.UnixMilli(ms)) }

// profileTrack follows one profile's windows through its events.
type profileTrack struct {
	id, provider string
	st           policy.ProfileState
	open         [3]*ProfileWindow // by window kind: cooldown, disabled, blocked
	done         []*ProfileWindow
}

// windowOf is the window of kind k that state s holds (nil: none).
func windowOf(s policy.ProfileState, k int) *ProfileWindow {
	switch {
	case k == 0 && s.CooldownUntil > 0:
		return &ProfileWindow{State: WindowCooldown, Reason: s.CooldownReason, Model: s.CooldownModel, until: s.CooldownUntil}
	case k == 1 && s.DisabledUntil > 0:
		return &ProfileWindow{State: WindowDisabled, Reason: s.DisabledReason, until: s.DisabledUntil}
	case k == 2 && s.BlockedUntil > 0:
		return &ProfileWindow{State: WindowBlocked, Reason: s.BlockedReason, Model: s.BlockedModel, Source: s.BlockedSource, until: s.BlockedUntil}
	}
	return nil
}

func sameWindow(a, b *ProfileWindow) bool {
	return a.until == b.until && a.Reason == b.Reason && a.Model == b.Model && a.Source == b.Source
}

// fold applies one profile event at (seq, at): a window that changes or
// goes ends (early, when before its deadline), a new one opens.
func (p *profileTrack) fold(seq uint64, at int64, data events.Payload) {
	p.st = policy.EvolveProfile(p.st, data)
	if p.st.Provider != "" {
		p.provider = p.st.Provider
	}
	for k := range p.open {
		cur, next := p.open[k], windowOf(p.st, k)
		if cur != nil && next != nil && sameWindow(cur, next) {
			continue
		}
		if cur != nil {
			cur.ended = cur.until
			if at < cur.until {
				cur.ended, cur.ClearedSeq = at, seq
			}
			p.done = append(p.done, cur)
			p.open[k] = nil
		}
		if next != nil && next.until > at {
			next.from, next.SetSeq = at, seq
			p.open[k] = next
		}
	}
}

// turnTrack follows one turn.
type turnTrack struct {
	mark      TurnMark
	requested string
	end       string
}

// ReadRange reads the stream from its start to its end and returns
// opt.Agent's profile windows overlapping the range and the turns started
// in it (at most opt.Limit, in start order). It writes nothing.
func ReadRange(ctx context.Context, src Source, opt RangeOptions) (*RangeTimeline, error) {
	limit := opt.Limit
	if limit <= 0 {
		limit = DefaultRangeTurns
	}
	hasSince, hasUntil := !opt.Since.IsZero(), !opt.Until.IsZero()
	since, until := opt.Since.UnixMilli(), opt.Until.UnixMilli()
	// Without since the range's start is known only at the end: every
	// turn of the last hour read so far is kept until then.
	defaulted := !hasSince
	profiles := map[string]*profileTrack{}
	var turns []*turnTrack
	byID := map[string]*turnTrack{}
	var first, last, lastAny int64
	var lastSeq uint64
	dropped, trimAt := false, 2*limit+4096
	err := walk(ctx, src, 1, 0, func(c *commit) error {
		lastSeq = c.Seq
		for i := range c.Events {
			ev := &c.Events[i]
			at := ev.At.UnixMilli()
			lastAny = max(lastAny, at)
			if ev.Agent != opt.Agent {
				continue
			}
			if first == 0 {
				first = at
			}
			last = max(last, at)
			if ev.Aggregate == events.AggProfile {
				p := profiles[ev.Key]
				if p == nil {
					p = &profileTrack{id: ev.Key}
					profiles[ev.Key] = p
				}
				p.fold(c.Seq, at, ev.Data)
				continue
			}
			if ts, ok := ev.Data.(events.TurnStarted); ok {
				if (hasSince && at < since) || (hasUntil && at > until) {
					continue
				}
				t := &turnTrack{requested: ts.Requested.String(), mark: TurnMark{TurnID: ts.TurnID, Session: ts.Session,
					RequestedModel: ts.Requested.String(), StartSeq: c.Seq, EndSeq: c.Seq, started: at}}
				if !defaulted && len(turns) >= limit {
					dropped = true
					continue
				}
				turns = append(turns, t)
				byID[ts.TurnID] = t
				if defaulted && len(turns) >= trimAt {
					turns, byID = trimTurns(turns, last-time.Hour.Milliseconds())
					trimAt = 2*len(turns) + 4096
				}
				continue
			}
			if ev.Aggregate != events.AggTurn {
				continue
			}
			if t := byID[ev.Key]; t != nil {
				t.fold(c.Seq, at, ev.Data)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &RangeTimeline{Agent: opt.Agent, LastSeq: lastSeq, Profiles: []ProfileLane{}, Turns: []TurnMark{}}
	if first > 0 {
		out.LedgerFirst, out.LedgerLast = formatMs(first), formatMs(last)
	}
	switch {
	case !hasUntil && first > 0:
		until = last
	case !hasUntil && hasSince:
		until = since // no event: an empty range
	case !hasUntil:
		// No event and no range asked: since and until stay absent.
		out.Profiles = lanes(profiles, 0, -1, lastAny)
		return out, nil
	}
	if !hasSince {
		since = until - time.Hour.Milliseconds()
	}
	out.Since, out.Until = formatMs(since), formatMs(until)
	for _, t := range turns {
		if t.mark.started < since || t.mark.started > until {
			continue
		}
		if len(out.Turns) == limit {
			out.Truncated = true
			break
		}
		out.Turns = append(out.Turns, t.finish())
	}
	out.Truncated = out.Truncated || dropped
	out.Profiles = lanes(profiles, since, until, lastAny)
	return out, nil
}

// trimTurns drops the turns started before from (a defaulted range keeps
// only the last hour of the ledger).
func trimTurns(turns []*turnTrack, from int64) ([]*turnTrack, map[string]*turnTrack) {
	kept := turns[:0]
	byID := map[string]*turnTrack{}
	for _, t := range turns {
		if t.mark.started >= from {
			kept = append(kept, t)
			byID[t.mark.TurnID] = t
		}
	}
	return kept, byID
}

// fold applies one of the turn's events.
func (t *turnTrack) fold(seq uint64, at int64, data events.Payload) {
	t.mark.EndSeq = seq
	ended := func(end string) {
		t.end = end
		t.mark.EndedAt = formatMs(at)
	}
	switch e := data.(type) {
	case events.AttemptStarted:
		t.mark.Attempts++
	case events.TurnSucceeded:
		ended("succeeded")
		t.mark.FinalModel, t.mark.FinalProfile = e.AnsweredBy.String(), e.ProfileID
	case events.TurnExhausted:
		ended("exhausted")
		t.mark.Reason = e.Reason
	case events.TurnStopped:
		ended("stopped")
		t.mark.Reason = e.Reason
	case events.TurnSwitched:
		ended("switched")
	}
}

func (t *turnTrack) finish() TurnMark {
	m := t.mark
	m.StartedAt = formatMs(m.started)
	m.Outcome = Classify(t.end, m.Attempts, t.requested, m.FinalModel)
	return m
}

// lanes are the profiles' windows overlapping [since, until], sorted by
// provider then id; a window still open at lastAt has no EndedAt.
func lanes(profiles map[string]*profileTrack, since, until, lastAt int64) []ProfileLane {
	out := make([]ProfileLane, 0, len(profiles))
	for _, p := range profiles {
		l := ProfileLane{ProfileID: p.id, Provider: p.provider, Windows: []ProfileWindow{}}
		all := p.done
		for _, w := range p.open {
			if w != nil {
				if w.until <= lastAt {
					w.ended = w.until
				}
				all = append(all, w)
			}
		}
		for _, w := range all {
			end := w.ended
			if end == 0 {
				end = w.until
			}
			if w.from > until || end < since {
				continue
			}
			x := *w
			x.From, x.Until = formatMs(w.from), formatMs(w.until)
			if w.ended > 0 {
				x.EndedAt = formatMs(w.ended)
			}
			l.Windows = append(l.Windows, x)
		}
		sort.SliceStable(l.Windows, func(i, j int) bool {
			a, b := l.Windows[i], l.Windows[j]
			if a.from != b.from {
				return a.from < b.from
			}
			return a.SetSeq < b.SetSeq
		})
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].ProfileID < out[j].ProfileID
	})
	return out
}

// LedgerAgents lists the agents with events on the stream: the agent of
// the last event first, then the others sorted (none: an empty ledger).
func LedgerAgents(ctx context.Context, src Source) ([]string, error) {
	all := agentSet{}
	last := ""
	err := walk(ctx, src, 1, 0, func(c *commit) error {
		for _, ev := range c.Events {
			all.add(ev.Agent)
			if ev.Agent != "" {
				last = ev.Agent
			}
		}
		return nil
	})
	if err != nil || last == "" {
		return nil, err
	}
	out := []string{last}
	for _, a := range all.sorted() {
		if a != last {
			out = append(out, a)
		}
	}
	return out, nil
}
