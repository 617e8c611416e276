package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
	"github.com/fledger/fledger/serve"
)

// scenarioStore runs the fixture scenario file into a fresh store as
// agent main (`fledger run`).
func scenarioStore(t *testing.T, file string) events.Store {
	t.Helper()
	sc, err := scenario.LoadFile(file)
	testutil.NoError(t, err)
	st := testutil.Store(t)
	_, err = scenario.Run(testutil.Context(t), st, sc, scenario.Options{Agent: "main"})
	testutil.NoError(t, err)
	return st
}

// viewServer is `fledger view` of st: read-only, no config applied.
func viewServer(t *testing.T, st events.Store) *server {
	t.Helper()
	return startServer(t, st, serve.Config{ReadOnly: true})
}

// incidentNoFallback is incident-day's config without its fallback (the
// storm turn would have been exhausted): the file the browser tests
// upload too.
var incidentNoFallback = func() string {
	b, err := os.ReadFile("../ui/test/fixtures/incident-day-no-fallback.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// After fixtures/scenarios/incident-day.yaml, `fledger view` of the ledger
// answers: each profile's windows at their exact recorded times and each
// turn's outcome (timeline), the explanation `fledger explain --json`
// prints, the turns a changed config changes (what-if), and the decisions
// filtered.
func TestView_IncidentDay(t *testing.T) {
	st := scenarioStore(t, "../fixtures/scenarios/incident-day.yaml")
	srv := viewServer(t, st)

	t.Run("timeline", func(t *testing.T) {
		for _, query := range []string{"", "?since=2026-03-02T09:00:00Z&until=2026-03-02T09:30:00Z"} {
			code, b := do(t, "GET", srv.url+"/v1/timeline"+query, "")
			if code != 200 {
				t.Fatalf("GET /v1/timeline%s: %d %s", query, code, b)
			}
			var tl replay.RangeTimeline
			testutil.NoError(t, json.Unmarshal(b, &tl))
			lanes := map[string][]replay.ProfileWindow{}
			var ids []string
			for _, l := range tl.Profiles {
				ids = append(ids, l.ProfileID)
				lanes[l.ProfileID] = l.Windows
			}
			if want := []string{"anthropic:personal", "anthropic:work", "openai:user@example.com"}; !reflect.DeepEqual(ids, want) {
				t.Fatalf("%s: lanes %v, want %v", query, ids, want)
			}
			// The scenario's expectations: work cooling down until +38.842s
			// (claude-opus-4-6), personal until +39.262s, work disabled
			// (billing) until +15m0.3s; each set by the failure that
			// recorded it, each run out (cleared_seq 0).
			want := map[string][]replay.ProfileWindow{
				"anthropic:work": {
					{State: "cooldown", Reason: "rate_limit", Model: "claude-opus-4-6", From: "2026-03-02T09:00:08.842Z", Until: "2026-03-02T09:00:38.842Z", EndedAt: "2026-03-02T09:00:38.842Z", SetSeq: 9},
					{State: "disabled", Reason: "billing", From: "2026-03-02T09:05:00.300Z", Until: "2026-03-02T09:15:00.300Z", EndedAt: "2026-03-02T09:15:00.300Z", SetSeq: 15},
				},
				"anthropic:personal": {
					{State: "cooldown", Reason: "rate_limit", Model: "claude-opus-4-6", From: "2026-03-02T09:00:09.262Z", Until: "2026-03-02T09:00:39.262Z", EndedAt: "2026-03-02T09:00:39.262Z", SetSeq: 10},
				},
				"openai:user@example.com": {},
			}
			if !reflect.DeepEqual(lanes, want) {
				t.Fatalf("%s: windows\n got %+v\nwant %+v", query, lanes, want)
			}
			type mark struct {
				id, outcome, final, profile string
				attempts                    int
				start, end                  uint64
			}
			var got []mark
			for _, m := range tl.Turns {
				got = append(got, mark{m.TurnID, m.Outcome, m.FinalModel, m.FinalProfile, m.Attempts, m.StartSeq, m.EndSeq})
			}
			wantTurns := []mark{
				{"storm", "fell_back", "openai/gpt-5", "openai:user@example.com", 6, 2, 11},
				{"recovered", "first_try", "anthropic/claude-opus-4-6", "anthropic:work", 1, 12, 13},
				{"out-of-credit", "rotated", "anthropic/claude-opus-4-6", "anthropic:personal", 2, 14, 16},
				{"while-disabled", "first_try", "anthropic/claude-opus-4-6", "anthropic:personal", 1, 17, 18},
				{"after-disable", "first_try", "anthropic/claude-opus-4-6", "anthropic:work", 1, 20, 21},
			}
			if !reflect.DeepEqual(got, wantTurns) {
				t.Fatalf("%s: turns\n got %+v\nwant %+v", query, got, wantTurns)
			}
			if tl.Turns[0].StartedAt != "2026-03-02T09:00:00.000Z" || tl.Turns[0].EndedAt != "2026-03-02T09:00:11.062Z" ||
				tl.LedgerFirst != "2026-03-02T09:00:00.000Z" || tl.LedgerLast != "2026-03-02T09:16:00.800Z" || tl.LastSeq != 21 || tl.Truncated {
				t.Fatalf("%s: storm %s..%s, ledger %s..%s, last_seq %d, truncated %v", query, tl.Turns[0].StartedAt, tl.Turns[0].EndedAt,
					tl.LedgerFirst, tl.LedgerLast, tl.LastSeq, tl.Truncated)
			}
		}
		// Default: the last hour of the ledger, not of the wall clock.
		_, b := do(t, "GET", srv.url+"/v1/timeline", "")
		var tl replay.RangeTimeline
		testutil.NoError(t, json.Unmarshal(b, &tl))
		if tl.Since != "2026-03-02T08:16:00.800Z" || tl.Until != "2026-03-02T09:16:00.800Z" {
			t.Fatalf("default range %s..%s", tl.Since, tl.Until)
		}
		// A range holding only the last turn, and a limit.
		_, b = do(t, "GET", srv.url+"/v1/timeline?since=2026-03-02T09:10:00Z", "")
		tl = replay.RangeTimeline{}
		testutil.NoError(t, json.Unmarshal(b, &tl))
		if len(tl.Turns) != 1 || tl.Turns[0].TurnID != "after-disable" || tl.Until != "2026-03-02T09:16:00.800Z" {
			t.Fatalf("since 09:10: %+v until %s", tl.Turns, tl.Until)
		}
		_, b = do(t, "GET", srv.url+"/v1/timeline?limit=2", "")
		tl = replay.RangeTimeline{}
		testutil.NoError(t, json.Unmarshal(b, &tl))
		if len(tl.Turns) != 2 || !tl.Truncated {
			t.Fatalf("limit 2: %d turns, truncated %v", len(tl.Turns), tl.Truncated)
		}
	})

	t.Run("explanation", func(t *testing.T) {
		for _, id := range []string{"storm", "out-of-credit"} {
			code, b := do(t, "GET", srv.url+"/v1/turns/"+id+"/explanation?agent=main", "")
			if code != 200 {
				t.Fatalf("%s: %d %s", id, code, b)
			}
			x, err := replay.Explain(testutil.Context(t), st, "main", id)
			testutil.NoError(t, err)
			var want bytes.Buffer
			testutil.NoError(t, replay.WriteJSON(&want, x))
			if !bytes.Equal(b, want.Bytes()) {
				t.Fatalf("%s: the answer is not what explain --json prints\n got %s\nwant %s", id, b, want.Bytes())
			}
		}
	})

	t.Run("what-if", func(t *testing.T) {
		cases := []struct {
			name, config string
			want         []serve.WhatIfChange // the compared fields only
			pathChanges  int
		}{
			// Without the fallback the storm exhausts on the recorded
			// Anthropic failures; the other turns answer as recorded.
			{"no fallback", incidentNoFallback, []serve.WhatIfChange{
				{TurnID: "storm", Session: "dm-alice", StartedAt: "2026-03-02T09:00:00.000Z", RecordedOutcome: "fell_back",
					WhatIfOutcome: "exhausted", RecordedModel: "openai/gpt-5"},
			}, 1},
			// Another provider first: no turn ever called it, every one is
			// unknown.
			{"unknown candidate", otherProviderConfig, []serve.WhatIfChange{
				{TurnID: "storm", Session: "dm-alice", StartedAt: "2026-03-02T09:00:00.000Z", RecordedOutcome: "fell_back", WhatIfOutcome: "unknown", RecordedModel: "openai/gpt-5", Unknown: true},
				{TurnID: "recovered", Session: "dm-alice", StartedAt: "2026-03-02T09:01:00.000Z", RecordedOutcome: "first_try", WhatIfOutcome: "unknown", RecordedModel: "anthropic/claude-opus-4-6", Unknown: true},
				{TurnID: "out-of-credit", Session: "dm-alice", StartedAt: "2026-03-02T09:05:00.000Z", RecordedOutcome: "rotated", WhatIfOutcome: "unknown", RecordedModel: "anthropic/claude-opus-4-6", Unknown: true},
				{TurnID: "while-disabled", Session: "dm-alice", StartedAt: "2026-03-02T09:06:00.000Z", RecordedOutcome: "first_try", WhatIfOutcome: "unknown", RecordedModel: "anthropic/claude-opus-4-6", Unknown: true},
				{TurnID: "after-disable", Session: "dm-alice", StartedAt: "2026-03-02T09:16:00.000Z", RecordedOutcome: "first_try", WhatIfOutcome: "unknown", RecordedModel: "anthropic/claude-opus-4-6", Unknown: true},
			}, 5},
		}
		before, err := st.LastSeq(testutil.Context(t), "")
		testutil.NoError(t, err)
		for _, tc := range cases {
			body, _ := json.Marshal(serve.WhatIfRequest{Config: tc.config})
			code, b := do(t, "POST", srv.url+"/v1/what-if", string(body))
			if code != 200 {
				t.Fatalf("%s: %d %s", tc.name, code, b)
			}
			var rep serve.WhatIfReport
			testutil.NoError(t, json.Unmarshal(b, &rep))
			var got []serve.WhatIfChange
			for _, c := range rep.Changed {
				if c.Agent != "main" || c.WhatIf.Outcome == "" || len(c.Recorded.Steps) == 0 {
					t.Fatalf("%s: %s lacks replay's comparison: %+v", tc.name, c.TurnID, c)
				}
				got = append(got, serve.WhatIfChange{TurnID: c.TurnID, Session: c.Session, StartedAt: c.StartedAt, RecordedOutcome: c.RecordedOutcome,
					WhatIfOutcome: c.WhatIfOutcome, RecordedModel: c.RecordedModel, WhatIfModel: c.WhatIfModel, Unknown: c.Unknown})
			}
			if !reflect.DeepEqual(got, tc.want) || rep.Turns != 5 || rep.PathChanges != tc.pathChanges {
				t.Fatalf("%s: turns %d, path changes %d, changed\n got %+v\nwant %+v", tc.name, rep.Turns, rep.PathChanges, got, tc.want)
			}
		}
		// A range: only the turns started in it are re-decided.
		body, _ := json.Marshal(serve.WhatIfRequest{Config: incidentNoFallback, Since: "2026-03-02T09:01:00Z", Until: "2026-03-02T09:06:00Z"})
		_, b := do(t, "POST", srv.url+"/v1/what-if", string(body))
		var rep serve.WhatIfReport
		testutil.NoError(t, json.Unmarshal(b, &rep))
		if rep.Turns != 3 || len(rep.Changed) != 0 || rep.Since != "2026-03-02T09:01:00.000Z" || rep.Until != "2026-03-02T09:06:00.000Z" {
			t.Fatalf("range 09:01..09:06: %s", b)
		}
		after, err := st.LastSeq(testutil.Context(t), "")
		testutil.NoError(t, err)
		if after != before {
			t.Fatalf("what-if wrote to the stream: last sequence %d, was %d", after, before)
		}
	})

	t.Run("decisions filters", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			seqs  []uint64
		}{
			{"", []uint64{10, 11}},
			{"?provider=openai", []uint64{11}},
			{"?provider=anthropic&reason=rate_limit", []uint64{10}},
			{"?outcome=candidate_succeeded", []uint64{11}},
			{"?outcome=skip_candidate", nil},
			{"?until=2026-03-02T09:00:11.062Z", []uint64{10}},
			{"?since=2026-03-02T09:00:10Z&until=2026-03-02T09:00:12Z", []uint64{11}},
		} {
			page := getDecisions(t, srv, tc.query)
			var seqs []uint64
			for _, d := range page.Decisions {
				seqs = append(seqs, d.Seq)
			}
			if !reflect.DeepEqual(seqs, tc.seqs) {
				t.Errorf("decisions%s: seqs %v, want %v", tc.query, seqs, tc.seqs)
			}
		}
		// A filter that no record can match by its spelling is refused,
		// naming it (an empty page would read as "no such decisions").
		for _, tc := range []struct{ query, want string }{
			{"?outcome=bogus", `outcome "bogus" is not a decision; one of candidate_failed, skip_candidate, probe_cooldown_candidate, candidate_succeeded, live_switch`},
			{"?reason=nope", `reason "nope" is not a failure reason; one of `},
			{"?since=2026-03-02T09:00:12Z&until=2026-03-02T09:00:10Z", "since 2026-03-02T09:00:12Z is after until 2026-03-02T09:00:10Z"},
		} {
			res, b := do(t, "GET", srv.url+"/v1/decisions"+tc.query, "")
			var e struct{ Error, Detail string }
			_ = json.Unmarshal(b, &e)
			if res != http.StatusBadRequest || e.Error != "invalid_request" || !strings.HasPrefix(e.Detail, tc.want) {
				t.Errorf("decisions%s: %d %s, want 400 containing %q", tc.query, res, b, tc.want)
			}
		}
	})
}

