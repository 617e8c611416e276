package serve_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// typesSince are the types of the events stored after seq, in order.
func typesSince(t *testing.T, st events.Store, seq uint64) []string {
	t.Helper()
	var out []string
	for ev, err := range st.Read(testutil.Context(t), seq+1) {
		testutil.NoError(t, err)
		out = append(out, ev.Type)
	}
	return out
}

// The breaker's item 1: a begin with a model re-sent with the same turn_id
// and session appends nothing (answered replayed; with another request 409
// begin_mismatch naming the field), a begin refused with 409 turn_exists
// stores nothing on the other session, and the failure that follows
// records no live switch.
func TestHTTP_ResentBeginWithAModelAppendsNothing(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	before := testutil.LastSeq(t, st)
	status, first := do(t, "POST", srv.url+"/v1/turns", `{"session":"rd","turn_id":"rd1","model":"openai/gpt-5"}`)
	if status != 200 {
		t.Fatalf("begin: %d %s", status, first)
	}
	if got, want := typesSince(t, st, before), []string{"SessionModelSelected", "TurnStarted", "AttemptStarted"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("begin appended %v, want %v", got, want)
	}
	const call = `{"turn_id":"rd1","agent":"main","next":{"action":"call","provider":"openai","model":"gpt-5","profile":"openai:a","attempt":1,"kind":"first","notices":[]}`
	if strings.TrimSpace(string(first)) != call+"}" {
		t.Fatalf("begin answered %s", first)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		answer     string
	}{
		{"identical", `{"session":"rd","turn_id":"rd1","model":"openai/gpt-5"}`, 200, call + `,"replayed":true}`},
		{"identical again", `{"session":"rd","turn_id":"rd1","model":"openai/gpt-5","source":"user","chat":"direct"}`, 200, call + `,"replayed":true}`},
		{"another model", `{"session":"rd","turn_id":"rd1","model":"anthropic/claude-opus-4-6"}`, 409,
			`{"error":"begin_mismatch","detail":"turn rd1 was begun with model \"openai/gpt-5\"; this begin asks \"anthropic/claude-opus-4-6\": a re-sent begin must repeat the original request (a new turn needs a new turn_id)"}`},
		{"a cron model", `{"session":"rd","turn_id":"rd1","model":"openai/gpt-5","source":"cron"}`, 409,
			`{"error":"begin_mismatch","detail":"turn rd1 was begun with source \"user\"; this begin asks \"cron\": a re-sent begin must repeat the original request (a new turn needs a new turn_id)"}`},
		{"another session", `{"session":"victim","turn_id":"rd1","model":"anthropic/claude-opus-4-6"}`, 409,
			`{"error":"turn_exists","detail":"turn already exists: \"rd1\" (session \"rd\")"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := testutil.LastSeq(t, st)
			status, b := do(t, "POST", srv.url+"/v1/turns", tc.body)
			if status != tc.status || strings.TrimSpace(string(b)) != tc.answer {
				t.Fatalf("%d %s\nwant %d %s", status, b, tc.status, tc.answer)
			}
			if got := typesSince(t, st, before); got != nil {
				t.Fatalf("appended %v", got)
			}
		})
	}
	if status, b := do(t, "GET", srv.url+"/v1/sessions/main/victim", ""); status != 200 || strings.TrimSpace(string(b)) != `{"agent":"main","session":"victim","compaction_count":0}` {
		t.Fatalf("victim after the refused begin: %d %s", status, b)
	}
	before = testutil.LastSeq(t, st)
	status, b := do(t, "POST", srv.url+"/v1/turns/rd1/outcomes", `{"attempt":1,"error":{"status":500}}`)
	if status != 200 {
		t.Fatalf("outcome: %d %s", status, b)
	}
	for _, ty := range typesSince(t, st, before) {
		if ty == "LiveSwitchMarked" || ty == "FallbackStepped" || ty == "TurnSwitched" {
			t.Fatalf("the failure after re-sent begins appended %v", typesSince(t, st, before))
		}
	}
}

// Re-sent begins with a model racing on two instances (a gateway whose
// answer was lost retrying while the first is still in flight): one
// TurnStarted, one selection, every answer the same call.
func TestHTTP_RacingResentBeginsRecordOnce(t *testing.T) {
	st, a, b := twoServers(t, engine.WithSeeds(func(string) uint64 { return 42 }))
	const body = `{"session":"race","turn_id":"race1","model":"openai/gpt-5@openai:a"}`
	status := make([]int, 6)
	answers := make([][]byte, 6)
	var wg sync.WaitGroup
	for i := range status {
		srv := []*server{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			status[i], answers[i] = do(t, "POST", srv.url+"/v1/turns", body)
		}()
	}
	wg.Wait()
	replayed := 0
	for i := range status {
		var s serve.TurnStep
		if status[i] != 200 || json.Unmarshal(answers[i], &s) != nil {
			t.Fatalf("begin %d: %d %s", i, status[i], answers[i])
		}
		if s.Replayed {
			replayed++
		}
		if n := s.Next; n.Action != "call" || n.Provider != "openai" || n.Model != "gpt-5" || n.Profile != "openai:a" || n.Attempt != 1 {
			t.Fatalf("begin %d: next %+v", i, n)
		}
	}
	if replayed != 5 {
		t.Fatalf("%d of 6 answers replayed, want 5", replayed)
	}
	count := map[string]int{}
	for ev, err := range st.Read(testutil.Context(t), 1) {
		testutil.NoError(t, err)
		count[ev.Type]++
	}
	if count["TurnStarted"] != 1 || count["SessionModelSelected"] != 1 || count["SessionAuthPinned"] != 1 {
		t.Fatalf("stream holds %v, want one TurnStarted, SessionModelSelected and SessionAuthPinned", count)
	}
}

// The micro endpoint turns.begin takes the same path: a re-sent begin with
// a model appends nothing there either, and another model is 409
// begin_mismatch.
func TestMicro_ResentBeginAppendsNothing(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	nc := natstest.DialWriter(t, st)
	req := serve.BeginRequest{Session: "m", TurnID: "m1", Model: "openai/gpt-5"}
	var begun serve.TurnStep
	microCall(t, nc, "turns.begin", req, &begun)
	before := testutil.LastSeq(t, st)
	var again serve.TurnStep
	microCall(t, nc, "turns.begin", req, &again)
	if !again.Replayed || again.Next.Attempt != 1 || begun.Replayed {
		t.Fatalf("begin %+v, re-sent %+v", begun, again)
	}
	other := req
	other.Model = "anthropic/claude-opus-4-6"
	m := microCall(t, nc, "turns.begin", other, nil)
	if code := m.Header.Get("Nats-Service-Error-Code"); code != "409" {
		t.Fatalf("another model: error code %q, body %s", code, m.Data)
	}
	if got := typesSince(t, st, before); got != nil {
		t.Fatalf("re-sent begins appended %v", got)
	}
}

// GET /v1/turns/{id} of a turn whose TurnStarted holds an empty chain (a
// forged commit) answers 500 naming the turn and its empty chain, never a
// next of action "".
func TestHTTP_EmptyChainTurnAnswersNoStep(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	ev := events.New("main", "forged", testutil.T0, events.TurnStarted{TurnID: "forged", Session: "s1", Chat: "direct",
		Requested: events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}, SelectionSource: "default", Chain: []events.Candidate{},
		ConfigHash: "sha256:unknown", AttemptLimit: 40, StartedAt: events.Millis(testutil.T0)})
	res, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, "forged"), 0, ev)
	testutil.NoError(t, err)
	want := fmt.Sprintf(`{"error":"internal","detail":"turn forged has no next step: its TurnStarted holds an empty candidate chain (\"chain\": []; no engine writes one), so there is no model to call (last commit seq %d, phase running)"}`, res.Seq)
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/turns/forged", ""},
		{"POST", "/v1/turns/forged/resume", `{}`},
		{"POST", "/v1/turns", `{"session":"s1","turn_id":"forged"}`},
	} {
		status, b := do(t, r.method, srv.url+r.path, r.body)
		if status != 500 || strings.TrimSpace(string(b)) != want {
			t.Fatalf("%s %s: %d %s\nwant 500 %s", r.method, r.path, status, b, want)
		}
	}
}
