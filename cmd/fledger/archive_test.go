package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natsserver"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/projections"
)

// The archiving runbook of docs/operations.md ("Archiving and long
// history"), step by step, with the server API calls the nats CLI makes
// for `nats backup stream` and `nats backup restore stream`:
//
//  1. a hot backup of a running embedded ledger, taken through its
//     listener as the writer of nats-writer.json while three scenario
//     runs append turns;
//  2. the backup restored into a fresh directory (as `nats-server -js -sd
//     DIR` and `nats backup restore stream`) and mounted with --data: a
//     prefix of the ledger (its export lies between the exports before
//     and after), replay --verify passes, and every turn stored before it
//     was taken explains as on the live ledger;
//  3. rotation: the final backup of the period, restored and mounted,
//     reads exactly as the live ledger did (explain of every turn, replay
//     --verify, export --format jsonl); the live stream is deleted
//     (allowed: deny_delete refuses deleting messages, not the stream),
//     and a fresh stream with --first-seq continuing its sequences, on
//     which turns go on and replay --verify passes; the archive still
//     explains the old turns and the export of both periods has every
//     sequence once.
func TestArchive_BackupMountAndContinue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scen, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	live := t.TempDir()
	mustRun(t, "--data", live, "run", scen)
	atBackup := ledgerViews(t, live)

	// 1. Hot backup through the listener while turns go on.
	st, err := events.Open(ctx, events.WithDataDir(live), events.WithListen(0))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.LoadFile(scen)
	if err != nil {
		t.Fatal(err)
	}
	writing := make(chan error, 1)
	go func() {
		for range 3 {
			if _, err := scenario.Run(ctx, st, sc, scenario.Options{}); err != nil {
				writing <- err
				return
			}
		}
		writing <- nil
	}()
	backup := filepath.Join(t.TempDir(), "backup-hot")
	withWriter(t, live, func(nc *nats.Conn) { snapshotStream(ctx, t, nc, backup) })
	if err := <-writing; err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// 2. Mount the backup: a prefix of the ledger that verifies, holding
	// every turn of before it was taken as it was.
	atEnd := ledgerViews(t, live)
	mount := restoreInto(ctx, t, backup)
	hot := ledgerViews(t, mount)
	if !strings.HasSuffix(hot.verify, "every recorded decision follows from its inputs\n") {
		t.Errorf("verify of the hot backup:\n%s", hot.verify)
	}
	if !strings.HasPrefix(atEnd.export, hot.export) || !strings.HasPrefix(hot.export, atBackup.export) {
		t.Errorf("export of the hot backup:\n%s\nis not between the export before it\n%s\nand the one after\n%s", hot.export, atBackup.export, atEnd.export)
	}
	for k, w := range atBackup.explain {
		if hot.explain[k] != w {
			t.Errorf("explain %s on the hot backup:\n%s\nwant\n%s", k, hot.explain[k], w)
		}
	}

	// 3. Rotation: final backup, stream deleted, fresh stream continuing
	// the sequences.
	last := lastSeq(t, atEnd)
	final := filepath.Join(t.TempDir(), "backup-period-1")
	withServer(t, live, func(nc *nats.Conn) {
		snapshotStream(ctx, t, nc, final)
		// nats stream rm FLEDGER -f: deny_delete is about messages.
		jsRequest(ctx, t, nc, "$JS.API.STREAM.DELETE."+events.StreamName, nil, nil)
	})
	// The projection database belongs to the archived stream (it refuses
	// another ledger): moved aside with it; the archive rebuilds its own.
	if err := os.Rename(filepath.Join(live, projections.DefaultFile), filepath.Join(t.TempDir(), "projections-period-1.sqlite")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "--data", live, "--first-seq", strconv.FormatUint(last+1, 10), "run", scen)
	next := ledgerViews(t, live)
	if !strings.HasPrefix(next.verify, "verified 21 commits (55 events, 5 turns) up to seq "+strconv.FormatUint(last+21, 10)+":") {
		t.Errorf("verify of the fresh stream:\n%s", next.verify)
	}
	if first := firstSeq(t, next); first <= last {
		t.Errorf("the fresh stream's first decision record is at seq %d, want after the archive's last %d", first, last)
	}
	archive := restoreInto(ctx, t, final)
	if got := ledgerViews(t, archive); !equalViews(t, got, atEnd) {
		t.Fatal("the mounted archive reads differently from the ledger before rotation")
	}
}

