package projections

import (
	"context"

	"github.com/fledger/fledger/events"
)

// agentSpans is the agent_spans table: one row per agent (the empty
// agent included), the time of its first event and the latest time of
// its events (envelope times, Unix ms) and the sequence of its last
// commit. It folds every event type the projector knows. The timeline's
// ledger_first and ledger_last are an agent's row; the latest lastAt of
// all rows is the ledger's last event time.
var agentSpans = register(&table{
	name: "agent_spans", order: 90, key: 1, withoutRowID: true,
	columns:    []column{text("agent"), millis("firstAt"), millis("lastAt"), integer("lastSeq")},
	onConflict: "ON CONFLICT (agent) DO UPDATE SET lastAt = max(lastAt, excluded.lastAt), lastSeq = excluded.lastSeq",
	foldsAll:   true,
	rows:       cacheOf{newRows: func(st prepared) rows { return &spanRows{st: st} }},
})

// spanRows are the agents met since the last flush; the upsert keeps a
// stored firstAt and the later lastAt.
type spanRows struct {
	st    prepared
	spans map[string]*agentSpan
	order []string
}

type agentSpan struct {
	first, last int64
	seq         uint64
}

func (c *spanRows) fold(_ context.Context, ev *events.Event) error {
	at := ev.At.UnixMilli()
	s := c.spans[ev.Agent]
	if s == nil {
		if c.spans == nil {
			c.spans = map[string]*agentSpan{}
		}
		s = &agentSpan{first: at, last: at}
		c.spans[ev.Agent] = s
		c.order = append(c.order, ev.Agent)
	}
	s.last, s.seq = max(s.last, at), ev.Seq
	return nil
}

func (c *spanRows) snapshot(w *writer) {
	for _, a := range c.order {
		s := c.spans[a]
		w.putArgs(&c.st, a, s.first, s.last, int64(s.seq))
	}
	clear(c.spans)
	c.order = c.order[:0]
}

func (c *spanRows) written() {}