const otherProviderConfig = `
auth:
  profiles:
    "openai:x": {provider: openai, type: api_key}
agents:
  defaults:
    model: {primary: openai/gpt-4.1}
`

// `fledger view` records nothing: every POST but /v1/what-if is answered
// 403 read_only before anything runs; the reads and the what-if are
// served; a wrong method on a view route is 405 with Allow.
func TestView_RefusesWrites(t *testing.T) {
	st := scenarioStore(t, "../fixtures/scenarios/incident-day.yaml")
	srv := viewServer(t, st)
	ctx := testutil.Context(t)
	before, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	for _, rt := range serve.Routes {
		if rt.Method != "POST" || rt.Path == "/v1/what-if" {
			continue
		}
		path := strings.NewReplacer("{turn_id}", "storm", "{agent}", "main", "{session}", "dm-alice", "{provider}", "anthropic").Replace(rt.Path)
		code, b := do(t, "POST", srv.url+path, `{}`)
		if code != 403 || errorBody(t, b).Error != serve.CodeReadOnly {
			t.Errorf("POST %s: %d %s, want 403 read_only", path, code, b)
		}
	}
	for _, path := range []string{"/v1/profiles", "/v1/turns/storm", "/v1/sessions/main/dm-alice", "/v1/timeline", "/v1/decisions"} {
		if code, b := do(t, "GET", srv.url+path, ""); code != 200 {
			t.Errorf("GET %s: %d %s", path, code, b)
		}
	}
	req, err := http.NewRequestWithContext(ctx, "GET", srv.url+"/v1/what-if", nil)
	testutil.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	testutil.NoError(t, err)
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/what-if: %d Allow %q, want 405 Allow POST", resp.StatusCode, resp.Header.Get("Allow"))
	}
	after, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	if after != before {
		t.Fatalf("the read-only server wrote: last sequence %d, was %d", after, before)
	}
	// A writing server takes the same reads; the read-only one sees what
	// it records (a kept answer is not served once the stream grew).
	srv2 := startServer(t, st, serve.Config{})
	if code, b := do(t, "GET", srv2.url+"/v1/timeline", ""); code != 200 {
		t.Fatalf("serve GET /v1/timeline: %d %s", code, b)
	}
	turns := func() []replay.TurnMark {
		_, b := do(t, "GET", srv.url+"/v1/timeline?since=2026-03-02T09:00:00Z", "")
		var tl replay.RangeTimeline
		testutil.NoError(t, json.Unmarshal(b, &tl))
		return tl.Turns
	}
	if n := len(turns()); n != 5 {
		t.Fatalf("%d turns before, want 5", n)
	}
	if code, b := do(t, "POST", srv2.url+"/v1/turns", `{"session":"dm-bob","turn_id":"live"}`); code != 200 {
		t.Fatalf("begin on the writing server: %d %s", code, b)
	}
	if got := turns(); len(got) != 6 || got[5].TurnID != "live" || got[5].Outcome != "running" || got[5].EndedAt != "" {
		t.Fatalf("after a begin: %+v", got)
	}
}

