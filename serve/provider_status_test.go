package serve_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fledger/fledger/serve"
)

// An outcome's error.status is a number or a string — a numeric string
// is the HTTP status, any other (a gRPC status name) is read as a code —
// and the refusal of another JSON value says so, over HTTP and the micro
// service alike; RESOURCE_EXHAUSTED is taken (and read as a rate limit).
func TestHTTP_ProviderErrorStatusShapes(t *testing.T) {
	srv, _, mc := strictServer(t)
	for _, id := range []string{"ps1", "ps2"} {
		if status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s","turn_id":"`+id+`"}`); status != 200 {
			t.Fatalf("begin %s: %d %s", id, status, b)
		}
	}
	const shape = `error.status: expected a number or a string (an HTTP status, or a status name such as "RESOURCE_EXHAUSTED", read as a code), got `
	for _, c := range []struct{ status, got string }{{"true", "boolean"}, {"{}", "object"}, {"[429]", "array"}} {
		want := serve.ErrorBody{Error: serve.CodeInvalidJSON, Detail: shape + c.got}
		status, b := do(t, "POST", srv.url+"/v1/turns/ps1/outcomes", `{"attempt":1,"error":{"status":`+c.status+`}}`)
		if got := errorBody(t, b); status != 400 || got != want {
			t.Errorf("status %s: HTTP %d %s, want 400 %+v", c.status, status, b, want)
		}
		if code, eb := microAnswer(t, mc, "turns.outcome", `{"turn_id":"ps1","attempt":1,"error":{"status":`+c.status+`}}`); code != "400" || eb != want {
			t.Errorf("status %s: micro %s %+v, want 400 %+v", c.status, code, eb, want)
		}
	}
	for _, id := range []string{"ps1", "ps2"} {
		status, b := do(t, "POST", srv.url+"/v1/turns/"+id+"/outcomes", `{"attempt":1,"error":{"status":"RESOURCE_EXHAUSTED"}}`)
		var step serve.TurnStep
		if status != 200 || json.Unmarshal(b, &step) != nil || step.Next.Action == "" {
			t.Fatalf("status RESOURCE_EXHAUSTED on %s: %d %s, want a next step", id, status, b)
		}
	}
	status, b := do(t, "GET", srv.url+"/v1/turns/ps1/explanation", "")
	if status != 200 || !json.Valid(b) || !bytes.Contains(b, []byte(`"rate_limit"`)) {
		t.Fatalf("explanation of ps1: %d %s, want its attempt read as a rate limit", status, b)
	}
}
