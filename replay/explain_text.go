package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/termtext"
)

// WriteExplanation renders x for people: the header (who, when, config,
// requested model and why, the chain), then one line per step with its
// time and offset from the turn start, details indented below, then the
// end and the notices.
func WriteExplanation(w io.Writer, x *Explanation) error {
	var b strings.Builder
	writeExplanation(&b, x, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeExplanation(b *strings.Builder, x *Explanation, in string) {
	linef(b, "%sturn %s  agent %s  session %s (%s chat)\n", in, x.TurnID, x.Agent, x.Session, x.Chat)
	linef(b, "%s  started    %s under config %s (attempt limit %d, jitter seed %d)\n", in, x.StartedAt.Format(TimeLayout), x.ConfigHash, x.AttemptLimit, x.Seed)
	linef(b, "%s  requested  %s (selection source %s)\n", in, x.Requested, x.SelectionSource)
	linef(b, "%s  why        %s\n", in, x.Why)
	for i, c := range x.Chain {
		label := "chain"
		if i > 0 {
			label = ""
		}
		linef(b, "%s  %-10s %d. %s (%s)\n", in, label, c.Position, c.Model, firstNonEmpty(c.Label, c.RouteOrigin))
	}
	pin := "none"
	if x.PinnedProfile != "" {
		pin = x.PinnedProfile + " (" + x.PinSource + ")"
	}
	linef(b, "%s  pin        %s\n\n", in, pin)
	pad := strings.Repeat(" ", len("2006-01-02T15:04:05.000Z")+12)
	for _, s := range x.Steps {
		linef(b, "%s  %s %-10s %s\n", in, s.At.UTC().Format(TimeLayout), s.Offset, s.Text)
		for _, d := range s.Details {
			linef(b, "%s  %s· %s\n", in, pad, d)
		}
	}
	end := x.End
	if end == "" {
		end = "unfinished: no TurnSucceeded, TurnExhausted or TurnStopped recorded (the engine stopped mid-turn, or the stream was read before the end)"
	}
	linef(b, "\n%s  outcome    %s\n", in, end)
	if len(x.Notices) == 0 {
		linef(b, "%s  notices    none\n", in)
	}
	for i, n := range x.Notices {
		label := "notices"
		if i > 0 {
			label = ""
		}
		shown := "shown"
		if !n.Delivered {
			shown = "recorded, not shown"
		}
		linef(b, "%s  %-10s %s (%s, %s)\n", in, label, n.Text, n.Kind, shown)
	}
}

// Timeline is a session's turns and session commands over a time range,
// in stream order, with the agent-wide changes that bear on them.
type Timeline struct {
	Agent   string          `json:"agent,omitempty"`
	Session string          `json:"session"`
	From    *time.Time      `json:"from,omitempty"`
	To      *time.Time      `json:"to,omitempty"`
	Entries []TimelineEntry `json:"entries"`
}

// TimelineEntry is a session command (Kind "command": Text lists its
// events in words), a turn (Kind "turn": Turn explains it) or context
// (Kind "context": a command of the session's own agent that is not about
// the session but changes how its turns decide from then on, a stored auth
// order or an applied config; Text says it in words).
type TimelineEntry struct {
	Seq   uint64       `json:"seq"`
	At    time.Time    `json:"at"`
	Agent string       `json:"agent"`
	Kind  string       `json:"kind"`
	Text  string       `json:"text,omitempty"`
	Turn  *Explanation `json:"turn,omitempty"`
}

// ExplainTimeline explains every turn of session (of agent, "" = any)
// started within [from, to] (zero = unbounded), and the session commands
// recorded in that range, in stream order. Only the session's own events
// and its turns' belong to it; an agent-wide command (AuthOrderSet,
// ConfigApplied) of an agent the session belongs to is shown as context.
// No event of the session at all (in any range) is a [*LookupError] of
// [ErrSessionNotFound].
func ExplainTimeline(ctx context.Context, src Source, agent, session string, from, to time.Time) (*Timeline, error) {
	tl := &Timeline{Agent: agent, Session: session, Entries: []TimelineEntry{}}
	if !from.IsZero() {
		tl.From = &from
	}
	if !to.IsZero() {
		tl.To = &to
	}
	in := func(t time.Time) bool { return (from.IsZero() || !t.Before(from)) && (to.IsZero() || !t.After(to)) }
	type tkey struct{ agent, id string }
	turns := map[tkey]int{} // entry index
	turnEvs := map[tkey][]events.Event{}
	configs := map[string]json.RawMessage{}
	probes := newProbeFold()
	all, owners := agentSet{}, agentSet{}
	marks := map[string]bool{}
	// open holds the session's turns begun and not ended, by agent: a
	// prune folded while one is open is void.
	open := map[runningTurn]bool{}
	err := walk(ctx, src, 1, 0, func(c *commit) error {
		defaultMarks(c, marks)
		var cmd, ctxWords []string
		for _, ev := range c.Events {
			all.add(ev.Agent)
			if agent != "" && ev.Agent != agent {
				continue
			}
			if ca, ok := ev.Data.(events.ConfigApplied); ok {
				configs[ev.Agent+"\x00"+ca.Hash] = ca.Config
			}
			ts, started := ev.Data.(events.TurnStarted)
			if (started && ts.Session == session) || (ev.Aggregate == events.AggSession && ev.Key == session) {
				owners.add(ev.Agent)
			}
			if started && ts.Session == session {
				open[runningTurn{ev.Agent, ts.TurnID}] = true
			} else if ev.Aggregate == events.AggTurn && turnEnded(ev.Data) {
				delete(open, runningTurn{ev.Agent, ev.Key})
			}
			explained := started && ts.Session == session && in(ev.At)
			probes.fold(&ev, explained)
			if explained {
				k := tkey{ev.Agent, ts.TurnID}
				turns[k] = len(tl.Entries)
				tl.Entries = append(tl.Entries, TimelineEntry{Seq: c.Seq, At: ev.At, Agent: ev.Agent, Kind: "turn"})
			}
			id := ev.CorrelationID
			if ev.Aggregate == events.AggTurn {
				id = ev.Key
			}
			if _, ok := turns[tkey{ev.Agent, id}]; ok && id != "" {
				turnEvs[tkey{ev.Agent, id}] = append(turnEvs[tkey{ev.Agent, id}], ev)
				continue
			}
			if !in(ev.At) {
				continue
			}
			if ev.Aggregate == events.AggSession && ev.Key == session && ev.CorrelationID == "" {
				if running := openTurnOf(open, ev.Agent); running != "" && isPrune(ev.Data) {
					cmd = append(cmd, sessionWords(ev)+" — void: turn "+running+" of the session was running (begun while the prune was decided), so nothing was removed")
				} else {
					cmd = append(cmd, sessionWords(ev))
				}
			}
			if w := contextWords(ev); w != "" {
				ctxWords = append(ctxWords, w)
			}
		}
		if len(cmd) > 0 {
			tl.Entries = append(tl.Entries, TimelineEntry{Seq: c.Seq, At: c.Events[0].At, Agent: c.agent(), Kind: "command", Text: strings.Join(cmd, "; ")})
		}
		if len(ctxWords) > 0 {
			tl.Entries = append(tl.Entries, TimelineEntry{Seq: c.Seq, At: c.Events[0].At, Agent: c.agent(), Kind: "context", Text: strings.Join(ctxWords, "; ")})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(owners) == 0 {
		return nil, &LookupError{Kind: ErrSessionNotFound, ID: session, Agent: agent, Agents: all.sorted()}
	}
	// Context is kept for the agents the session belongs to; the turns'
	// entry indexes move as the others are dropped.
	kept := tl.Entries[:0]
	moved := map[int]int{}
	for i, e := range tl.Entries {
		if e.Kind == "context" && !owners[e.Agent] {
			continue
		}
		moved[i] = len(kept)
		kept = append(kept, e)
	}
	tl.Entries = kept
	for k, i := range turns {
		tc := turnContext{probeAt: probes.snaps[k.agent+"\x00"+k.id], configs: configs, defaultMarks: marks}
		tl.Entries[moved[i]].Turn = explainWith(k.agent, k.id, turnEvs[k], tc)
	}
	return tl, nil
}

// contextWords says an agent-wide command that bears on every session of
// its agent in words ("" for any other event).
func contextWords(ev events.Event) string {
	switch e := ev.Data.(type) {
	case events.AuthOrderSet:
		return orderWords(e)
	case events.ConfigApplied:
		return "config " + e.Hash + " applied"
	}
	return ""
}

// sessionWords says a session command's event in words.
func sessionWords(ev events.Event) string {
	switch e := ev.Data.(type) {
	case events.SessionModelSelected:
		return fmt.Sprintf("model %s selected (source %s)", e.Model, e.Source)
	case events.SessionModelCleared:
		return fmt.Sprintf("selection %s cleared (%s)", e.Previous, e.Cause)
	case events.SessionAuthPinned:
		return fmt.Sprintf("pin → %s (%s)", e.ProfileID, e.Source)
	case events.SessionAuthUnpinned:
		return fmt.Sprintf("pin %s cleared (%s)", e.ProfileID, e.Cause)
	case events.SessionReset:
		return "/" + e.Kind
	case events.CompactionCompleted:
		return fmt.Sprintf("compaction #%d completed", e.CompactionCount)
	case events.SessionPruned:
		return fmt.Sprintf("session pruned by maintenance: no activity since %s, longer than %s",
			time.UnixMilli(e.LastActiveAt).UTC().Format(time.RFC3339), ageText(e.PruneAfterMs))
	case events.FallbackNoticeStateChanged:
		return fmt.Sprintf("fallback-notice state: selected %s, active %s", e.Selected, firstNonEmpty(e.Active, "none"))
	}
	return ev.Type
}

// turnEnded reports whether p ends its turn.
func turnEnded(p events.Payload) bool {
	switch p.(type) {
	case events.TurnSucceeded, events.TurnExhausted, events.TurnStopped, events.TurnSwitched:
		return true
	}
	return false
}

func isPrune(p events.Payload) bool {
	_, ok := p.(events.SessionPruned)
	return ok
}

// runningTurn names a turn begun and not ended (agent, turn id).
type runningTurn struct{ agent, id string }

// openTurnOf is the first (by id) of agent's open turns in open, "" when
// none.
func openTurnOf(open map[runningTurn]bool, agent string) string {
	first := ""
	for k := range open {
		if k.agent == agent && (first == "" || k.id < first) {
			first = k.id
		}
	}
	return first
}

// ageText says a maintenance age: whole days as "30d", else a duration.
func ageText(ms int64) string {
	const day = 24 * 3600 * 1000
	if ms > 0 && ms%day == 0 {
		return fmt.Sprintf("%dd", ms/day)
	}
	return msDur(ms)
}

// orderWords says an AuthOrderSet in words.
func orderWords(o events.AuthOrderSet) string {
	by := ""
	if o.By != "" {
		by = " (by " + o.By + ")"
	}
	if len(o.ProfileIDs) == 0 {
		return fmt.Sprintf("stored auth order of %s cleared%s", o.Provider, by)
	}
	return fmt.Sprintf("stored auth order of %s → %s%s", o.Provider, strings.Join(o.ProfileIDs, ", "), by)
}

// WriteTimeline renders tl for people: each command on one line, each
// turn explained in full.
func WriteTimeline(w io.Writer, tl *Timeline) error {
	var b strings.Builder
	rng := "from the beginning"
	if tl.From != nil {
		rng = "from " + tl.From.UTC().Format(TimeLayout)
	}
	if tl.To != nil {
		rng += " to " + tl.To.UTC().Format(TimeLayout)
	} else {
		rng += " to the end"
	}
	linef(&b, "session %s, %s: %d %s\n", tl.Session, rng, len(tl.Entries), plural(len(tl.Entries), "entry"))
	for _, e := range tl.Entries {
		b.WriteString("\n")
		switch e.Kind {
		case "command":
			linef(&b, "%s  command (agent %s, seq %d): %s\n", e.At.UTC().Format(TimeLayout), e.Agent, e.Seq, e.Text)
			continue
		case "context":
			linef(&b, "%s  context (agent %s, seq %d, agent-wide): %s\n", e.At.UTC().Format(TimeLayout), e.Agent, e.Seq, e.Text)
			continue
		}
		writeExplanation(&b, e.Turn, "")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// linef writes format to b with each string or Stringer value made one
// line ([termtext.Args]): stored text (keys, an auth order's by, provider
// error previews, notices) never adds a line of its own, and never
// reaches a terminal as a control character, whatever a ledger holds.
func linef(b *strings.Builder, format string, args ...any) {
	fmt.Fprintf(b, format, termtext.Args(args)...)
}

// WriteJSON writes v as one indented JSON document (HTML not escaped).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
