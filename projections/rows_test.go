package projections

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

// A deleted row leaves the keyed cache once its flush committed, as a
// pruned session leaves the engine's memory, however large the bound; a
// session that came back after its prune in the same batch stays cached
// with its new row, and is then deleted and leaves at the next flush.
func TestKeyedRows_DeletedRowLeavesTheCacheOnceWritten(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := NewProjector(db, WithCacheRows(1<<30))
	if err := p.prepare(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.closeStmts()
	c := p.newCache(0)
	cache := c.folders[slices.Index(tables, sessionSelection)].(*keyedRows)

	at := time.UnixMilli(1_767_696_000_000).UTC()
	var seq uint64
	fold := func(s string, pl events.Payload) {
		t.Helper()
		seq++
		ev := events.New("main", s, at, pl)
		ev.Seq = seq
		if err := p.foldCommit(ctx, c, []events.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	selected := func(s string) events.Payload {
		return events.SessionModelSelected{Session: s, Model: events.ModelRef{Provider: "openai", Model: "gpt-5"}, Source: "user"}
	}
	pruned := func(s string) events.Payload {
		return events.SessionPruned{Session: s, Reason: "stale", LastActiveAt: 1, PruneAfterMs: 1}
	}
	flush := func() (cached, stored []string) {
		t.Helper()
		if err := <-p.startFlush(ctx, c, seq).done; err != nil {
			t.Fatal(err)
		}
		c.written()
		for k := range cache.rows {
			cached = append(cached, k.id)
		}
		slices.Sort(cached)
		rows, err := db.Sessions(ctx, SessionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			stored = append(stored, r.SessionKey+"@"+r.ModelOverride)
		}
		return cached, stored
	}

	for _, step := range []struct {
		name         string
		fold         func()
		cached, rows []string
	}{
		{"three sessions, one pruned and back, one pruned, one never known pruned", func() {
			fold("s-a", selected("s-a"))
			fold("s-b", selected("s-b"))
			fold("s-c", selected("s-c"))
			fold("s-a", pruned("s-a"))
			fold("s-b", pruned("s-b"))
			fold("s-b", events.SessionModelCleared{Session: "s-b"})
			fold("s-x", pruned("s-x"))
		}, []string{"s-b", "s-c"}, []string{"s-b@", "s-c@gpt-5"}},
		{"a later batch prunes both", func() {
			fold("s-b", pruned("s-b"))
			fold("s-c", pruned("s-c"))
		}, nil, nil},
	} {
		step.fold()
		cached, rows := flush()
		if !reflect.DeepEqual(cached, step.cached) || !reflect.DeepEqual(rows, step.rows) {
			t.Fatalf("%s: cached %q, rows %q; want cached %q, rows %q", step.name, cached, rows, step.cached, step.rows)
		}
	}
}
