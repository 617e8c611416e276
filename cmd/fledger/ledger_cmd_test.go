package main

import (
	"context"
	"encoding/json"
	"errors"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// readCommands are the commands that read an existing ledger (and auth
// order, which adds to one): none of them creates a ledger.
var readCommands = [][]string{
	{"events"},
	{"stats"},
	{"stats", "--no-catch-up"},
	{"stats", "--rebuild"},
	{"sessions"},
	{"turns"},
	{"turns", "--at", "2026-03-02T09:05:00Z"},
	{"decisions"},
	{"replay"},
	{"replay", "--verify"},
	{"explain", "some-turn"},
	{"export"},
	{"auth", "order", "get"},
	{"auth", "order", "clear", "--provider", "openai"},
}

// entries lists what dir holds ("" when it does not exist).
func entries(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// A read command pointed at a mistyped --data, an empty directory, or run
// in an empty current directory (the default ./fledger-data) is refused
// with errNoLedger saying which directory and what creates a ledger; it
// creates nothing — no ledger, no projection database.
func TestReadCommands_RefuseADataDirWithoutLedger(t *testing.T) {
	t.Setenv("NATS_URL", "")
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, args := range readCommands {
		missing := filepath.Join(t.TempDir(), "fledger-dat") // a typo: does not exist
		empty := t.TempDir()
		for _, c := range []struct {
			name, dir string
			flags     []string
			want      string
		}{
			{"mistyped --data", missing, []string{"--data", missing}, "<absent>"},
			{"empty --data", empty, []string{"--data", empty}, ""},
			{"empty current directory", filepath.Join(cwd, "fledger-data"), nil, "<absent>"},
		} {
			out, err := runFledger(t, append(c.flags, args...)...)
			if !errors.Is(err, errNoLedger) || !strings.Contains(err.Error(), c.dir) || !strings.Contains(err.Error(), "`fledger run`, `serve` and `config apply` create a ledger") {
				t.Errorf("%s %v: %v\n%s", c.name, args, err, out)
			}
			if got := entries(t, c.dir); got != c.want {
				t.Errorf("%s %v left %s in %s", c.name, args, got, c.dir)
			}
			if got := entries(t, cwd); got != "" {
				t.Fatalf("%s %v left %s in the current directory", c.name, args, got)
			}
		}
	}
	// A ledger with no events yet (serve or config apply created it) is
	// a ledger: read, not refused.
	data := t.TempDir()
	st, err := events.Open(context.Background(), events.WithDataDir(data))
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	if out, err := runFledger(t, "--data", data, "turns"); err != nil {
		t.Fatalf("an empty ledger: %v\n%s", err, out)
	}
}

// NATS_URL stands for --nats (as for the nats CLI): run in an empty
// directory, a read command reads that server's ledger, and the --nats
// projection database goes to the user cache directory, not the current
// one. --nats "" forces the embedded server.
func TestReadCommands_NATSURLAndNoStrayFiles(t *testing.T) {
	dataB := t.TempDir()
	scen := filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml")
	scen, _ = filepath.Abs(scen)
	if out, err := runFledger(t, "--data", dataB, "run", scen); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	want, err := runFledger(t, "--data", dataB, "turns", "--json")
	if err != nil || want == "" {
		t.Fatalf("turns: %v\n%s", err, want)
	}
	st, err := events.Open(context.Background(), events.WithDataDir(dataB), events.WithListen(0), events.WithSyncAlways(false, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	url := st.ClientURL()
	// The embedded listener requires a user: the read-only one it wrote
	// into its data directory, when it did.
	if b, err := os.ReadFile(filepath.Join(dataB, "nats-reader.json")); err == nil {
		var c struct{ User, Password string }
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		url = strings.Replace(url, "://", "://"+neturl.UserPassword(c.User, c.Password).String()+"@", 1)
	}

	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", t.TempDir()) // os.UserCacheDir on macOS
	t.Setenv("NATS_URL", url)
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, args := range [][]string{{"turns", "--json"}, {"stats"}, {"events"}, {"decisions"}, {"replay", "--verify"}} {
		out, err := runFledger(t, args...)
		if err != nil {
			t.Fatalf("NATS_URL %v: %v\n%s", args, err, out)
		}
		if args[0] == "turns" && out != want {
			t.Fatalf("NATS_URL turns:\n%s\nwant the server's\n%s", out, want)
		}
		if got := entries(t, cwd); got != "" {
			t.Fatalf("NATS_URL %v left %s in the current directory", args, got)
		}
	}
	d, err := natsCacheDir()
	if err != nil || !strings.HasPrefix(d, cache) {
		t.Fatalf("cache dir %s (%v), want under %s", d, err, cache)
	}
	if _, err := os.Stat(filepath.Join(d, natsDBFile(url))); err != nil {
		t.Fatalf("--nats projection database: %v", err)
	}
	// With --data given, the --nats database is under it, as before.
	data := t.TempDir()
	if out, err := runFledger(t, "--data", data, "stats"); err != nil {
		t.Fatalf("--data with NATS_URL: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(data, natsDBFile(url))); err != nil {
		t.Fatalf("--nats database under --data: %v", err)
	}
	// --nats "" overrides NATS_URL: the embedded server on ./fledger-data,
	// which holds no ledger here.
	if _, err := runFledger(t, "--nats", "", "turns"); !errors.Is(err, errNoLedger) {
		t.Fatalf(`--nats "": %v, want errNoLedger`, err)
	}
	if got := entries(t, cwd); got != "" {
		t.Fatalf(`--nats "" left %s in the current directory`, got)
	}
}

// `auth order set|clear` refuse a provider no configured profile has
// (clear too), naming it and the configured providers; nothing is
// recorded.
func TestAuthOrder_UnknownProviderRefused(t *testing.T) {
	t.Setenv("NATS_URL", "")
	data := t.TempDir()
	cfg, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "configs", "example.yaml"))
	if out, err := runFledger(t, "--data", data, "config", "apply", cfg); err != nil {
		t.Fatalf("config apply: %v\n%s", err, out)
	}
	before, err := runFledger(t, "--data", data, "events", "--json")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"auth", "order", "clear", "--provider", "no.such>provider"},
		{"auth", "order", "clear", "--provider", "*"},
		{"auth", "order", "clear", "--provider", "anthr.opic"},
		{"auth", "order", "set", "--provider", "anthropic2", "anthropic:work"},
	} {
		out, err := runFledger(t, append([]string{"--data", data}, args...)...)
		if !errors.Is(err, policy.ErrBadOrder) || !strings.Contains(err.Error(), `"`+args[4]+`"`) || !strings.Contains(err.Error(), "configured providers: anthropic") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	if after, _ := runFledger(t, "--data", data, "events", "--json"); after != before {
		t.Fatalf("refused orders were recorded:\n%s", after)
	}
	if out, err := runFledger(t, "--data", data, "auth", "order", "clear", "--provider", "anthropic"); err != nil {
		t.Fatalf("a configured provider: %v\n%s", err, out)
	}
}

// A projection command on a stream it cannot reach fails before it
// touches the projection database: none is created, and --rebuild deletes
// none.
func TestProjections_UnreachableStreamTouchesNoDatabase(t *testing.T) {
	t.Setenv("NATS_URL", "")
	const url = "nats://127.0.0.1:1"
	data := t.TempDir()
	if _, err := runFledger(t, "--data", data, "--nats", url, "stats"); err == nil {
		t.Fatal("stats on an unreachable server succeeded")
	}
	if got := entries(t, data); got != "" {
		t.Fatalf("stats on an unreachable server left %s", got)
	}
	db := filepath.Join(data, natsDBFile(url))
	if err := os.WriteFile(db, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runFledger(t, "--data", data, "--nats", url, "turns", "--rebuild"); err == nil {
		t.Fatal("turns --rebuild on an unreachable server succeeded")
	}
	if b, err := os.ReadFile(db); err != nil || string(b) != "kept" {
		t.Fatalf("turns --rebuild on an unreachable server: database %q, %v; want it kept", b, err)
	}
}
