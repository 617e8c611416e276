package serve_test

import (
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// TestTurn_EvictedAnswersAsBefore: with one finished turn kept in memory,
// an older finished turn is evicted from the engine and still answered as
// before: GET /v1/turns/{id}, a late duplicate outcome, a begin with its
// id (same session replays, another session is turn_exists).
func TestTurn_EvictedAnswersAsBefore(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) {
		c.EngineOptions = append(c.EngineOptions, engine.WithFinishedTurns(1))
	})
	run := func(id string) (string, string) {
		t.Helper()
		status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s1","turn_id":"`+id+`"}`)
		if status != 200 {
			t.Fatalf("begin %s: %d %s", id, status, b)
		}
		status, out := do(t, "POST", srv.url+"/v1/turns/"+id+"/outcomes", `{"attempt":1,"ok":true}`)
		if status != 200 {
			t.Fatalf("outcome %s: %d %s", id, status, out)
		}
		status, view := do(t, "GET", srv.url+"/v1/turns/"+id, "")
		if status != 200 {
			t.Fatalf("get %s: %d %s", id, status, view)
		}
		return string(out), string(view)
	}
	_, view := run("a")
	// The answers while turn a is in memory.
	beginStatus, beginBody := do(t, "POST", srv.url+"/v1/turns", `{"session":"s1","turn_id":"a"}`)
	dupStatus, dupBody := do(t, "POST", srv.url+"/v1/turns/a/outcomes", `{"attempt":1,"ok":true}`)
	run("b")
	run("c")
	if _, ok := serve.EngineOf(srv.svc, "main").Turn("a"); ok {
		t.Fatal("turn a is still in the engine's memory")
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"get", "GET", "/v1/turns/a", "", 200, view},
		{"late duplicate outcome", "POST", "/v1/turns/a/outcomes", `{"attempt":1,"ok":true}`, dupStatus, string(dupBody)},
		{"begin, same session", "POST", "/v1/turns", `{"session":"s1","turn_id":"a"}`, beginStatus, string(beginBody)},
		{"begin, other session", "POST", "/v1/turns", `{"session":"s2","turn_id":"a"}`, 409, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, b := do(t, tc.method, srv.url+tc.path, tc.body)
			if status != tc.status || (tc.want != "" && string(b) != tc.want) {
				t.Fatalf("%d %s, want %d %s", status, b, tc.status, tc.want)
			}
			if tc.status == 409 && errorBody(t, b).Error != serve.CodeTurnExists {
				t.Fatalf("error %s, want %s", b, serve.CodeTurnExists)
			}
		})
	}
}
