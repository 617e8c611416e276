package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
	"github.com/spf13/cobra"
)

func init() { register(newEventsCmd) }

func newEventsCmd(g *globals) *cobra.Command {
	var fl eventsFlags
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the ledger's events in stream order",
		Long: `Print every event on the stream, in order, from --from-seq N (a
stream sequence, inclusive; default 1) through --to-seq N (inclusive;
default the end, also with --follow). A table for people, or --json for
JSON Lines: one envelope per line with its stream sequence ("seq") and
position in its commit ("index"). --follow keeps printing new events as
they are appended (Ctrl-C to stop).

A stored message that is not a fledger commit (it cannot be decoded) is
quarantined: printed in its place as QUARANTINED with its subject, size
and why (with --json an object {"seq", "subject", "size", "quarantined":
true, "reason"}), and a run of sequences missing inside the stream as
MISSING ({"seq", "last_seq", "missing": true}); both are summed up on
stderr and the command still exits 0.

--turn ID lists exactly that turn's commits, whole: every commit one of
whose events has the turn as its correlation id or is a turn event keyed
by it — on the turn's subject and on its profiles' (an attempt's outcome
is stored under its profile). --session KEY lists the commits whose
events name the session (its own events; the TurnStarted, notices and
fallback steps of its turns) and every commit of a turn it started that
the listing read (from --from-seq on). Both decide by the decoded events,
never by message headers, so a ledger written before fledger wrote
headers lists the same; given both, a commit must match both. Turn ids
and session keys are an agent's own: when several agents have commits
of the id, a note on stderr names them (--agent picks one).
Undecodable messages and missing sequences cannot be matched: they are
only summed up on stderr. With the nats CLI, each message's Fledger-Turn
header finds them too (docs/events.md, "The stream with the nats CLI").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return untilInterrupted(cmd.Context(), fl.follow, "the listing", fl.run(cmd, g))
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&fl.from, "from-seq", 1, "first stream sequence to print (inclusive)")
	f.Uint64Var(&fl.to, "to-seq", 0, "last stream sequence to print (inclusive; default: the stream's end)")
	f.BoolVar(&fl.asJSON, "json", false, "JSON Lines output")
	f.BoolVarP(&fl.follow, "follow", "f", false, "keep printing new events")
	f.StringVar(&fl.agent, "agent", "", "only this agent's events")
	f.StringVar(&fl.typ, "type", "", "only events of this type (e.g. AttemptFailed)")
	f.StringVar(&fl.turn, "turn", "", "only the commits of this turn (its id)")
	f.StringVar(&fl.session, "session", "", "only the commits of this session (its key) and of its turns")
	f.IntVar(&fl.maxCols, "width", 100, "truncate the payload column to this many characters (0 = no limit)")
	deprecatedAlias(cmd, "from", "from-seq")
	_ = cmd.RegisterFlagCompletionFunc("type", completeValues(eventTypeValues()...))
	return withMomentRule(cmd)
}

// eventsFlags are fledger events' flags.
type eventsFlags struct {
	from    uint64
	to      uint64
	asJSON  bool
	follow  bool
	agent   string
	typ     string
	turn    string
	session string
	maxCols int
	// agents are the agents of the commits --turn or --session matched.
	agents []string
}

// run prints the events the flags ask for: it checks --type, reads (or
// with --follow watches) the stream from --from-seq, prints each event that
// passes the filters (print), and sums up on stderr what it read past.
func (fl *eventsFlags) run(cmd *cobra.Command, g *globals) error {
	if err := checkToSeq(cmd, fl.to); err != nil {
		return err
	}
	var askedFrom uint64 // 0: not asked
	if cmd.Flags().Changed("from-seq") || cmd.Flags().Changed("from") {
		askedFrom = max(fl.from, 1)
	}
	if fl.from == 0 {
		fl.from = 1
	}
	if fl.to > 0 && fl.to < fl.from {
		return fmt.Errorf("--to-seq %d is before --from-seq %d", fl.to, fl.from)
	}
	if err := checkEventType(fl.typ); err != nil {
		return err
	}
	if err := atLeast("--width", fl.maxCols, 0, "the payload column's width", "no limit"); err != nil {
		return err
	}
	ctx := cmd.Context()
	st, err := openLedger(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	if !fl.follow { // following waits for an agent's first events too
		if err := ledgerAgentKnown(ctx, st, fl.agent); err != nil {
			return err
		}
	}
	// Said first: a --follow never ends by itself. The ledger is read
	// (two round trips) only when a range was asked for.
	if askedFrom > 0 || fl.to > 0 {
		if l, err := st.Ledger(ctx); err == nil {
			archivedRangeNote(cmd.ErrOrStderr(), "events", l, askedFrom, fl.to)
		}
	}
	var seq iter.Seq2[events.Event, error]
	switch {
	case fl.turn != "" || fl.session != "":
		// Whole commits, to decide which are the turn's or session's.
		commits := readCommits(st.Read(ctx, fl.from))
		if fl.follow {
			commits = followCommits(ctx, st, fl.from)
		}
		seq = fl.matching(commits)
	case fl.follow:
		seq = st.Watch(ctx, fl.from)
	default:
		seq = st.Read(ctx, fl.from)
	}
	out := cmd.OutOrStdout()
	var tw *table
	if !fl.asJSON {
		tw = newTable(out)
		if fl.follow {
			// Rows are printed as they come: widths that fit most rows
			// (a sequence, a time, an agent, an event type, a UUID).
			tw = newStreamTable(out, 6, 24, 8, 26, 36)
		}
		fmt.Fprintln(tw, "SEQ\tAT\tAGENT\tTYPE\tKEY\tPAYLOAD")
	}
	n, bad, err := fl.print(ctx, seq, out, tw)
	if err != nil {
		return err
	}
	name := "events"
	if fl.turn != "" || fl.session != "" {
		name = "events --turn/--session" // not shown in place: they match neither
	}
	if tw != nil {
		tw.Flush()
		if n == 0 {
			shown := bad
			if name != "events" {
				shown = nil
			}
			fmt.Fprintln(cmd.ErrOrStderr(), noEventsText(shown))
		}
	}
	warnQuarantined(cmd.ErrOrStderr(), name, bad)
	if len(fl.agents) > 1 {
		// Turn ids and session keys are an agent's own: another agent's
		// turn of the same id is another turn.
		fmt.Fprintf(cmd.ErrOrStderr(), "fledger events: note: agents %s each have commits of this turn or session id; --agent picks one\n", cellText(strings.Join(fl.agents, ", ")))
	}
	return nil
}

// readCommits groups seq's events into their commits (the events of one
// stored message, which share a Seq and come in a row); an error is
// passed on alone, after the commit before it.
func readCommits(seq iter.Seq2[events.Event, error]) iter.Seq2[[]events.Event, error] {
	return func(yield func([]events.Event, error) bool) {
		var cur []events.Event
		for ev, err := range seq {
			if len(cur) > 0 && (err != nil || ev.Seq != cur[0].Seq) {
				if !yield(cur, nil) {
					return
				}
				cur = nil
			}
			if err != nil {
				if !yield(nil, err) {
					return
				}
				continue
			}
			cur = append(cur, ev)
		}
		if len(cur) > 0 {
			yield(cur, nil)
		}
	}
}

func appendNewAgent(list []string, a string) []string {
	if slices.Contains(list, a) {
		return list
	}
	return append(list, a)
}

// followCommits is [events.Store].Follow from from as readCommits' commits:
// an undecodable message or a gap as its *events.DecodeError.
func followCommits(ctx context.Context, st events.Store, from uint64) iter.Seq2[[]events.Event, error] {
	return func(yield func([]events.Event, error) bool) {
		for c, err := range st.Follow(ctx, events.FollowOptions{From: from}) {
			switch {
			case err != nil:
				yield(nil, err)
				return
			case c.Err != nil:
				if !yield(nil, c.Err) {
					return
				}
			case len(c.Events) > 0:
				if !yield(c.Events, nil) {
					return
				}
			}
		}
	}
}

// matching yields the events of the commits of --turn and --session, in
// order, and every error (print sums up undecodable messages). A commit
// is the turn's when [events.TurnsOf] names it; the session's when
// [events.SessionsOf] names it or it is a commit of one of the session's
// turns (those of the commits naming the session, read before).
func (fl *eventsFlags) matching(commits iter.Seq2[[]events.Event, error]) iter.Seq2[events.Event, error] {
	sessionTurns := map[string]bool{}
	return func(yield func(events.Event, error) bool) {
		for c, err := range commits {
			if err != nil {
				if !yield(events.Event{}, err) {
					return
				}
				continue
			}
			turns := events.TurnsOf(c)
			if fl.turn != "" && !slices.Contains(turns, fl.turn) {
				continue
			}
			if fl.session != "" {
				ok := slices.Contains(events.SessionsOf(c), fl.session)
				// A turn id is its agent's own.
				agent := c[0].Agent + "\x00"
				if ok {
					for _, t := range turns {
						sessionTurns[agent+t] = true
					}
				}
				for _, t := range turns {
					ok = ok || sessionTurns[agent+t]
				}
				if !ok {
					continue
				}
			}
			if fl.agent == "" || c[0].Agent == fl.agent {
				fl.agents = appendNewAgent(fl.agents, c[0].Agent)
			}
			for _, ev := range c {
				if !yield(ev, nil) {
					return
				}
			}
		}
	}
}

// checkEventType refuses a --type that is not a catalog event type,
// suggesting the type it names in another case when there is one.
func checkEventType(typ string) error {
	if typ == "" {
		return nil
	}
	reg := events.NewCatalogRegistry()
	if _, ok := reg.Version(typ); ok {
		return nil
	}
	for _, t := range reg.Types() {
		if strings.EqualFold(t, typ) {
			return fmt.Errorf("--type %q is not an event type; did you mean %s?", typ, t)
		}
	}
	return fmt.Errorf("--type %q is not an event type; see docs/events.md (e.g. AttemptFailed, FallbackStepped)", typ)
}

// print writes each event of seq that passes --agent and --type to out,
// as a JSON line or a row of tw (nil with --json), flushed per row with
// --follow. A message that cannot be decoded is printed in its place and
// kept in bad; any other read error ends the listing (the context ending
// ends it quietly). n counts the events printed.
func (fl *eventsFlags) print(ctx context.Context, seq iter.Seq2[events.Event, error], out io.Writer, tw *table) (int, []projections.Quarantined, error) {
	n := 0
	var bad []projections.Quarantined
	for ev, err := range seq {
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			var de *events.DecodeError
			if errors.As(err, &de) && de.Seq != 0 {
				if fl.to > 0 && de.Seq > fl.to {
					break
				}
				bad = append(bad, projections.QuarantinedOf(de))
				if fl.turn != "" || fl.session != "" {
					continue // it matches no turn or session
				}
				if err := writeQuarantined(out, tw, de, fl.asJSON); err != nil {
					return n, bad, err
				}
				if tw != nil && fl.follow {
					tw.Flush()
				}
				continue
			}
			if tw != nil {
				tw.Flush()
			}
			return n, bad, err
		}
		if fl.to > 0 && ev.Seq > fl.to {
			break
		}
		if fl.agent != "" && ev.Agent != fl.agent || fl.typ != "" && ev.Type != fl.typ {
			continue
		}
		n++
		if fl.asJSON {
			if err := writeEventJSON(out, ev); err != nil {
				return n, bad, err
			}
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", ev.Seq, ev.At.UTC().Format("2006-01-02T15:04:05.000Z"), cellText(ev.Agent), cellText(ev.Type), cellText(ev.Key), cellText(clip(string(ev.Payload), fl.maxCols)))
		if fl.follow {
			tw.Flush()
		}
	}
	return n, bad, nil
}

// eventLine is one --json line: the envelope plus where it is stored.
type eventLine struct {
	Seq   uint64 `json:"seq"`
	Index int    `json:"index"`
	events.Envelope
}

func writeEventJSON(w io.Writer, ev events.Event) error {
	b, err := json.Marshal(eventLine{Seq: ev.Seq, Index: ev.Index, Envelope: ev.Envelope})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// quarantinedLine is the --json line of a message that is not a fledger
// commit, or of a run of missing sequences.
type quarantinedLine struct {
	Seq         uint64 `json:"seq"`
	LastSeq     uint64 `json:"last_seq,omitempty"`
	Subject     string `json:"subject,omitempty"`
	Size        int    `json:"size"`
	Quarantined bool   `json:"quarantined,omitempty"`
	Missing     bool   `json:"missing,omitempty"`
	Reason      string `json:"reason"`
}

// writeQuarantined prints de in the event list: a JSON line, or a table
// row flagged QUARANTINED or MISSING.
func writeQuarantined(out io.Writer, tw *table, de *events.DecodeError, asJSON bool) error {
	if asJSON {
		l := quarantinedLine{Seq: de.Seq, Subject: de.Subject, Size: de.Size, Reason: de.Reason()}
		if de.Gap() {
			l.LastSeq, l.Missing = de.Through, true
		} else {
			l.Quarantined = true
		}
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		_, err = out.Write(append(b, '\n'))
		return err
	}
	if de.Gap() {
		fmt.Fprintf(tw, "%d\t-\t-\tMISSING\t-\t%s missing from the stream\n", de.Seq, events.GapText(de.Seq, de.Through))
		return nil
	}
	fmt.Fprintf(tw, "%d\t-\t-\tQUARANTINED\t%s\tnot a fledger commit (%d bytes): %s\n", de.Seq, cellText(de.Subject), de.Size, cellText(de.Reason()))
	return nil
}

// noEventsText is the summary of a listing without events whose rows
// were only shown (stored messages that are not fledger commits, runs of
// missing sequences): "no events" alone when there were none.
func noEventsText(shown []projections.Quarantined) string {
	var msgs, gaps int
	for _, q := range shown {
		if q.Kind == projections.QuarantineMissing {
			gaps++
		} else {
			msgs++
		}
	}
	var parts []string
	if msgs > 0 {
		what := " that is not a fledger commit"
		if msgs > 1 {
			what = " that are not fledger commits"
		}
		parts = append(parts, plural(msgs, "stored message")+what)
	}
	if gaps > 0 {
		parts = append(parts, plural(gaps, "run")+" of missing sequences")
	}
	if len(parts) == 0 {
		return "no events"
	}
	return "no events, only " + strings.Join(parts, " and ") + " (shown above)"
}

// maxWarned is how many quarantined messages a warning names one by one.
const maxWarned = 20

// warnQuarantined sums up on w the quarantined messages and missing
// sequences a command read past (nothing when there are none), naming
// the first maxWarned messages.
func warnQuarantined(w io.Writer, cmd string, bad []projections.Quarantined) {
	var msgs, gaps []string
	for _, q := range bad {
		if q.Kind == projections.QuarantineMissing {
			gaps = append(gaps, events.GapText(q.Seq, q.LastSeq))
		} else {
			// Subject and reason hold the stored message's own text.
			msgs = append(msgs, fmt.Sprintf("seq %d (subject %s, %d bytes): %s", q.Seq, cellText(q.Subject), q.Size, cellText(q.Reason)))
		}
	}
	if len(msgs) > 0 {
		what := "is not a fledger commit"
		if len(msgs) > 1 {
			what = "are not fledger commits"
		}
		done := "quarantined and skipped"
		if cmd == "events" {
			done = "shown in place" // events prints every stored message
		}
		fmt.Fprintf(w, "fledger %s: warning: %s %s, %s:\n", cmd, plural(len(msgs), "stored message"), what, done)
		for i, m := range msgs {
			if i == maxWarned {
				fmt.Fprintf(w, "  … and %d more (fledger events --json lists every one)\n", len(msgs)-maxWarned)
				break
			}
			fmt.Fprintf(w, "  %s\n", m)
		}
	}
	if len(gaps) > 0 {
		fmt.Fprintf(w, "fledger %s: warning: missing from the stream (it denies deletes: damaged storage?): %s\n", cmd, strings.Join(gaps, "; "))
	}
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if n <= 0 || len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
