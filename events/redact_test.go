package events_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://fledger:SECRETPW@127.0.0.1:4344", "nats://fledger:xxxxx@127.0.0.1:4344"},
		{"fledger:SECRETPW@127.0.0.1:4344", "fledger:xxxxx@127.0.0.1:4344"},
		{"nats://s3cr3t-token@host:4222", "nats://xxxxx@host:4222"},
		{"nats://u:@host:4222", "nats://u:xxxxx@host:4222"},
		{"nats://u:pa#s/s@w@host:4222", "nats://u:xxxxx@host:4222"},
		{"tls://u:p%40ss@host:4222, nats://h2:4222,nats://v:pw2@h3", "tls://u:xxxxx@host:4222, nats://h2:4222,nats://v:xxxxx@h3"},
		{"  a:b@h", "  a:xxxxx@h"},
	} {
		if got := events.RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A connection error never prints the URL's password: not for a refused
// password, nor for a URL that does not parse (Go's parse error quotes
// pieces of it); errors.Is still sees the cause.
func TestOpen_ConnectErrorHidesThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := events.Open(ctx, events.WithDataDir(t.TempDir()), events.WithListen(0), events.WithListenPasswords("writer-pw-1", "reader-pw-1"))
	testutil.NoError(t, err)
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.ClientURL(), "nats://")
	for _, c := range []struct {
		name, url, want string
		is              error
	}{
		{"wrong password", "nats://fledger:SECRETPW@" + hostPort,
			"events: connect to nats://fledger:xxxxx@" + hostPort + ": nats: Authorization Violation", nats.ErrAuthorization},
		{"wrong token", "nats://SECRETPW@" + hostPort,
			"events: connect to nats://xxxxx@" + hostPort + ": nats: Authorization Violation", nats.ErrAuthorization},
		{"unparsable password", "nats://fledger:SEC#RETPW@" + hostPort,
			"events: connect to nats://fledger:xxxxx@" + hostPort + ": the URL nats://fledger:xxxxx@" + hostPort + " does not parse; percent-encode the characters / ? # @ % in a password or token", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := events.Open(ctx, events.WithURL(c.url), events.WithTimeout(5*time.Second))
			if err == nil {
				_ = st.Close()
				t.Fatal("connected")
			}
			if err.Error() != c.want {
				t.Fatalf("error\n%q\nwant\n%q", err, c.want)
			}
			if strings.Contains(err.Error(), "SEC") {
				t.Fatalf("error %q shows the password", err)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("error %v is not %v", err, c.is)
			}
		})
	}
}
