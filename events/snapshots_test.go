package events_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// TestSnapshots_Stores: both stores keep one snapshot per agent, refuse
// to replace it with one not newer, list the agents and say when there is
// none.
func TestSnapshots_Stores(t *testing.T) {
	mem, err := events.OpenMemory()
	testutil.NoError(t, err)
	defer mem.Close()
	for _, tc := range []struct {
		name string
		st   events.Store
	}{{"memory", mem}, {"jetstream", testutil.Store(t, testutil.NoFsync)}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ss := tc.st.(events.Snapshots)
			if agents, err := ss.SnapshotAgents(ctx); err != nil || len(agents) != 0 {
				t.Fatalf("agents before any save: %v, %v", agents, err)
			}
			if _, _, err := ss.LoadSnapshot(ctx, "main"); !errors.Is(err, events.ErrNoSnapshot) {
				t.Fatalf("load before any save: %v, want ErrNoSnapshot", err)
			}
			for _, s := range []struct {
				agent string
				seq   uint64
				data  string
				saved bool
			}{
				{"main", 5, "five", true},
				{"main", 3, "three", false},
				{"main", 5, "five again", false},
				{"main", 9, "nine", true},
				{"team a/b", 2, "other agent", true},
			} {
				saved, err := ss.SaveSnapshot(ctx, s.agent, s.seq, []byte(s.data))
				testutil.NoError(t, err)
				if saved != s.saved {
					t.Fatalf("save %s at %d: saved %v, want %v", s.agent, s.seq, saved, s.saved)
				}
			}
			for agent, want := range map[string]struct {
				data string
				seq  uint64
			}{"main": {"nine", 9}, "team a/b": {"other agent", 2}} {
				data, seq, err := ss.LoadSnapshot(ctx, agent)
				testutil.NoError(t, err)
				if string(data) != want.data || seq != want.seq {
					t.Fatalf("load %s: %q at %d, want %q at %d", agent, data, seq, want.data, want.seq)
				}
			}
			agents, err := ss.SnapshotAgents(ctx)
			testutil.NoError(t, err)
			if !reflect.DeepEqual(agents, []string{"main", "team a/b"}) {
				t.Fatalf("agents %q", agents)
			}

			// Removed: no longer loaded nor listed, a second removal has
			// nothing to remove, and a save after it stores again.
			sd := tc.st.(events.SnapshotDeleter)
			seq, err := sd.DeleteSnapshot(ctx, "main")
			if err != nil || seq != 9 {
				t.Fatalf("delete main: seq %d, %v; want 9", seq, err)
			}
			if _, _, err := ss.LoadSnapshot(ctx, "main"); !errors.Is(err, events.ErrNoSnapshot) {
				t.Fatalf("load after delete: %v, want ErrNoSnapshot", err)
			}
			if _, err := sd.DeleteSnapshot(ctx, "main"); !errors.Is(err, events.ErrNoSnapshot) {
				t.Fatalf("second delete: %v, want ErrNoSnapshot", err)
			}
			if agents, err := ss.SnapshotAgents(ctx); err != nil || !reflect.DeepEqual(agents, []string{"team a/b"}) {
				t.Fatalf("agents after delete: %q, %v", agents, err)
			}
			if saved, err := ss.SaveSnapshot(ctx, "main", 4, []byte("four")); err != nil || !saved {
				t.Fatalf("save after delete: saved %v, %v", saved, err)
			}
			if data, seq, err := ss.LoadSnapshot(ctx, "main"); err != nil || string(data) != "four" || seq != 4 {
				t.Fatalf("load after the new save: %q at %d, %v", data, seq, err)
			}
		})
	}
}

// A store that never saved a snapshot (no object store yet) has none to
// delete.
func TestSnapshots_DeleteWithoutBucket(t *testing.T) {
	st := testutil.Store(t, testutil.NoFsync)
	if _, err := st.(events.SnapshotDeleter).DeleteSnapshot(context.Background(), "main"); !errors.Is(err, events.ErrNoSnapshot) {
		t.Fatalf("delete on a store without a snapshot bucket: %v, want ErrNoSnapshot", err)
	}
}
