package serve_test

import (
	"encoding/json"
	"fmt"
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
		{`{"model":"openai/gpt-5@"}`, serve.CodeInvalidRequest, `"openai/gpt-5@" ends in @ with no profile after it (a profile is provider:name)`, 400},
		{`{"model":"lmstudio/My Model.gguf"}`, serve.CodeInvalidRequest, `model "My Model.gguf" contains whitespace or control characters`, 400},
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

// Real provider model ids that hold '@', ':' or '/' are selected whole, by
// `/model` and by a begin with a model; only an '@' starting a
// provider:name profile id pins.
func TestHTTP_ModelIDsWithAtAreModels(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	for i, c := range []struct{ model, selected, pin string }{
		{"vertex/claude-3-5-sonnet@20240620", "vertex/claude-3-5-sonnet@20240620", ""},
		{"cloudflare/@cf/meta/llama-3-8b-instruct", "cloudflare/@cf/meta/llama-3-8b-instruct", ""},
		{"openrouter/meta-llama/llama-3.1-8b-instruct:free", "openrouter/meta-llama/llama-3.1-8b-instruct:free", ""},
		{"openai/ft:gpt-4o@2024@openai:a", "openai/ft:gpt-4o@2024", "openai:a"},
	} {
		session := fmt.Sprintf("at%d", i)
		status, b := do(t, "POST", srv.url+"/v1/sessions/main/"+session+"/model", fmt.Sprintf(`{"model":%q}`, c.model))
		var res serve.SessionCommandResult
		if status != 200 || json.Unmarshal(b, &res) != nil || res.Session.Model != c.selected || res.Session.Pin != c.pin {
			t.Fatalf("/model %s: %d %s; want %s pinning %q", c.model, status, b, c.selected, c.pin)
		}
		status, b = do(t, "POST", srv.url+"/v1/turns", fmt.Sprintf(`{"session":"b%s","model":%q,"turn_id":"t%d"}`, session, c.model, i))
		var step struct {
			Next struct{ Provider, Model string }
		}
		if status != 200 || json.Unmarshal(b, &step) != nil || step.Next.Provider+"/"+step.Next.Model != c.selected {
			t.Fatalf("begin with %s: %d %s; want a call of %s", c.model, status, b, c.selected)
		}
	}
}