// Bad input to the viewer's routes gets a clear 4xx naming what is wrong.
func TestView_BadInput(t *testing.T) {
	st := scenarioStore(t, "../fixtures/scenarios/incident-day.yaml")
	srv := startServer(t, st, serve.Config{ReadOnly: true, MaxBodyBytes: 64 << 10})
	whatIf := func(fields map[string]string) string {
		b, _ := json.Marshal(fields)
		return string(b)
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code, detail             string
	}{
		{"bad since", "GET", "/v1/timeline?since=yesterday", "", 400, "invalid_request", `since "yesterday" is not an RFC 3339 time`},
		{"since a number", "GET", "/v1/timeline?until=1700000000", "", 400, "invalid_request", `until "1700000000" is a number`},
		{"since after until", "GET", "/v1/timeline?since=2026-03-02T10:00:00Z&until=2026-03-02T09:00:00Z", "", 400, "invalid_request", "since 2026-03-02T10:00:00Z is after until 2026-03-02T09:00:00Z"},
		{"since before 1970", "GET", "/v1/timeline?since=0001-01-01T00:00:00Z", "", 400, "invalid_request", `since "0001-01-01T00:00:00Z" is before 1970-01-01T00:00:00Z`},
		{"limit zero", "GET", "/v1/timeline?limit=0", "", 400, "invalid_request", `limit "0" is not a positive number`},
		{"limit too large", "GET", "/v1/timeline?limit=50001", "", 400, "invalid_request", "limit must be in 1..50000"},
		{"unknown parameter", "GET", "/v1/timeline?from=2026-03-02T09:00:00Z", "", 400, "invalid_request", `unknown query parameter "from"`},
		{"unknown agent", "GET", "/v1/timeline?agent=nobody", "", 404, "unknown_agent", `agent "nobody" is not served here`},
		{"unknown turn", "GET", "/v1/turns/nope/explanation", "", 404, "unknown_turn", `agent main has no turn "nope"`},
		{"explanation of an unknown agent", "GET", "/v1/turns/storm/explanation?agent=nobody", "", 404, "unknown_agent", `agent "nobody"`},
		{"explanation parameter", "GET", "/v1/turns/storm/explanation?turn=storm", "", 400, "invalid_request", `unknown query parameter "turn"`},
		{"decisions until", "GET", "/v1/decisions?until=soon", "", 400, "invalid_request", `until "soon" is not an RFC 3339 time`},
		{"no config", "POST", "/v1/what-if", `{}`, 400, "invalid_request", "config is required"},
		{"malformed config", "POST", "/v1/what-if", whatIf(map[string]string{"config": "agents: [\n  x: 1"}), 422, "invalid_request", "config: invalid config: not valid YAML or JSON: yaml: line 2"},
		{"invalid config", "POST", "/v1/what-if", whatIf(map[string]string{"config": "agents: {defaults: {model: {primary: nomodel}}}"}), 422, "invalid_request", "agents.defaults.model.primary"},
		{"huge config", "POST", "/v1/what-if", whatIf(map[string]string{"config": strings.Repeat("#", 70<<10)}), 413, "body_too_large", "larger than 65536 bytes"},
		{"what-if unknown field", "POST", "/v1/what-if", `{"config":"{}","cfg":1}`, 400, "invalid_json", `"cfg"`},
		{"what-if query", "POST", "/v1/what-if?agent=main", `{"config":"{}"}`, 400, "invalid_request", `unknown query parameter "agent"`},
		{"what-if unknown agent", "POST", "/v1/what-if", whatIf(map[string]string{"agent": "nobody", "config": "{}"}), 404, "unknown_agent", `agent "nobody"`},
		{"what-if bad until", "POST", "/v1/what-if", whatIf(map[string]string{"config": "{}", "until": "noon"}), 400, "invalid_request", `until "noon" is not an RFC 3339 time`},
		{"what-if since after until", "POST", "/v1/what-if", whatIf(map[string]string{"config": "{}", "since": "2026-03-02T10:00:00Z", "until": "2026-03-02T09:00:00Z"}), 400, "invalid_request", "is after until"},
	} {
		code, b := do(t, tc.method, srv.url+tc.path, tc.body)
		e := errorBody(t, b)
		if code != tc.status || e.Error != tc.code || !strings.Contains(e.Detail, tc.detail) {
			t.Errorf("%s: %d %s, want %d %s naming %q", tc.name, code, b, tc.status, tc.code, tc.detail)
		}
	}
	// A since past the ledger's end alone is an empty range ending there,
	// its lists arrays.
	code, b := do(t, "GET", srv.url+"/v1/timeline?since=2030-01-01T00:00:00Z", "")
	var tl struct {
		Since, Until    string
		Profiles, Turns []json.RawMessage
	}
	testutil.NoError(t, json.Unmarshal(b, &tl))
	if code != 200 || tl.Since != "2030-01-01T00:00:00.000Z" || tl.Until != tl.Since || len(tl.Turns) != 0 || !strings.Contains(string(b), `"turns":[]`) {
		t.Errorf("since past the end: %d %s", code, b)
	}
}

