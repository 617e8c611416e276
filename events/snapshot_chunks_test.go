package events_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/nats-io/nats.go/jetstream"
)

// chunkSubjects lists the chunk subjects the snapshot object store's
// stream holds, sorted.
func chunkSubjects(t *testing.T, st events.Store) []string {
	t.Helper()
	js, err := jetstream.New(events.ConnOf(st))
	testutil.NoError(t, err)
	str, err := js.Stream(context.Background(), "OBJ_"+events.SnapshotBucket)
	testutil.NoError(t, err)
	info, err := str.Info(context.Background(), jetstream.WithSubjectFilter("$O."+events.SnapshotBucket+".C.>"))
	testutil.NoError(t, err)
	var out []string
	for s := range info.State.Subjects {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// A chunk no object names (what a save that lost a race, or was killed
// before its meta, leaves) is purged by a later save once it is older
// than the orphan age, not before; the stored snapshots are untouched.
func TestSnapshotChunks_OrphansPurgedOnceOld(t *testing.T) {
	events.CollectSnapshotChunksEverySave(t)
	st := testutil.Store(t, testutil.NoFsync)
	ctx := testutil.Context(t)
	ss := st.(events.Snapshots)
	for _, agent := range []string{"main", "other"} {
		_, err := ss.SaveSnapshot(ctx, agent, 1, []byte("state of "+agent+" at 1"))
		testutil.NoError(t, err)
	}
	live := chunkSubjects(t, st)
	if len(live) != 2 {
		t.Fatalf("two objects: chunk subjects %v", live)
	}
	orphan := "$O." + events.SnapshotBucket + ".C.ORPHANNUIDFROMALOSTSAVE"
	js, err := jetstream.New(events.ConnOf(st))
	testutil.NoError(t, err)
	_, err = js.Publish(ctx, orphan, bytes.Repeat([]byte("x"), 4096))
	testutil.NoError(t, err)

	// Young: kept (it could be a save still writing).
	saved, err := ss.SaveSnapshot(ctx, "main", 2, []byte("state of main at 2"))
	testutil.NoError(t, err)
	if !saved || !slices.Contains(chunkSubjects(t, st), orphan) || len(chunkSubjects(t, st)) != 3 {
		t.Fatalf("after a save with a young orphan: saved %v, chunk subjects %v; want the orphan kept beside 2 objects", saved, chunkSubjects(t, st))
	}
	// Old enough: purged by the next save, and only it.
	events.PurgeOrphanSnapshotChunksAtOnce(t)
	_, err = ss.SaveSnapshot(ctx, "main", 3, []byte("state of main at 3"))
	testutil.NoError(t, err)
	if got := chunkSubjects(t, st); len(got) != 2 || slices.Contains(got, orphan) {
		t.Fatalf("after a save with an old orphan: chunk subjects %v, want the two objects' only", got)
	}
	for agent, want := range map[string]string{"main": "state of main at 3", "other": "state of other at 1"} {
		data, _, err := ss.LoadSnapshot(ctx, agent)
		if err != nil || string(data) != want {
			t.Fatalf("snapshot of %s after the purge: %q, %v; want %q", agent, data, err, want)
		}
	}
}

// Two instances saving one agent's snapshot at once, round after round
// (they cross the same save boundaries together): whatever chunks the
// races left, a later save leaves exactly one object's, and it loads.
func TestSnapshotChunks_RacingSavesLeaveOneObject(t *testing.T) {
	a, b := testutil.OpenPair(t, testutil.NoFsync)
	ctx := testutil.Context(t)
	big := func(seq int) []byte { // several chunks (128 KiB each)
		return []byte(strings.Repeat(fmt.Sprintf("state at %d;", seq), 40000))
	}
	for seq := 1; seq <= 8; seq++ {
		var wg sync.WaitGroup
		for _, st := range []events.Store{a, b} {
			wg.Go(func() {
				_, err := st.(events.Snapshots).SaveSnapshot(ctx, "main", uint64(seq), big(seq))
				if err != nil {
					t.Errorf("save at %d: %v", seq, err)
				}
			})
		}
		wg.Wait()
	}
	t.Logf("chunk subjects after the racing saves: %d", len(chunkSubjects(t, a)))
	events.PurgeOrphanSnapshotChunksAtOnce(t)
	_, err := a.(events.Snapshots).SaveSnapshot(ctx, "main", 9, big(9))
	testutil.NoError(t, err)
	if got := chunkSubjects(t, a); len(got) != 1 {
		t.Fatalf("chunk subjects after a later save: %v, want one object's", got)
	}
	data, seq, err := b.(events.Snapshots).LoadSnapshot(ctx, "main")
	if err != nil || seq != 9 || !bytes.Equal(data, big(9)) {
		t.Fatalf("snapshot after the purge: seq %d, %d bytes, %v; want seq 9, %d bytes", seq, len(data), err, len(big(9)))
	}
}
