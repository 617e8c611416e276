package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// startupAgent is the engine the start-up rows start: one of fill's two
// agents (the other's commits are skipped, as on a shared stream).
const startupAgent = "gw-0"

// startupResult is one ledger's engine start-ups.
type startupResult struct {
	Events                int
	LastSeq               uint64
	FromOne, FromSnapshot time.Duration
	SnapshotSeq           uint64
	SnapshotBytes         int
	StateHeap             int64
}

// startup measures engine.New (until ready to decide: the fold has
// reached the stream's last sequence) on st, holding evs events: once
// from sequence 1 (saving snapshots in the background as serve does),
// then from the snapshot that engine saved on Close (best of 3). The
// state's heap is the live heap after a GC with the last engine started
// from the snapshot open (the same state as the fold's), minus the live
// heap after it is closed and collected: that Close stores nothing, so the
// server's caches are the same in both (the first engine's Close stores
// a snapshot, which the server keeps in memory too).
func startup(ctx context.Context, st events.Store, evs int) (startupResult, error) {
	r := startupResult{Events: evs}
	quiet := engine.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	last, err := st.LastSeq(ctx, "")
	if err != nil {
		return r, err
	}
	r.LastSeq = last
	settleHeap() // what the phases before let go of in the background
	t := time.Now()
	e, err := engine.New(ctx, st, startupAgent, quiet)
	if err != nil {
		return r, fmt.Errorf("engine start from sequence 1: %w", err)
	}
	r.FromOne = time.Since(t)
	if e.StartedFrom() != 0 {
		e.Close()
		return r, fmt.Errorf("engine start from sequence 1: a snapshot was stored already")
	}
	e.Close() // saves a snapshot at the stream's end
	for i := range 3 {
		t := time.Now()
		e, err := engine.New(ctx, st, startupAgent, quiet)
		if err != nil {
			return r, fmt.Errorf("engine start from snapshot: %w", err)
		}
		d := time.Since(t)
		r.SnapshotSeq = e.StartedFrom()
		if i == 2 {
			// Its Close saves nothing (it folded nothing of its own), so
			// the store holds the same before and after.
			with := heapLive()
			e.Close()
			r.StateHeap = int64(with) - int64(heapLive())
		} else {
			e.Close()
		}
		if r.FromSnapshot == 0 || d < r.FromSnapshot {
			r.FromSnapshot = d
		}
	}
	if r.SnapshotSeq == 0 {
		return r, fmt.Errorf("engine start: no snapshot was loaded")
	}
	data, _, err := st.(events.Snapshots).LoadSnapshot(ctx, startupAgent)
	if err != nil {
		return r, err
	}
	r.SnapshotBytes = len(data)
	return r, nil
}

// startupRows measures engine start-up on a fresh 10k-event ledger and on
// large, the rebuild phase's stream (fill's events), from a snapshot and
// from sequence 1, with the bar: the large ledger from its snapshot within
// 2× the small one's.
func (b *runner) startupRows(large events.Store, largeEvents int) error {
	n := b.sz.startup
	if n == 0 {
		n = 1_000
	}
	small, err := b.open("startup-small", false)
	if err != nil {
		return err
	}
	defer small.Close()
	b.progress("fill: generating %d events (start-up, small ledger)", n)
	fr, err := fill(b.ctx, small, n)
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	var res [2]startupResult
	for i, c := range []struct {
		st  events.Store
		evs int
	}{{small, fr.Events}, {large, largeEvents}} {
		b.progress("engine start-up, %d events", c.evs)
		if res[i], err = startup(b.ctx, c.st, c.evs); err != nil {
			return err
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	for _, r := range res {
		b.rep.Rows = append(b.rep.Rows,
			barRow(Measure{Name: fmt.Sprintf("engine start-up (ready to decide), %s events, from snapshot", count(r.Events)), Value: ms(r.FromSnapshot), Unit: "ms",
				Detail: fmt.Sprintf("snapshot at seq %d of %d, %d B; best of 3", r.SnapshotSeq, r.LastSeq, r.SnapshotBytes)}, nil, "", true),
			barRow(Measure{Name: fmt.Sprintf("engine start-up (ready to decide), %s events, from sequence 1", count(r.Events)), Value: ms(r.FromOne), Unit: "ms",
				Detail: fmt.Sprintf("%d commits folded (agent %s's, the other agent's skipped)", r.LastSeq, startupAgent)}, nil, "", true))
	}
	s, l := res[0], res[1]
	b.rep.Rows = append(b.rep.Rows,
		barRow(Measure{Name: fmt.Sprintf("start-up from snapshot, %s vs %s events", count(l.Events), count(s.Events)), Value: ms(l.FromSnapshot), Unit: "ms"},
			&Measure{Name: fmt.Sprintf("start-up from snapshot, %s events", count(s.Events)), Value: ms(s.FromSnapshot), Unit: "ms"},
			"≤ 2×", l.FromSnapshot <= 2*s.FromSnapshot))
	if l.StateHeap <= 0 {
		b.rep.Notes = append(b.rep.Notes, fmt.Sprintf("engine state heap after folding %s events: below the GC's noise", count(l.Events)))
		return nil
	}
	b.rep.Rows = append(b.rep.Rows,
		barRow(Measure{Name: fmt.Sprintf("engine state heap after folding %s events", count(l.Events)), Value: float64(l.StateHeap) / (1 << 20), Unit: "MiB",
			Detail: fmt.Sprintf("heap after GC with the engine (started from its snapshot) open minus after it is closed (%d finished turns kept); %s events: %.1f MiB",
				engine.DefaultFinishedTurns, count(s.Events), float64(s.StateHeap)/(1<<20))}, nil, "", true))
	return nil
}

// count writes an event count as 10k, 1M, 1.5M.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 < 50_000:
		return fmt.Sprintf("%dM", (n+50_000)/1_000_000)
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%dk", (n+500)/1_000)
	}
	return fmt.Sprint(n)
}