// The windows of two more fixture scenarios, exactly as recorded: a
// cooldown widened from one model to the whole profile (a new window from
// the failure that widened it) and cleared early by the sibling's
// successful probe (ended_at and cleared_seq of that success); a provider
// block still running at the ledger's last event (no ended_at).
func TestView_TimelineWindows(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		want     map[string][]replay.ProfileWindow
	}{
		{"primary-probe-slot", map[string][]replay.ProfileWindow{
			"anthropic:work": {
				{State: "cooldown", Reason: "rate_limit", Model: "claude-opus-4-6", From: "2026-03-05T09:00:00.300Z", Until: "2026-03-05T09:00:30.300Z",
					EndedAt: "2026-03-05T09:00:00.600Z", SetSeq: 3, ClearedSeq: 4},
				{State: "cooldown", Reason: "rate_limit", From: "2026-03-05T09:00:00.600Z", Until: "2026-03-05T09:00:30.300Z",
					EndedAt: "2026-03-05T09:00:20.400Z", SetSeq: 4, ClearedSeq: 10},
			},
			"openai:backup": {},
		}},
		{"codex-usage-limit", map[string][]replay.ProfileWindow{
			"openai:dana@example.com": {
				{State: "blocked", Reason: "subscription_limit", Model: "gpt-5", Source: "codex_rate_limits", From: "2026-03-10T08:00:00.300Z",
					Until: "2026-03-11T08:00:00.300Z", SetSeq: 3},
			},
		}},
	} {
		st := scenarioStore(t, "../fixtures/scenarios/"+tc.scenario+".yaml")
		srv := viewServer(t, st)
		code, b := do(t, "GET", srv.url+"/v1/timeline?since=2026-03-01T00:00:00Z", "")
		if code != 200 {
			t.Fatalf("%s: %d %s", tc.scenario, code, b)
		}
		var tl replay.RangeTimeline
		testutil.NoError(t, json.Unmarshal(b, &tl))
		got := map[string][]replay.ProfileWindow{}
		for _, l := range tl.Profiles {
			if len(l.Windows) > 0 || tc.want[l.ProfileID] != nil {
				got[l.ProfileID] = l.Windows
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: windows\n got %+v\nwant %+v", tc.scenario, got, tc.want)
		}
	}
}

