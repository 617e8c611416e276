package serve_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// statusTap counts every HTTP status the client receives, before its own
// retries, so the test sees each 503 an election causes.
type statusTap struct {
	base  http.RoundTripper
	mu    sync.Mutex
	codes map[int]int
	last  map[int]string
	// recorded counts the 503s by their recorded field; bad lists the
	// 503s that are not a well-formed unavailable answer.
	recorded map[string]int
	bad      []string
}

func (s *statusTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[resp.StatusCode]++
	s.last[resp.StatusCode] = r.Method + " " + r.URL.Path
	if resp.StatusCode == http.StatusServiceUnavailable {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		var e serve.ErrorBody
		_ = json.Unmarshal(b, &e)
		if e.Error != serve.CodeUnavailable || (e.Recorded != serve.RecordedNo && e.Recorded != serve.RecordedUnknown) || resp.Header.Get("Retry-After") == "" {
			s.bad = append(s.bad, fmt.Sprintf("%s %s: 503 %s (Retry-After %q)", r.Method, r.URL.Path, b, resp.Header.Get("Retry-After")))
		}
		s.recorded[e.Recorded]++
	}
	return resp, nil
}

// A 3-node cluster with an R3 stream, turns running on 6 workers: the
// stream leader is killed (cut off, then stopped, as kill -9), a new one
// is elected, the old one comes back. Every turn answered done is in the
// stream, every error the server answered during the election was a 503
// saying whether the step was recorded (never a 500), turns succeed again
// by themselves while the killed node is down, well within 15 s, and
// replay --verify passes on the ledger. With the store's default retry
// time the election is ridden out inside the requests; with a retry time
// shorter than an election the server answers 503s, which the client
// retries, and /healthz says the stream has no leader within 1 s.
func TestFailover_StreamLeaderKilledUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster and a leader election take about 10 s")
	}
	cases := []struct {
		name     string
		opts     []events.Option
		want503s bool
	}{
		{"the store rides out the election", nil, false},
		{"an election longer than the store's retry time", []events.Option{events.WithRetryUnknown(1500*time.Millisecond, 500*time.Millisecond)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { failover(t, tc.opts, tc.want503s) })
	}
}

