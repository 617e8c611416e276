package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
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
	hint := "  to drop it: stop every serve of agent \"" + snap.Agent + "\", run `fledger snapshots rm " + snap.Agent + "` with this command's --data or --nats flags (and the writer's credentials), and start them again (they fold from the stream's first sequence)\n"
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

// rm refuses an empty id before connecting, removes an agent named twice
// once, prints JSON lines as it removes, and over --nats as the reader
// says it needs the writer's credentials, removing nothing.
func TestSnapshots_RmInputAndCredentials(t *testing.T) {
	ctx := context.Background()
	st, err := events.Open(ctx, events.WithDataDir(t.TempDir()), events.WithSyncAlways(false, 0),
		events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	testutil.NoError(t, err)
	defer st.Close()
	for _, a := range []string{"a.b", "c d"} {
		_, err := st.(events.Snapshots).SaveSnapshot(ctx, a, 7, []byte("x"))
		testutil.NoError(t, err)
	}
	url := st.(interface{ ClientURL() string }).ClientURL()
	as := func(user, pw string, args ...string) (string, string, error) {
		return runFledger2(t, append([]string{"--nats", url, "--nats-user", user, "--nats-password", pw, "snapshots"}, args...)...)
	}

	if _, _, err := as(events.WriterUser, natstest.WriterPassword, "rm", "a.b", ""); err == nil || !strings.Contains(err.Error(), "empty agent id") {
		t.Fatalf("rm with an empty id: %v", err)
	}
	if _, _, err := as(events.ReaderUser, natstest.ReaderPassword, "rm", "a.b"); err == nil || !strings.Contains(err.Error(), "needs the writer's credentials") {
		t.Fatalf("rm as the reader: %v", err)
	}
	if seq, _, err := st.(events.SnapshotStat).StatSnapshot(ctx, "a.b"); err != nil || seq != 7 {
		t.Fatalf("after the reader's rm: seq %d, %v; want the snapshot kept at 7", seq, err)
	}
	out, errOut, err := as(events.WriterUser, natstest.WriterPassword, "rm", "--json", "a.b", "c d", "a.b")
	if err != nil || out != "{\"agent\":\"a.b\",\"seq\":7}\n{\"agent\":\"c d\",\"seq\":7}\n" || !strings.Contains(errOut, "restart each now") {
		t.Fatalf("rm --json as the writer: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	if agents, err := st.(events.Snapshots).SnapshotAgents(ctx); err != nil || len(agents) != 0 {
		t.Fatalf("left after rm: %q, %v", agents, err)
	}
}

func TestShellArg(t *testing.T) {
	for in, want := range map[string]string{
		"main":                "main",
		"scn-chain-75d91a23":  "scn-chain-75d91a23",
		"team a":              "'team a'",
		"$HOME":               "'$HOME'",
		"a*":                  "'a*'",
		"it's":                `'it'\''s'`,
		"":                    "''",
		"user@example.com/x=": "user@example.com/x=",
	} {
		if got := shellArg(in); got != want {
			t.Errorf("shellArg(%q) = %s, want %s", in, got, want)
		}
	}
}