// Several clients at once, while a writing server on the same stream
// records turns: every timeline answer is whole (its turns are those of
// the stream at its last_seq: 5 recorded plus the live ones it saw), and
// the what-if and explanation answers are unchanged.
func TestView_Concurrent(t *testing.T) {
	st := scenarioStore(t, "../fixtures/scenarios/incident-day.yaml")
	view := viewServer(t, st)
	writer := startServer(t, st, serve.Config{})
	// The recorded morning only: the live turns begun meanwhile (running,
	// never answered) would be unknown under any config.
	body, _ := json.Marshal(serve.WhatIfRequest{Config: incidentNoFallback, Until: "2026-03-02T10:00:00Z"})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 4 {
		wg.Add(3)
		go func() {
			defer wg.Done()
			code, b := do(t, "POST", writer.url+"/v1/turns", fmt.Sprintf(`{"session":"live-%d","turn_id":"live-%d"}`, i, i))
			if code != 200 {
				errs <- fmt.Sprintf("begin %d: %d %s", i, code, b)
			}
		}()
		go func() {
			defer wg.Done()
			for range 3 {
				code, b := do(t, "GET", view.url+"/v1/timeline?since=2026-03-02T09:00:00Z", "")
				var tl replay.RangeTimeline
				if code != 200 || json.Unmarshal(b, &tl) != nil || len(tl.Turns) < 5 || tl.Turns[0].TurnID != "storm" {
					errs <- fmt.Sprintf("timeline: %d %s", code, b)
				}
			}
		}()
		go func() {
			defer wg.Done()
			code, b := do(t, "POST", view.url+"/v1/what-if", string(body))
			var rep serve.WhatIfReport
			if code != 200 || json.Unmarshal(b, &rep) != nil || len(rep.Changed) != 1 || rep.Changed[0].TurnID != "storm" {
				errs <- fmt.Sprintf("what-if: %d %s", code, b)
			}
			if code, b := do(t, "GET", view.url+"/v1/turns/storm/explanation", ""); code != 200 || !bytes.Contains(b, []byte(`"turn_id": "storm"`)) {
				errs <- fmt.Sprintf("explanation: %d %s", code, b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	_, b := do(t, "GET", view.url+"/v1/timeline?since=2026-03-02T09:00:00Z", "")
	var tl replay.RangeTimeline
	testutil.NoError(t, json.Unmarshal(b, &tl))
	if len(tl.Turns) != 9 {
		t.Fatalf("after the begins: %d turns, want 5 recorded + 4 live", len(tl.Turns))
	}
}

// One what-if at a time per server: another is answered 503 unavailable
// with Retry-After 2 and recorded "no", naming why; once the first ends
// the next runs.
func TestView_WhatIfOneAtATime(t *testing.T) {
	st := scenarioStore(t, "../fixtures/scenarios/incident-day.yaml")
	srv := startServer(t, st, serve.Config{ReadOnly: true})
	body, _ := json.Marshal(serve.WhatIfRequest{Config: incidentNoFallback})
	release := serve.HoldWhatIf(srv.svc)
	req, err := http.NewRequest("POST", srv.url+"/v1/what-if", strings.NewReader(string(body)))
	testutil.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	testutil.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	var e struct{ Error, Detail, Recorded string }
	testutil.NoError(t, json.Unmarshal(b, &e))
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "2" || e.Error != "unavailable" || e.Recorded != "no" ||
		!strings.HasPrefix(e.Detail, "a what-if replay is running on this server already (at most 1 at once") {
		t.Fatalf("second what-if: %d Retry-After %q %s", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	release()
	if code, b := do(t, "POST", srv.url+"/v1/what-if", string(body)); code != http.StatusOK {
		t.Fatalf("what-if after the first ended: %d %s", code, b)
	}
}

// A read-only server starts no NATS micro service: its operations record.
func TestView_NoMicroService(t *testing.T) {
	st := scenarioStore(t, "../fixtures/scenarios/incident-day.yaml")
	srv := startServer(t, st, serve.Config{ReadOnly: true})
	if ms, err := srv.svc.StartMicro(st); err == nil || ms != nil || err.Error() != "serve: a read-only server does not start the NATS micro service" {
		t.Fatalf("StartMicro on a read-only server: %v, %v", ms, err)
	}
}

// Times at the edges of the input: an until alone at the epoch answers a
// range clamped there (not a since in 1969, which is refused as input); an
// offset's + sent unencoded arrives as a space and is refused with the
// fix, on every route that reads a time; sent as %2B it is read.
func TestView_TimeInputEdges(t *testing.T) {
	st := scenarioStore(t, "../fixtures/scenarios/incident-day.yaml")
	srv := startServer(t, st, serve.Config{ReadOnly: true})
	code, b := do(t, "GET", srv.url+"/v1/timeline?until=1970-01-01T00:00:00Z", "")
	var tl struct{ Since, Until string }
	testutil.NoError(t, json.Unmarshal(b, &tl))
	if code != 200 || tl.Since != "1970-01-01T00:00:00.000Z" || tl.Until != "1970-01-01T00:00:00.000Z" {
		t.Errorf("until at the epoch: %d %s, want since and until 1970-01-01T00:00:00.000Z", code, b)
	}
	for _, tc := range []struct{ path, detail string }{
		{"/v1/timeline?since=2026-03-02T09:00:00+01:00",
			`since "2026-03-02T09:00:00 01:00" is not an RFC 3339 time: it has a space where a + offset would be (2026-03-02T09:00:00+01:00); in a URL query a + reads as a space: send + as %2B (2026-03-02T09:00:00%2B01:00)`},
		{"/v1/decisions?until=2026-03-02T09:00:00.5+05:30",
			`until "2026-03-02T09:00:00.5 05:30" is not an RFC 3339 time: it has a space where a + offset would be (2026-03-02T09:00:00.5+05:30); in a URL query a + reads as a space: send + as %2B (2026-03-02T09:00:00.5%2B05:30)`},
		{"/v1/timeline?since=2026-03-02%2009:00:00Z", `since "2026-03-02 09:00:00Z" is not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)`},
	} {
		code, b := do(t, "GET", srv.url+tc.path, "")
		if e := errorBody(t, b); code != 400 || e.Error != "invalid_request" || e.Detail != tc.detail {
			t.Errorf("%s: %d %s, want 400 invalid_request %q", tc.path, code, b, tc.detail)
		}
	}
	code, b = do(t, "GET", srv.url+"/v1/timeline?since=2026-03-02T10:00:00%2B01:00&until=2026-03-02T10:30:00%2B01:00", "")
	testutil.NoError(t, json.Unmarshal(b, &tl))
	if code != 200 || tl.Since != "2026-03-02T09:00:00.000Z" || tl.Until != "2026-03-02T09:30:00.000Z" {
		t.Errorf("offset sent as %%2B: %d %s", code, b)
	}
}
