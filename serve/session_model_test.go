package serve_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// `/model p/m@profile` selects the model and pins the profile (user);
// an unknown profile or one of another provider is 422 naming it, and a
// model that is not provider/model is 400. Rejections append nothing.
func TestHTTP_ModelAtProfileSelectsAndPins(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	status, b := do(t, "POST", srv.url+"/v1/sessions/main/s/model", `{"model":"openai/gpt-5@openai:a"}`)
	if status != 200 {
		t.Fatalf("select: %d %s", status, b)
	}
	var res serve.SessionCommandResult
	testutil.NoError(t, json.Unmarshal(b, &res))
	if v := res.Session; v.Model != "openai/gpt-5" || v.Pin != "openai:a" || v.PinSource != "user" {
		t.Fatalf("session after /model p/m@profile: %+v", v)
	}
	step, err := srv.cl.Begin(ctx, client.BeginRequest{Session: "s"})
	testutil.NoError(t, err)
	if n := step.Next; n.Action != "call" || n.Provider != "openai" || n.Model != "gpt-5" || n.Profile != "openai:a" {
		t.Fatalf("first call %+v", n)
	}

	before := testutil.LastSeq(t, st)
	for _, c := range []struct {
		body, code, names string
		status            int
	}{
		{`{"model":"openai/gpt-5@nope:zzz"}`, serve.CodeUnknownProfile, "nope:zzz", 422},
		{`{"model":"openai/gpt-5@anthropic:a"}`, serve.CodeInvalidRequest, "anthropic:a", 422},
		{`{"model":"gpt-5"}`, serve.CodeInvalidRequest, "gpt-5", 400},
		{`{"model":"openai/gpt-5@"}`, serve.CodeInvalidRequest, "openai/gpt-5@", 400},
		{`{"model":"openai/gpt-5@openai:a","profile":"anthropic:b"}`, serve.CodeInvalidRequest, "anthropic:b", 400},
	} {
		status, b := do(t, "POST", srv.url+"/v1/sessions/main/s2/model", c.body)
		eb := errorBody(t, b)
		if status != c.status || eb.Error != c.code || !strings.Contains(eb.Detail, c.names) {
			t.Errorf("%s: %d %s, want %d %s naming %s", c.body, status, b, c.status, c.code, c.names)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("rejected selections appended (%d → %d)", before, now)
	}
}