// views are what the runbook checks on a ledger: explain of every turn
// (by agent and turn), replay --verify and the JSONL export.
type views struct {
	explain map[string]string
	verify  string
	export  string
}

func ledgerViews(t *testing.T, data string) views {
	t.Helper()
	v := views{explain: map[string]string{}, verify: withoutSnapshotLines(mustRun(t, "--data", data, "replay", "--verify")),
		export: mustRun(t, "--data", data, "export", "--format", "jsonl")}
	for _, line := range strings.Split(strings.TrimSpace(mustRun(t, "--data", data, "turns", "--json")), "\n") {
		var turn struct{ Agent, TurnID string }
		if err := json.Unmarshal([]byte(line), &turn); err != nil {
			t.Fatalf("turns --json: %v: %s", err, line)
		}
		v.explain[turn.Agent+" "+turn.TurnID] = mustRun(t, "--data", data, "explain", turn.TurnID, "--agent", turn.Agent)
	}
	if len(v.explain) == 0 || v.export == "" {
		t.Fatalf("ledger %s: %d turns, export %q", data, len(v.explain), v.export)
	}
	return v
}

// withoutSnapshotLines drops replay --verify's lines on the engine
// snapshots: a backup holds the stream only (the runbook leaves the
// snapshot store behind), so the archive verifies its decisions without
// them.
func withoutSnapshotLines(verify string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(verify, "\n") {
		if !strings.HasPrefix(line, "snapshot of agent ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func equalViews(t *testing.T, got, want views) bool {
	t.Helper()
	ok := true
	if got.verify != want.verify {
		t.Errorf("replay --verify:\n%s\nwant\n%s", got.verify, want.verify)
		ok = false
	}
	if got.export != want.export {
		t.Errorf("export --format jsonl:\n%s\nwant\n%s", got.export, want.export)
		ok = false
	}
	if len(got.explain) != len(want.explain) {
		t.Errorf("%d turns, want %d", len(got.explain), len(want.explain))
		ok = false
	}
	for k, w := range want.explain {
		if got.explain[k] != w {
			t.Errorf("explain %s:\n%s\nwant\n%s", k, got.explain[k], w)
			ok = false
		}
	}
	return ok
}

// lastSeq is the last sequence replay --verify names ("… up to seq N:").
func lastSeq(t *testing.T, v views) uint64 {
	t.Helper()
	_, after, _ := strings.Cut(v.verify, " up to seq ")
	n, err := strconv.ParseUint(strings.SplitN(after, ":", 2)[0], 10, 64)
	if err != nil {
		t.Fatalf("no last sequence in %q", v.verify)
	}
	return n
}

// firstSeq is the seq of the first exported decision record.
func firstSeq(t *testing.T, v views) uint64 {
	t.Helper()
	var rec struct{ Seq uint64 }
	if err := json.Unmarshal([]byte(strings.SplitN(v.export, "\n", 2)[0]), &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Seq
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := runFledger2(t, args...)
	if err != nil {
		t.Fatalf("fledger %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// withWriter connects to the listener of the embedded server running on
// data as the writer of its nats-writer.json (`nats --context
// DATA/nats-writer.json`).
func withWriter(t *testing.T, data string, fn func(*nats.Conn)) {
	t.Helper()
	c, err := natsserver.ReadContext(data, natsserver.WriterFile)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(c.URL, nats.UserInfo(c.User, c.Password))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fn(nc)
}

// withServer runs a plain embedded server on data (`nats-server -js -sd
// DATA`) while fn uses a connection to it.
func withServer(t *testing.T, data string, fn func(*nats.Conn)) {
	t.Helper()
	srv, err := natsserver.Start(natsserver.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	nc, err := nats.Connect("", nats.InProcessServer(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fn(nc)
}

// The nats CLI's backups (`nats backup stream FLEDGER DIR --no-consumers`,
// `nats backup restore stream DIR`; jsm.go's SnapshotToDirectory and
// RestoreSnapshotFromDirectory) drive the server's snapshot API; these
// helpers do the same steps and write the same directory: the stream's
// config and state in backup.json and the server's archive in
// stream.arc.s2. The runbook was also run with the nats CLI 0.5.0 itself.
const (
	backupMeta    = "backup.json"
	backupArchive = "stream.arc.s2"
)

// apiError is a JetStream API response's error, if any.
type apiError struct {
	Error *struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
}

// jsRequest sends a JetStream API request and decodes its response into
// out, failing the test on an error response (an empty answer is a
// restore chunk's acknowledgement).
func jsRequest(ctx context.Context, t *testing.T, nc *nats.Conn, subject string, body []byte, out any) {
	t.Helper()
	m, err := nc.RequestWithContext(ctx, subject, body)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	if len(m.Data) == 0 && out == nil {
		return // a restore chunk's acknowledgement
	}
	var ae apiError
	if err := json.Unmarshal(m.Data, &ae); err != nil || ae.Error != nil {
		t.Fatalf("%s: %s (%v)", subject, m.Data, err)
	}
	if out != nil {
		if err := json.Unmarshal(m.Data, out); err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
	}
}

// snapshotStream is `nats backup stream FLEDGER DIR --no-consumers`: the
// server sends the archive in chunks (each acknowledged as it comes: flow
// control) and ends with an empty 204 message.
func snapshotStream(ctx context.Context, t *testing.T, nc *nats.Conn, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, backupArchive))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := make(chan error, 1)
	inbox := nats.NewInbox()
	sub, err := nc.Subscribe(inbox, func(m *nats.Msg) {
		if len(m.Data) == 0 {
			if st := m.Header.Get("Status"); st != "" && !strings.Contains(st, "204") {
				done <- fmt.Errorf("snapshot ended with %s %s", st, m.Header.Get("Description"))
				return
			}
			done <- nil
			return
		}
		if m.Reply != "" {
			_ = m.Respond(nil)
		}
		if _, err := f.Write(m.Data); err != nil {
			select {
			case done <- err:
			default:
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	req, _ := json.Marshal(map[string]any{"deliver_subject": inbox, "no_consumers": true, "chunk_size": 128 << 10})
	var meta struct {
		Config json.RawMessage `json:"config"`
		State  json.RawMessage `json:"state"`
	}
	jsRequest(ctx, t, nc, "$JS.API.STREAM.SNAPSHOT."+events.StreamName, req, &meta)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("backup: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("backup: %v", ctx.Err())
	}
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, backupMeta), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// restoreInto is `nats backup restore stream DIR` on a fresh server
// directory (`nats-server -js -sd DATA`), returned for --data once the
// server stopped: the config and state are sent, then the archive in
// chunks of 64 KiB (each acknowledged), then an empty message, answered
// with the restored stream.
func restoreInto(ctx context.Context, t *testing.T, backup string) string {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join(backup, backupMeta))
	if err != nil {
		t.Fatal(err)
	}
	arc, err := os.ReadFile(filepath.Join(backup, backupArchive))
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	withServer(t, data, func(nc *nats.Conn) {
		var r struct {
			DeliverSubject string `json:"deliver_subject"`
		}
		jsRequest(ctx, t, nc, "$JS.API.STREAM.RESTORE."+events.StreamName, meta, &r)
		for off := 0; off < len(arc); off += 64 << 10 {
			jsRequest(ctx, t, nc, r.DeliverSubject, arc[off:min(off+64<<10, len(arc))], nil)
		}
		var restored struct {
			State struct {
				LastSeq uint64 `json:"last_seq"`
			} `json:"state"`
		}
		jsRequest(ctx, t, nc, r.DeliverSubject, nil, &restored)
		if restored.State.LastSeq == 0 {
			t.Fatal("restore: the restored stream is empty")
		}
	})
	return data
}
