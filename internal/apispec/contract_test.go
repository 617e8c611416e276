package apispec_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/apispec"
)

const contractDoc = `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /v1/things/{id}:
    get:
      operationId: getThing
      parameters:
        - {name: id, in: path, required: true, description: "The id", schema: {type: string}}
      responses:
        "200":
          description: The thing
          content:
            application/json:
              schema:
                type: object
                required: [id]
                properties:
                  id: {type: string, description: "The id"}
        "425":
          description: Too early
          headers:
            Retry-After: {required: true, description: "Seconds", schema: {type: integer}}
          content:
            application/json:
              schema: {$ref: "#/components/schemas/ErrorBody"}
components:
  schemas:
    ErrorBody:
      type: object
      required: [error, detail]
      additionalProperties: false
      properties:
        error: {type: string, description: "Code"}
        detail: {type: string, description: "Words"}
`

// Check accepts an answer that keeps the document and says how each kind
// of answer breaks it.
func TestContract_Check(t *testing.T) {
	c, err := apispec.NewContract([]byte(contractDoc))
	if err != nil {
		t.Fatal(err)
	}
	json := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		op, code           string
		// err is the error's text, or its start when it ends in "…" (the
		// rest is kin-openapi's own words); "" = it keeps the contract.
		err string
	}{
		{"keeps it", "GET", "/v1/things/1", 200, json, `{"id":"1"}`, "getThing", "", ""},
		{"HEAD is its GET without the body", "HEAD", "/v1/things/1", 200, json, ``, "getThing", "", ""},
		{"a field not in the document", "GET", "/v1/things/1", 200, json, `{"id":"1","extra":2}`, "getThing", "",
			"GET /v1/things/1 (getThing) answered 200: field extra is not in the document"},
		{"a body not of its schema", "GET", "/v1/things/1", 200, json, `{"id":1}`, "getThing", "",
			"GET /v1/things/1 (getThing) answered 200: response body doesn't match schema…"},
		{"a status not declared", "GET", "/v1/things/1", 404, json, `{"error":"not_found","detail":"x"}`, "getThing", "not_found",
			"GET /v1/things/1 (getThing) answered 404: status is not supported"},
		{"a Content-Type not declared", "GET", "/v1/things/1", 200, http.Header{"Content-Type": {"text/plain"}}, `1`, "getThing", "",
			`GET /v1/things/1 (getThing) answered 200: response header Content-Type has unexpected value: "text/plain"`},
		{"a required header missing", "GET", "/v1/things/1", 425, json, `{"error":"wait_not_over","detail":"x"}`, "getThing", "wait_not_over",
			`GET /v1/things/1 (getThing) answered 425: response header "Retry-After" missing`},
		{"no operation: an error body", "POST", "/v1/nothing", 404, json, `{"error":"not_found","detail":"x"}`, "", "not_found", ""},
		{"no operation: not an error body", "GET", "/v1/nothing", 404, json, `{"error":"not_found"}`, "", "not_found",
			"404 on no operation: not an ErrorBody: …"},
		{"no operation: a 405 without Allow", "DELETE", "/v1/things/1", 405, json, `{"error":"method_not_allowed","detail":"x"}`, "", "method_not_allowed",
			"405 without an Allow header"},
		{"no operation: a success", "GET", "/v1/nothing", 200, json, `{}`, "", "",
			"status 200 on a path and method of no operation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := c.Check(httptest.NewRequest(tc.method, tc.path, nil), tc.status, tc.header, []byte(tc.body))
			got := ""
			if a.Err != nil {
				got = a.Err.Error()
			}
			ok := got == tc.err
			if prefix, cut := strings.CutSuffix(tc.err, "…"); cut {
				ok = strings.HasPrefix(got, prefix)
			}
			if !ok || a.Operation != tc.op || a.Code != tc.code || a.Status != tc.status {
				t.Errorf("Check = op %q code %q status %d err %q\nwant op %q code %q status %d err %q", a.Operation, a.Code, a.Status, got, tc.op, tc.code, tc.status, tc.err)
			}
		})
	}
}
