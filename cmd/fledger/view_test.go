package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startView runs `fledger --data data view --http 127.0.0.1:0 <args>`
// until the test ends and returns the first line it printed.
func startView(t *testing.T, data string, args ...string) string {
	t.Helper()
	root := newRootCmd()
	pr, pw := io.Pipe()
	root.SetOut(pw)
	root.SetErr(io.Discard)
	root.SetArgs(append([]string{"--data", data, "view", "--http", "127.0.0.1:0"}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("view ended with %v", err)
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case l := <-line:
		return l
	case err := <-done:
		t.Fatalf("view ended before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("view printed no URL within 30 s")
	}
	return ""
}

func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// After `fledger run incident-day.yaml`, `fledger view` of an offline copy
// of the data directory serves the timeline (each cooldown window at its
// recorded time, each turn's outcome), the explanation `explain --json`
// prints byte for byte, a what-if, and refuses a write; the copy's
// stream is not written.
func TestViewCmd_OfflineCopy(t *testing.T) {
	data := t.TempDir()
	if out, err := runFledger(t, "--data", data, "run", filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"), "--agent", "main"); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", data, cp).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	explained, err := runCLI(t, "", "--data", cp, "explain", "storm", "--agent", "main", "--json")
	if err != nil {
		t.Fatal(err)
	}
	first := startView(t, cp)
	url := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`).FindString(first)
	if url == "" || first != "fledger view: "+url+" (read-only; agents [main]; the page at "+url+"/ui/)" {
		t.Fatalf("view printed %q first, want its URL", first)
	}

	code, body := httpDo(t, "GET", url+"/v1/timeline", "")
	var tl struct {
		Agent    string
		LastSeq  uint64 `json:"last_seq"`
		Profiles []struct {
			ProfileID string `json:"profile_id"`
			Windows   []struct{ State, Reason, From, Until string }
		}
		Turns []struct {
			TurnID  string `json:"turn_id"`
			Outcome string
		}
	}
	if code != 200 || json.Unmarshal([]byte(body), &tl) != nil {
		t.Fatalf("GET /v1/timeline: %d %s", code, body)
	}
	var windows, turns []string
	for _, p := range tl.Profiles {
		for _, w := range p.Windows {
			windows = append(windows, p.ProfileID+" "+w.State+" "+w.Reason+" "+w.From+" "+w.Until)
		}
	}
	for _, m := range tl.Turns {
		turns = append(turns, m.TurnID+" "+m.Outcome)
	}
	wantWindows := []string{
		"anthropic:personal cooldown rate_limit 2026-03-02T09:00:09.262Z 2026-03-02T09:00:39.262Z",
		"anthropic:work cooldown rate_limit 2026-03-02T09:00:08.842Z 2026-03-02T09:00:38.842Z",
		"anthropic:work disabled billing 2026-03-02T09:05:00.300Z 2026-03-02T09:15:00.300Z",
	}
	wantTurns := []string{"storm fell_back", "recovered first_try", "out-of-credit rotated", "while-disabled first_try", "after-disable first_try"}
	if tl.Agent != "main" || strings.Join(windows, "\n") != strings.Join(wantWindows, "\n") || strings.Join(turns, "\n") != strings.Join(wantTurns, "\n") {
		t.Fatalf("timeline of %s:\nwindows %q\nturns %q", tl.Agent, windows, turns)
	}

	if code, body := httpDo(t, "GET", url+"/v1/turns/storm/explanation", ""); code != 200 || body != explained {
		t.Fatalf("explanation: %d, the body differs from `explain storm --json`:\n%s\n---\n%s", code, body, explained)
	}
	cfg, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "configs", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]string{"config": string(cfg)})
	if code, body := httpDo(t, "POST", url+"/v1/what-if", string(req)); code != 200 || !strings.Contains(body, `"turns":5`) {
		t.Fatalf("what-if: %d %s", code, body)
	}
	if code, body := httpDo(t, "POST", url+"/v1/turns", `{"session":"dm-alice"}`); code != 403 || !strings.Contains(body, `"error":"read_only"`) {
		t.Fatalf("POST /v1/turns: %d %s, want 403 read_only", code, body)
	}
	if code, body := httpDo(t, "GET", url+"/healthz", ""); code != 200 || !strings.Contains(body, lastSeqField(tl.LastSeq)) {
		t.Fatalf("healthz: %d %s (stream last_seq %d)", code, body, tl.LastSeq)
	}
}

func lastSeqField(v uint64) string {
	b, _ := json.Marshal(map[string]uint64{"last_seq": v})
	return strings.Trim(string(b), "{}")
}

// view refuses a directory without a ledger and a non-loopback address
// without a token, before opening anything.
func TestViewCmd_Refuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", filepath.Join(t.TempDir(), "none"), "view", "--http", "127.0.0.1:0"}, "no ledger in"},
		{[]string{"--data", t.TempDir(), "view", "--http", "0.0.0.0:0"}, "is not a loopback address: set --token"},
	} {
		if _, err := runFledger(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
}

// With --json the first line is {"url", "agents", "read_only"}; without
// --agent every agent of the ledger is served, the last active first.
func TestViewCmd_JSONLine(t *testing.T) {
	data := t.TempDir()
	for _, agent := range []string{"zeta", "alpha"} {
		if out, err := runFledger(t, "--data", data, "run", filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"), "--agent", agent); err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
	}
	var first struct {
		URL      string   `json:"url"`
		Agents   []string `json:"agents"`
		ReadOnly bool     `json:"read_only"`
	}
	line := startView(t, data, "--json")
	if err := json.Unmarshal([]byte(line), &first); err != nil || !strings.HasPrefix(first.URL, "http://127.0.0.1:") ||
		strings.Join(first.Agents, ",") != "alpha,zeta" || !first.ReadOnly {
		t.Fatalf("first line %q: %+v, %v", line, first, err)
	}
	if code, body := httpDo(t, "GET", first.URL+"/v1/timeline?agent=zeta", ""); code != 200 || !strings.Contains(body, `"agent":"zeta"`) {
		t.Fatalf("timeline of zeta: %d %s", code, body)
	}
}

// view --agent refuses an agent the projection holds no event of — one
// whose subjects hold only a quarantined message too, as `turns --agent`
// refuses it — naming the ledger's agents.
func TestViewCmd_AgentWithOnlyAQuarantinedMessageIsRefused(t *testing.T) {
	data := t.TempDir()
	if out, err := runFledger(t, "--data", data, "run", filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"), "--agent", "alpha"); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	publishStray(t, data, "fledger.ghost.turn.x", []byte("not a commit"))
	for _, args := range [][]string{{"turns", "--agent", "ghost"}, {"view", "--http", "127.0.0.1:0", "--agent", "ghost"}} {
		_, err := runFledger(t, append([]string{"--data", data}, args...)...)
		if err == nil || err.Error() != "no agent ghost in this ledger (agents: alpha)" {
			t.Errorf("%v: %v, want no agent ghost in this ledger (agents: alpha)", args, err)
		}
	}
}
