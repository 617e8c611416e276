package events

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// syncBuffer is a bytes.Buffer safe for the connection's callback
// goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// An error the server sends outside any request goes to the store's
// logger as one warning naming the subscription — never raw on stderr,
// as nats.go's default handler prints it — and the consumer deletion a
// reader may not do is logged at debug only, whatever the user's name.
func TestAsyncErrors_LoggedNotPrinted(t *testing.T) {
	deleteDenied := fmt.Errorf("%w: %s", nats.ErrPermissionViolation, `Permissions Violation for Publish to "$JS.API.CONSUMER.DELETE.FLEDGER.abc"`)
	publishDenied := fmt.Errorf("%w: %s", nats.ErrPermissionViolation, `Permissions Violation for Publish to "fledger.main.turn.t"`)
	for _, c := range []struct {
		name string
		err  error
		want string // at warn level; "" = nothing
	}{
		{"deleting a consumer", deleteDenied, ""},
		{"publishing", publishDenied, `level=WARN msg="events: the NATS server reported an error outside a request" err="nats: permissions violation: Permissions Violation for Publish to \"fledger.main.turn.t\""` + "\n"},
		{"slow consumer", nats.ErrSlowConsumer, `level=WARN msg="events: the NATS server reported an error outside a request" err="nats: slow consumer, messages dropped"` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out syncBuffer
			l := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
			asyncErrors(l, nil)(nil, nil, c.err)
			if got := out.String(); got != c.want {
				t.Fatalf("logged %q, want %q", got, c.want)
			}
		})
	}
}

// Both ways of connecting install the handler: a reader over the
// listener that publishes where it may not has the server's answer in
// the store's log.
func TestAsyncErrors_ReaderConnectionLogs(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var wlog syncBuffer
	wst, err := Open(ctx, WithDataDir(dir), WithListen(0), WithLogger(slog.New(slog.NewTextHandler(&wlog, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer wst.Close()
	if wst.(*store).nc.Opts.AsyncErrorCB == nil {
		t.Fatal("the embedded server's connection has no error handler")
	}
	var rlog syncBuffer
	rst, err := Open(ctx, WithURL(wst.ClientURL()), WithListenerCredentials(dir, ReadOnly), WithTimeout(time.Second),
		WithLogger(slog.New(slog.NewTextHandler(&rlog, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer rst.Close()
	nc := rst.(*store).nc
	if err := nc.Publish("fledger.main.turn.t", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(rlog.String(), `Permissions Violation for Publish to \"fledger.main.turn.t\"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no warning in the reader's log: %q", rlog.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
