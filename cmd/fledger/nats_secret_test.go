package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// A password in --nats or NATS_URL is never printed: not in a connection
// error, not in serve's start-up line, not in the refusal of
// --nats-listen; the user is kept and the password shown as xxxxx. The
// running serve's projection database is refused as a rebuild target
// while it runs, and rebuilt once it stopped.
func TestNATSPassword_NeverPrinted_LiveDatabaseNotDeleted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	writer, hp := listenerWriter(t, ctx, "Writer-SECRET-1")
	wrong := "nats://fledger:Wrong-SECRET-3@" + hp
	data := t.TempDir()

	for _, c := range []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"wrong password", "", []string{"--nats", wrong, "stats"}, "events: connect to nats://fledger:xxxxx@" + hp + ": nats: Authorization Violation"},
		{"wrong password in NATS_URL", wrong, []string{"stats"}, "(the server is NATS_URL=nats://fledger:xxxxx@" + hp + "; unset it"},
		{"URL that does not parse", "", []string{"--nats", "nats://fledger:Bad#SECRET-4@" + hp, "stats"},
			"events: connect to nats://fledger:xxxxx@" + hp + ": the URL nats://fledger:xxxxx@" + hp + " does not parse"},
		{"--nats-listen with --nats", "", []string{"--nats", writer, "serve", "--nats-listen", "4999"},
			"--nats-listen opens a port on the embedded NATS server, but --nats (or NATS_URL) names an existing server nats://fledger:xxxxx@" + hp + ": drop one of them"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("NATS_URL", c.env)
			out, err := runFledger(t, append([]string{"--data", data}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to hold %q\n%s", err, c.want, out)
			}
			if strings.Contains(err.Error()+out, "SECRET") {
				t.Fatalf("the password is printed: %v\n%s", err, out)
			}
		})
	}

	p := startCLI(t, filepath.Join(t.TempDir(), "stdout"), nil, "--data", data, "--nats", writer, "serve", "--http", "127.0.0.1:0", "--no-micro")
	p.waitServing(t)
	if log := p.stderr.String(); !strings.Contains(log, "nats=nats://fledger:xxxxx@"+hp+" ") || strings.Contains(log, "SECRET") {
		t.Fatalf("start-up log:\n%s", log)
	}
	live := filepath.Join(data, natsDBFile(writer))
	inUse := "projections: database in use by another process, not deleted: " + live +
		" is open in another process (a running `fledger serve` or `fledger view`?); stop that process first, or write the rebuild to another file"
	for _, args := range [][]string{{"replay", "--out", live}, {"stats", "--rebuild"}} {
		out, err := runFledger(t, append([]string{"--data", data, "--nats", writer}, args...)...)
		if !errors.Is(err, projections.ErrInUse) || err.Error() != inUse {
			t.Fatalf("%v while serve runs: %v\n%s", args, err, out)
		}
	}
	p.interrupt(t)
	if log := p.stderr.String(); strings.Contains(log, "SECRET") {
		t.Fatalf("serve's log shows the password:\n%s", log)
	}
	out, err := runFledger(t, "--data", data, "--nats", writer, "stats", "--rebuild")
	if err != nil || !strings.Contains(out, "projection database deleted: rebuilding from the start of the stream") || strings.Contains(out, "SECRET") {
		t.Fatalf("rebuild after serve stopped: %v\n%s", err, out)
	}
}

// listenerWriter starts an embedded server with a loopback listener whose
// writer has password pass (closed at the test's end) and returns the
// writer's URL, password included, and the listener's host:port.
func listenerWriter(t *testing.T, ctx context.Context, pass string) (url, hostPort string) {
	t.Helper()
	st, err := events.Open(ctx, events.WithDataDir(t.TempDir()), events.WithListen(0), events.WithListenPasswords(pass, pass+"-reader"))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	hostPort = strings.TrimPrefix(st.ClientURL(), "nats://")
	return "nats://fledger:" + pass + "@" + hostPort, hostPort
}
