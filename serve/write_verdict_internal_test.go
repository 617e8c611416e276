package serve

import (
	"errors"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

// What the store's appends say to /healthz: one failure, or a burst of
// the appends in flight during one outage, is degraded; failures that go
// on for writeFailSpan with no outage to explain them are unavailable;
// nothing a minute after the last. The text never names the subject.
func TestWriteVerdict(t *testing.T) {
	now := time.Date(2026, 12, 7, 1, 30, 0, 0, time.UTC)
	cause := &events.UnavailableError{Op: "append", Subject: "fledger.main.session.secret-session", Outcome: events.OutcomeUnknown, Err: errors.New("nats: timeout")}
	failing := func(n int, first, last time.Duration) events.WriteStatus {
		return events.WriteStatus{Failures: n, FailingSince: now.Add(-first), LastFailure: now.Add(-last), LastErr: cause}
	}
	const stopped = "; a server that stopped storing (its disk full, say) does so until it restarts: see its log"
	cases := []struct {
		name   string
		ws     events.WriteStatus
		outage time.Duration // 0: none seen
		code   int
		what   string
	}{
		{"stored", events.WriteStatus{LastStored: now}, 0, 200, ""},
		{"one", failing(1, 2*time.Second, 2*time.Second), 0, 200, "store: the last append was not stored (2s ago: nats: timeout)"},
		{"a burst of 8 at once", failing(8, 0, 0), 0, 200, "store: the last 8 appends were not stored, over 0s (last 0s ago: nats: timeout)"},
		{"going on for 30 s", failing(3, 30*time.Second, 0), 0, 503, "store: the last 3 appends were not stored, over 30s (last 0s ago: nats: timeout)" + stopped},
		{"going on, after an election", failing(3, 30*time.Second, 0), 40 * time.Second, 200, "store: the last 3 appends were not stored, over 30s (last 0s ago: nats: timeout)"},
		{"going on, an outage long before", failing(3, 30*time.Second, 0), 2 * time.Minute, 503, "store: the last 3 appends were not stored, over 30s (last 0s ago: nats: timeout)" + stopped},
		{"the last a minute ago", failing(3, 2*time.Minute, 61*time.Second), 0, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var outage time.Time
			if tc.outage > 0 {
				outage = now.Add(-tc.outage)
			}
			code, what := writeVerdict(tc.ws, outage, now)
			if code != tc.code || what != tc.what {
				t.Fatalf("got %d %q, want %d %q", code, what, tc.code, tc.what)
			}
		})
	}
}
