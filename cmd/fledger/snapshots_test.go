package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// The way out of a snapshot verify finds wrong: verify names the command,
// `snapshots rm` removes it, and the ledger verifies without it; list
// shows what is stored.
func TestSnapshots_ListRemoveAndVerify(t *testing.T) {
	data := t.TempDir()
	mustRun(t, "--data", data, "run", filepath.Join("..", "..", "fixtures", "scenarios", "chain-overload.yaml"))
	var snap snapshotJSON
	if err := json.Unmarshal([]byte(mustRun(t, "--data", data, "snapshots", "list", "--json")), &snap); err != nil || snap.Seq == 0 || snap.Bytes == 0 {
		t.Fatalf("snapshots list --json: %+v, %v", snap, err)
	}
	if out := mustRun(t, "--data", data, "snapshots", "list"); !strings.Contains(out, snap.Agent) {
		t.Fatalf("snapshots list:\n%s", out)
	}

	// A damaged snapshot in its place (written as the engine would, at
	// the same sequence).
	func() {
		ctx := context.Background()
		st, err := events.Open(ctx, events.WithDataDir(data), events.WithSyncAlways(false, 0))
		testutil.NoError(t, err)
		defer st.Close()
		_, err = st.(events.SnapshotDeleter).DeleteSnapshot(ctx, snap.Agent)
		testutil.NoError(t, err)
		_, err = st.(events.Snapshots).SaveSnapshot(ctx, snap.Agent, snap.Seq, []byte("not a snapshot"))
		testutil.NoError(t, err)
	}()
	out, _, err := runFledger2(t, "--data", data, "replay", "--verify")
	hint := "  to drop it: stop every serve of agent \"" + snap.Agent + "\", run `fledger snapshots rm " + snap.Agent + "` on this ledger, and start them again (they fold from the stream's first sequence)\n"
	if err == nil || !strings.Contains(out, hint) {
		t.Fatalf("replay --verify with a damaged snapshot: %v\n%s\nwant the line %q", err, out, hint)
	}

	if got, want := mustRun(t, "--data", data, "snapshots", "rm", snap.Agent), "removed the snapshot of agent \""+snap.Agent+"\" (seq "+strconv.FormatUint(snap.Seq, 10)+")\n"; got != want {
		t.Fatalf("snapshots rm: %q, want %q", got, want)
	}
	if v := mustRun(t, "--data", data, "replay", "--verify"); strings.Contains(v, "snapshot") {
		t.Fatalf("verify after the removal still names a snapshot:\n%s", v)
	}
	if out, errOut, err := runFledger2(t, "--data", data, "snapshots", "list"); err != nil || out != "" || errOut != "no snapshot stored\n" {
		t.Fatalf("snapshots list after the removal: %v, stdout %q, stderr %q", err, out, errOut)
	}
	if _, _, err := runFledger2(t, "--data", data, "snapshots", "rm", snap.Agent, "nobody"); err == nil ||
		!strings.Contains(err.Error(), `no snapshot stored for agent "`+snap.Agent+`", "nobody"`) {
		t.Fatalf("snapshots rm of agents without one: %v", err)
	}
}
