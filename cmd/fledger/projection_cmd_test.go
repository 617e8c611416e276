package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The QA repro: a projection database built from ledger A is never mixed
// with ledger B — not via --db, not via --nats (whose default database is
// its own file) — and the error names the complete rebuild command.
func TestProjections_DatabaseIsTiedToItsLedger(t *testing.T) {
	dataA, dataB := t.TempDir(), t.TempDir()
	scen := func(name string) string { return filepath.Join("..", "..", "fixtures", "scenarios", name) }
	if out, err := runFledger(t, "--data", dataA, "run", scen("incident-day.yaml")); err != nil {
		t.Fatalf("run A: %v\n%s", err, out)
	}
	if out, err := runFledger(t, "--data", dataB, "run", scen("rate-limit-storm.yaml")); err != nil {
		t.Fatalf("run B: %v\n%s", err, out)
	}
	turnsA, err := runFledger(t, "--data", dataA, "turns", "--json")
	if err != nil {
		t.Fatalf("turns A: %v\n%s", err, turnsA)
	}
	turnsB, err := runFledger(t, "--data", dataB, "turns", "--json")
	if err != nil {
		t.Fatalf("turns B: %v\n%s", err, turnsB)
	}
	if turnsA == turnsB || turnsA == "" || turnsB == "" {
		t.Fatalf("the two ledgers should have different turns:\nA %.300s\nB %.300s", turnsA, turnsB)
	}

	// A's database read against B's stream through --db: refused.
	mixed := filepath.Join(t.TempDir(), "copy.sqlite")
	copyFile(t, filepath.Join(dataA, projections.DefaultFile), mixed)
	out, err := runFledger(t, "--data", dataB, "sessions", "--db", mixed)
	if !errors.Is(err, projections.ErrOtherLedger) {
		t.Fatalf("sessions with A's database against B: %v\n%s", err, out)
	}
	want := "`fledger --data " + dataB + " stats --rebuild --db " + mixed + "`"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "first event ") {
		t.Fatalf("message %q lacks %q", err, want)
	}
	// … and the pasted command rebuilds it from B.
	if out, err := runFledger(t, "--data", dataB, "stats", "--rebuild", "--db", mixed); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if got, err := runFledger(t, "--data", dataB, "turns", "--json", "--db", mixed); err != nil || got != turnsB {
		t.Fatalf("after the rebuild: %v\n%s\nwant\n%s", err, got, turnsB)
	}

	// --nats: B served on a port, queried from A's data directory.
	ctx := context.Background()
	stB, err := events.Open(ctx, events.WithDataDir(dataB), events.WithListen(0), events.WithSyncAlways(false, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer stB.Close()
	url := stB.ClientURL()
	// A's directory holds no credentials for B's listener: refused, with
	// the way in; B's read-only user (password from B's directory, by
	// environment) reads.
	if _, err := runFledger(t, "--data", dataA, "--nats", url, "turns"); !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), "--nats-user "+events.ReaderUser) {
		t.Fatalf("anonymous --nats: %v", err)
	}
	rc, err := os.ReadFile(filepath.Join(dataB, events.ReaderCredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	var reader struct{ Password string }
	if err := json.Unmarshal(rc, &reader); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLEDGER_NATS_PASSWORD", reader.Password)
	got, err := runFledger(t, "--data", dataA, "--nats", url, "--nats-user", events.ReaderUser, "turns", "--json")
	if err != nil || got != turnsB {
		t.Fatalf("--nats turns: %v\n%s\nwant B's\n%s", err, got, turnsB)
	}
	natsDB := filepath.Join(dataA, natsDBFile(url))
	if _, err := os.Stat(natsDB); err != nil {
		t.Fatalf("--nats default database: %v", err)
	}
	if got, err := runFledger(t, "--data", dataA, "turns", "--json"); err != nil || got != turnsA {
		t.Fatalf("A's own projections after the --nats query: %v\n%s", err, got)
	}

	// A's database under the --nats default name: refused, and the hint
	// carries --nats.
	copyFile(t, filepath.Join(dataA, projections.DefaultFile), natsDB)
	_ = os.Remove(natsDB + "-wal")
	_ = os.Remove(natsDB + "-shm")
	_, err = runFledger(t, "--data", dataA, "--nats", url, "--nats-user", events.ReaderUser, "decisions")
	want = "`fledger --data " + dataA + " --nats " + url + " --nats-user " + events.ReaderUser + " stats --rebuild`"
	if !errors.Is(err, projections.ErrOtherLedger) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want ErrOtherLedger with %q", err, want)
	}
	if out, err := runFledger(t, "--data", dataA, "--nats", url, "--nats-user", events.ReaderUser, "stats", "--rebuild"); err != nil {
		t.Fatalf("--nats rebuild: %v\n%s", err, out)
	}
	if got, err := runFledger(t, "--data", dataA, "--nats", url, "--nats-user", events.ReaderUser, "turns", "--json"); err != nil || got != turnsB {
		t.Fatalf("--nats turns after the rebuild: %v\n%s", err, got)
	}
}

func TestProjections_RebuildCommandAndNATSFile(t *testing.T) {
	g := &globals{DataDir: "/srv/my data", DataSet: true, NATSURL: "nats://u:secret@Host:4222, nats://h2:4222", NATSCreds: "/etc/c.creds"}
	pf := &projectionFlags{}
	got := pf.rebuildCommand(g)
	want := "fledger --data '/srv/my data' --nats 'nats://u:xxxxx@Host:4222, nats://h2:4222' --nats-creds /etc/c.creds stats --rebuild"
	if got != want {
		t.Fatalf("rebuild command\n %s\nwant\n %s", got, want)
	}
	if strings.Contains(got, "secret") {
		t.Fatal("password printed")
	}
	// Without --data, a --nats database is in the user cache directory:
	// the command leaves --data out so it rebuilds that same file.
	g.DataSet = false
	if got, want := pf.rebuildCommand(g), "fledger --nats 'nats://u:xxxxx@Host:4222, nats://h2:4222' --nats-creds /etc/c.creds stats --rebuild"; got != want {
		t.Fatalf("rebuild command without --data\n %s\nwant\n %s", got, want)
	}
	a, b := natsDBFile("nats://u:p@host:4222"), natsDBFile("nats://HOST:4222")
	if a != b || !strings.HasPrefix(a, "projections-nats-") || !strings.HasSuffix(a, ".sqlite") {
		t.Fatalf("%s vs %s", a, b)
	}
	if natsDBFile("nats://other:4222") == a {
		t.Fatal("different servers share a database file")
	}
}