func failover(t *testing.T, opts []events.Option, want503s bool) {
	c := natstest.StartCluster(t, 3)
	ctx := testutil.Context(t)
	st, err := events.Open(ctx, append([]events.Option{events.WithURL(c.URLs()), events.WithReplicas(3)}, opts...)...)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	srv := startServer(t, st, serve.Config{Config: loadConfig(t)})
	tap := &statusTap{base: http.DefaultTransport, codes: map[int]int{}, last: map[int]string{}, recorded: map[string]int{}}
	cl := client.New(srv.url, "")
	cl.HTTP = &http.Client{Transport: tap}

	var (
		mu       sync.Mutex
		done     = map[string]time.Time{} // turn id → when it was answered done
		failures []error
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	runTurn := func(w, n int) error {
		id := fmt.Sprintf("w%d-%d", w, n)
		step, err := cl.Begin(ctx, client.BeginRequest{Session: fmt.Sprintf("s%d", w), TurnID: id})
		if err != nil {
			return fmt.Errorf("begin %s: %w", id, err)
		}
		if step.Next.Action != "call" {
			return fmt.Errorf("begin %s: %+v", id, step.Next)
		}
		step, err = cl.Report(ctx, id, client.Outcome{Attempt: step.Next.Attempt, OK: true, LatencyMs: 5})
		if err != nil {
			return fmt.Errorf("report %s: %w", id, err)
		}
		if step.Next.Action != "done" {
			return fmt.Errorf("report %s: %+v", id, step.Next)
		}
		mu.Lock()
		done[id] = time.Now()
		mu.Unlock()
		return nil
	}
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				if err := runTurn(w, n); err != nil {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
				}
			}
		}()
	}
	doneAfter := func(at time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		k := 0
		for _, d := range done {
			if d.After(at) {
				k++
			}
		}
		return k
	}
	waitDone := func(at time.Time, n int, bound time.Duration) time.Duration {
		deadline := at.Add(bound)
		for doneAfter(at) < n {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d turns done within %v after %v", n, bound, at.Format(time.StampMilli))
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Since(at)
	}
	waitDone(time.Now(), 50, 10*time.Second)

	leader := c.StreamLeader(t, events.StreamName)
	killed := time.Now()
	c.Stop(leader)
	if want503s {
		// During the election /healthz answers within 1 s, 503, naming
		// the stream's missing leader (polled once before, so the slow
		// grace applies and has run out).
		if r, err := http.Get(srv.url + "/healthz"); err == nil {
			r.Body.Close()
		}
		time.Sleep(slowGraceForTest)
		begin := time.Now()
		resp, err := http.Get(srv.url + "/healthz")
		testutil.NoError(t, err)
		var h serve.Health
		_ = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if took := time.Since(begin); took > time.Second || resp.StatusCode != 503 || h.Status != "unavailable" ||
			len(h.Degraded) == 0 || !strings.HasPrefix(h.Degraded[0], "stream: no leader") {
			t.Errorf("healthz during the election: %d in %v: %+v", resp.StatusCode, took, h)
		}
	}
	next := c.WaitStreamLeader(t, events.StreamName, leader)
	elected := time.Since(killed)
	waitDone(killed, 20, 15*time.Second)
	mu.Lock()
	var after []time.Time
	for _, d := range done {
		if d.After(killed) {
			after = append(after, d)
		}
	}
	mu.Unlock()
	slices.SortFunc(after, time.Time.Compare)
	first, recovered := after[0].Sub(killed), after[19].Sub(killed)
	if recovered > 15*time.Second {
		t.Errorf("turns succeeded again %v after the kill, want under 15 s", recovered)
	}
	t.Logf("killed n%d; n%d elected after %v; first turn done %v, 20 turns done %v after the kill", leader, next,
		elected.Round(time.Millisecond), first.Round(time.Millisecond), recovered.Round(time.Millisecond))

	c.Restart(t, leader)
	waitDone(time.Now(), 20, 10*time.Second)
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for _, err := range failures {
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != http.StatusServiceUnavailable {
			t.Errorf("a turn failed with something else than a 503: %v", err)
		}
	}
	tap.mu.Lock()
	for code, n := range tap.codes {
		if code != 200 && code != 201 && code != 503 {
			t.Errorf("%d answers of %d (last: %s)", n, code, tap.last[code])
		}
	}
	t.Logf("answers by status: %v; 503s by recorded: %v; turns done: %d; turns failed after the client's retries: %d",
		tap.codes, tap.recorded, len(done), len(failures))
	for _, b := range tap.bad {
		t.Errorf("not a well-formed unavailable answer: %s", b)
	}
	if got := tap.codes[503] > 0; got != want503s {
		t.Errorf("503s seen: %v, want %v", got, want503s)
	}
	tap.mu.Unlock()

	// Every turn answered done is in the stream, finished (read while the
	// restarted node may still be catching up: reads check the leader).
	evs, _, err := st.ReadSubject(ctx, "fledger.main.>")
	testutil.NoError(t, err)
	finished := map[string]bool{}
	for _, ev := range evs {
		if ev.Type == "TurnSucceeded" {
			finished[ev.CorrelationID] = true
		}
	}
	for id := range done {
		if !finished[id] {
			t.Errorf("turn %s was answered done but its TurnSucceeded is not in the stream", id)
		}
	}
	status := events.Status(ctx, st)
	if status.Replicas != 3 {
		t.Errorf("stream replicas %d, want 3", status.Replicas)
	}
	rep, err := replay.Verify(ctx, st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() {
		t.Fatalf("replay --verify: %+v", rep)
	}
}

// slowGraceForTest is past serve's slow grace (2 s) and well inside an
// election (4–7 s): /healthz then says the stream has no leader.
const slowGraceForTest = 2500 * time.Millisecond
