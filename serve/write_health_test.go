package serve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// failingWrites is a store whose appends are said not to be stored (what
// a server that filled its disk does while stream info still answers).
type failingWrites struct {
	events.Store
	ws func(now time.Time) events.WriteStatus
}

func (f *failingWrites) WriteStatus() events.WriteStatus { return f.ws(time.Now()) }
func (f *failingWrites) Unwrap() events.Store            { return f.Store }

// /healthz and /readyz read what the process's own appends met: one not
// stored is degraded, two or more in a row unavailable (503, out of a load
// balancer's rotation) for a minute after the last of them, then ok again
// (an instance taken out gets no request to learn from).
func TestHealth_AppendsNotStored(t *testing.T) {
	errTimeout := &events.UnavailableError{Op: "append", Outcome: events.OutcomeUnknown, Err: io.ErrUnexpectedEOF}
	const unstored = "unexpected EOF"
	cases := []struct {
		name     string
		ws       func(now time.Time) events.WriteStatus
		code     int
		status   string
		degraded string
	}{
		{"stored", func(now time.Time) events.WriteStatus { return events.WriteStatus{LastStored: now} }, 200, "ok", ""},
		{"one not stored", func(now time.Time) events.WriteStatus {
			return events.WriteStatus{Failures: 1, FailingSince: now, LastFailure: now, LastErr: errTimeout}
		}, 200, "degraded",
			"store: the last append was not stored (0s ago: " + unstored + ")"},
		{"three not stored", func(now time.Time) events.WriteStatus {
			return events.WriteStatus{Failures: 3, FailingSince: now.Add(-30 * time.Second), LastFailure: now, LastErr: errTimeout}
		}, 503, "unavailable",
			"store: the last 3 appends were not stored, over 30s (last 0s ago: " + unstored + "); a server that stopped storing (its disk full, say) does so until it restarts: see its log"},
		{"three, the last over a minute ago", func(now time.Time) events.WriteStatus {
			return events.WriteStatus{Failures: 3, FailingSince: now.Add(-2 * time.Minute), LastFailure: now.Add(-61 * time.Second), LastErr: errTimeout}
		}, 200, "ok", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, &failingWrites{Store: testutil.Store(t), ws: tc.ws}, serve.Config{Config: loadConfig(t)})
			for _, path := range []string{"/healthz", "/readyz"} {
				resp, err := http.Get(srv.url + path)
				testutil.NoError(t, err)
				var h serve.Health
				testutil.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
				resp.Body.Close()
				if resp.StatusCode != tc.code || h.Status != tc.status {
					t.Fatalf("%s: %d %q, want %d %q (%+v)", path, resp.StatusCode, h.Status, tc.code, tc.status, h)
				}
				got := strings.Join(h.Degraded, "; ")
				if got != tc.degraded {
					t.Fatalf("%s: degraded %q, want %q", path, got, tc.degraded)
				}
			}
		})
	}
}
