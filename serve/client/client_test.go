package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/serve/client"
)

// flaky answers the first fails requests with a 503 of code and recorded,
// then 200 with a step; it keeps every request body it got.
type flaky struct {
	mu       sync.Mutex
	fails    int
	code     string
	recorded string
	bodies   []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(b))
	n := len(f.bodies)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if n <= f.fails {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": f.code, "detail": "store", "recorded": f.recorded})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"turn_id": "t", "agent": "main", "next": map[string]any{"action": "call"}})
}

func (f *flaky) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func TestClient_Retries503(t *testing.T) {
	cases := []struct {
		name      string
		code      string
		recorded  string
		call      func(c *client.Client) error
		wantCalls int
		wantErr   bool
	}{
		{"report after nothing recorded", "unavailable", "no", func(c *client.Client) error {
			_, err := c.Report(context.Background(), "t", client.Outcome{Attempt: 1, OK: true})
			return err
		}, 3, false},
		{"report whose outcome is unknown: idempotent, re-sent", "unavailable", "unknown", func(c *client.Client) error {
			_, err := c.Report(context.Background(), "t", client.Outcome{Attempt: 1, OK: true})
			return err
		}, 3, false},
		{"contention", "contention", "", func(c *client.Client) error {
			_, err := c.Resume(context.Background(), "t")
			return err
		}, 3, false},
		{"session command whose outcome is unknown: not re-sent", "unavailable", "unknown", func(c *client.Client) error {
			return c.Reset(context.Background(), "main", "s", "new", nil)
		}, 1, true},
		{"session command after nothing recorded", "unavailable", "no", func(c *client.Client) error {
			return c.Reset(context.Background(), "main", "s", "new", nil)
		}, 3, false},
		{"other 503 codes are answers", "no_config", "", func(c *client.Client) error {
			_, err := c.Report(context.Background(), "t", client.Outcome{Attempt: 1, OK: true})
			return err
		}, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{fails: 2, code: tc.code, recorded: tc.recorded}
			srv := httptest.NewServer(f)
			defer srv.Close()
			err := tc.call(client.New(srv.URL, ""))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if got := f.calls(); got != tc.wantCalls {
				t.Fatalf("%d calls, want %d", got, tc.wantCalls)
			}
			var e *client.Error
			if tc.wantErr && (!errors.As(err, &e) || e.Status != 503 || e.Code != tc.code || e.Recorded != tc.recorded) {
				t.Fatalf("error %#v", err)
			}
		})
	}
}

func TestClient_RetryIsBounded(t *testing.T) {
	f := &flaky{fails: 1 << 30, code: "unavailable", recorded: "no"}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c := client.New(srv.URL, "")
	c.RetryFor = 350 * time.Millisecond
	_, err := c.Resume(context.Background(), "t")
	var e *client.Error
	if !errors.As(err, &e) || e.Code != "unavailable" {
		t.Fatalf("err %v", err)
	}
	// 100 ms between tries (Retry-After 0 is taken as the 100 ms floor):
	// the first try and the retries that fit in 350 ms.
	if n := f.calls(); n < 2 || n > 4 {
		t.Fatalf("%d calls in 350 ms", n)
	}
	c.RetryFor = -1
	f2 := &flaky{fails: 1, code: "unavailable", recorded: "no"}
	srv2 := httptest.NewServer(f2)
	defer srv2.Close()
	c2 := client.New(srv2.URL, "")
	c2.RetryFor = -1
	if _, err := c2.Resume(context.Background(), "t"); err == nil || f2.calls() != 1 {
		t.Fatalf("RetryFor -1 retried: %d calls, err %v", f2.calls(), err)
	}
}

// A begin without a turn id gets one from the client, the same on every
// re-send, so a begin whose first send was recorded opens the turn once.
func TestClient_BeginResendsTheSameTurnID(t *testing.T) {
	f := &flaky{fails: 2, code: "unavailable", recorded: "unknown"}
	srv := httptest.NewServer(f)
	defer srv.Close()
	if _, err := client.New(srv.URL, "").Begin(context.Background(), client.BeginRequest{Session: "s"}); err != nil {
		t.Fatal(err)
	}
	if len(f.bodies) != 3 || f.bodies[0] != f.bodies[1] || f.bodies[1] != f.bodies[2] {
		t.Fatalf("bodies %q", f.bodies)
	}
	var b struct {
		TurnID string `json:"turn_id"`
	}
	if err := json.Unmarshal([]byte(f.bodies[0]), &b); err != nil || len(b.TurnID) != 34 {
		t.Fatalf("turn id %q (%v)", b.TurnID, err)
	}
}

// A DecisionsQuery is sent as GET /v1/decisions with only the parameters
// it sets: from_seq a sequence, since RFC 3339 in UTC.
func TestClient_DecisionsQuery(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		_, _ = io.WriteString(w, `{"decisions":[],"next_from_seq":1,"checkpoint":0}`)
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "")
	at := time.Date(2026, 3, 2, 10, 0, 0, 500e6, time.FixedZone("CET", 3600))
	for _, q := range []client.DecisionsQuery{
		{},
		{Agent: "coder", FromSeq: 42, Since: at, Limit: 10},
	} {
		var out map[string]any
		if err := c.Decisions(context.Background(), q, &out); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"/v1/decisions?",
		"/v1/decisions?agent=coder&from_seq=42&limit=10&since=2026-03-02T09%3A00%3A00.5Z",
	}
	if !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
}
