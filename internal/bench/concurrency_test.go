package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConcurrencySweep runs the sweep alone with tiny levels (150 ms each)
// and checks every row is sane: turns finished, latencies ordered,
// conflicts never above what was tried, raw rates measured, the bars
// present with a status, and both renderings. No timing assertions.
func TestConcurrencySweep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{ConcurrencyOnly: true, TempDir: t.TempDir(), sizes: &sizes{levelTime: 150 * time.Millisecond,
		engineLevels: []int{1, 64}, httpLevels: []int{1, 16}}})
	if err != nil {
		t.Fatal(err)
	}
	sw := rep.Concurrency
	if sw == nil {
		t.Fatal("no concurrency sweep in the report")
	}
	if len(rep.Limits) != 0 {
		t.Errorf("%d limits in a sweep-only run, want 0", len(rep.Limits))
	}
	for _, n := range []int{1, 16, 64} {
		r := sw.rawFor(n)
		if r == nil || r.SyncMsgs == 0 || r.SyncPerSec <= 0 || r.AsyncMsgs == 0 || r.AsyncPerSec <= 0 || r.SyncP99us < r.SyncP50us {
			t.Errorf("raw level %d: %+v", n, r)
		}
	}
	for _, c := range []struct {
		path string
		n    int
	}{{"engine", 1}, {"engine", 64}, {"http", 1}, {"http", 16}} {
		t.Run(c.path+"/"+strconv.Itoa(c.n), func(t *testing.T) {
			l := sw.level(c.path, c.n)
			if l == nil {
				t.Fatal("level missing")
			}
			if l.Turns == 0 || l.TurnsPerSec <= 0 || l.Answered == 0 || l.Answered > l.Turns || l.Calls < l.Answered {
				t.Errorf("turns %d (%v/s), answered %d, calls %d", l.Turns, l.TurnsPerSec, l.Answered, l.Calls)
			}
			if l.P50us <= 0 || l.P99us < l.P50us {
				t.Errorf("p50 %v µs, p99 %v µs", l.P50us, l.P99us)
			}
			// Every finished turn appended at least its start and its end.
			if l.Commits < uint64(2*l.Turns) {
				t.Errorf("%d commits for %d turns", l.Commits, l.Turns)
			}
			// A conflict is a refused append: at most one per try, at most
			// (retries+1) tries per commit or given-up turn.
			if l.Conflicts > 9*(l.Commits+uint64(l.Contention)) {
				t.Errorf("%d conflicts for %d commits", l.Conflicts, l.Commits)
			}
			if l.ConflictsPerCommit < 0 || (l.Conflicts == 0) != (l.ConflictsPerCommit == 0) {
				t.Errorf("conflicts/commit %v for %d/%d", l.ConflictsPerCommit, l.Conflicts, l.Commits)
			}
			if l.Errors != 0 {
				t.Errorf("%d errors, first: %s", l.Errors, l.FirstError)
			}
			if c.n == 1 && (l.Conflicts != 0 || l.Contention != 0) {
				t.Errorf("one turn at a time: %d conflicts, %d contention", l.Conflicts, l.Contention)
			}
		})
	}
	bars := map[string]bool{}
	for _, r := range rep.Rows {
		if r.Status != "PASS" && r.Status != "MISS" {
			t.Errorf("row %q: status %q", r.Figure.Name, r.Status)
		}
		bars[r.Figure.Name] = true
	}
	for _, want := range []string{"engine turns/s, 64 concurrent turns", "engine conflicts/commit, 64 concurrent turns", "HTTP turns/s, 16 clients"} {
		if !bars[want] {
			t.Errorf("no bar row %q in %v", want, bars)
		}
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CONCURRENCY SWEEP", "concurrency sweep only", "conflicts/commit", "engine", "http"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, txt.String())
		}
	}
	if strings.Contains(txt.String(), "LIMIT (raw") {
		t.Errorf("sweep-only text has the limits table:\n%s", txt.String())
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Concurrency == nil || len(back.Concurrency.Levels) != len(sw.Levels) {
		t.Fatalf("JSON round trip: %v (%+v)", err, back.Concurrency)
	}
}
