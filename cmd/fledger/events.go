package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fledger/fledger/events"
	"github.com/spf13/cobra"
)

func init() { register(newEventsCmd) }

func newEventsCmd(g *globals) *cobra.Command {
	var (
		from    uint64
		asJSON  bool
		follow  bool
		agent   string
		typ     string
		maxCols int
	)
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the ledger's events in stream order",
		Long: `Print every event on the stream, in order, from --from (a stream
sequence, default 1). A table for people, or --json for JSON Lines: one
envelope per line with its stream sequence ("seq") and position in its
commit ("index"). --follow keeps printing new events as they are appended
(Ctrl-C to stop). A message that cannot be decoded is reported with its
stream sequence and the command exits 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == 0 {
				from = 1
			}
			if typ != "" {
				reg := events.NewCatalogRegistry()
				if _, ok := reg.Version(typ); !ok {
					for _, t := range reg.Types() {
						if strings.EqualFold(t, typ) {
							return fmt.Errorf("--type %q is not an event type; did you mean %s?", typ, t)
						}
					}
					return fmt.Errorf("--type %q is not an event type; see docs/events.md (e.g. AttemptFailed, FallbackStepped)", typ)
				}
			}
			ctx := cmd.Context()
			st, err := openStore(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			seq := st.Read(ctx, from)
			if follow {
				seq = st.Watch(ctx, from)
			}
			out := cmd.OutOrStdout()
			var tw *table
			if !asJSON {
				tw = newTable(out)
				fmt.Fprintln(tw, "SEQ\tAT\tAGENT\tTYPE\tKEY\tPAYLOAD")
			}
			n := 0
			for ev, err := range seq {
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					if tw != nil {
						tw.Flush()
					}
					return err
				}
				if agent != "" && ev.Agent != agent || typ != "" && ev.Type != typ {
					continue
				}
				n++
				if asJSON {
					if err := writeEventJSON(out, ev); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", ev.Seq, ev.At.UTC().Format("2006-01-02T15:04:05.000Z"), cellText(ev.Agent), cellText(ev.Type), cellText(ev.Key), cellText(clip(string(ev.Payload), maxCols)))
				if follow {
					tw.Flush()
				}
			}
			if tw != nil {
				tw.Flush()
				if n == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "no events")
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&from, "from", 1, "first stream sequence to print")
	f.BoolVar(&asJSON, "json", false, "JSON Lines output")
	f.BoolVarP(&follow, "follow", "f", false, "keep printing new events")
	f.StringVar(&agent, "agent", "", "only this agent's events")
	f.StringVar(&typ, "type", "", "only events of this type (e.g. AttemptFailed)")
	f.IntVar(&maxCols, "width", 100, "truncate the payload column to this many characters (0 = no limit)")
	return cmd
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

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if n <= 0 || len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
