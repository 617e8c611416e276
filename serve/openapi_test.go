package serve_test

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fledger/fledger/internal/apispec"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// Every route the server registers is documented in
// schemas/openapi.v1.yaml, and every documented path is served.
func TestOpenAPI_CoversEveryRoute(t *testing.T) {
	raw, err := os.ReadFile("../schemas/openapi.v1.yaml")
	testutil.NoError(t, err)
	js, err := yaml.YAMLToJSON(raw)
	testutil.NoError(t, err)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	testutil.NoError(t, json.Unmarshal(js, &doc))
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	served := map[string]bool{}
	for _, r := range serve.Routes {
		served[r.Method+" "+r.Path] = true
		if _, ok := doc.Paths[r.Path][strings.ToLower(r.Method)]; !ok {
			t.Errorf("route %s %s is not in the OpenAPI document", r.Method, r.Path)
		}
	}
	for p, ops := range doc.Paths {
		for m := range ops {
			if !served[strings.ToUpper(m)+" "+p] {
				t.Errorf("documented %s %s is not served", m, p)
			}
		}
	}
}

// Every status the server can answer is declared, for each operation that
// can answer it, with its error codes; the list is derived from the code:
// the guard (405, 413 and 500 anywhere, 401 unless the route is open, 400
// for a GET's query, 403 cross_origin anywhere), the request decoding (400 and 415 on every body
// route, that is every POST), the store (503 on every route but /metrics;
// 404 where an agent or a turn is looked up) and the error table (each
// row's status and code on at least one operation). Each operation
// declares exactly the query parameters the server takes (a POST none).
func TestOpenAPI_DeclaresEveryStatus(t *testing.T) {
	raw, err := os.ReadFile("../schemas/openapi.v1.yaml")
	testutil.NoError(t, err)
	doc, err := apispec.Load(raw)
	testutil.NoError(t, err)
	declared := map[serve.ErrorAnswer]bool{}
	for _, r := range serve.Routes {
		op := r.Method + " " + r.Path
		o := doc.Paths.Value(r.Path).GetOperation(r.Method)
		if o == nil {
			t.Errorf("%s: not in the document", op)
			continue
		}
		want := []int{405, 413, 500, 400}
		if !slices.Contains(serve.OpenRoutes, op) {
			want = append(want, 401)
		}
		if r.Method == "POST" {
			want = append(want, 415)
		}
		want = append(want, 403) // cross_origin (a Host not loopback without a token; a POST from another origin), read_only (fledger view)
		if r.Path != "/metrics" {
			want = append(want, 503)
		}
		if strings.HasPrefix(r.Path, "/v1/") {
			want = append(want, 404)
		}
		for _, status := range want {
			if o.Responses.Status(status) == nil {
				t.Errorf("%s: status %d is not declared", op, status)
			}
		}
		for status, ref := range o.Responses.Map() {
			for _, a := range mustSee() {
				if strconv.Itoa(a.Status) == status && ref.Value != nil && ref.Value.Description != nil && strings.Contains(*ref.Value.Description, a.Code) {
					declared[a] = true
				}
			}
		}
		if _, ok := serve.RouteQuery[op]; !ok {
			t.Errorf("%s: serve.RouteQuery has no entry (list the query parameters it takes, none = {})", op)
		}
		var query []string
		for _, p := range o.Parameters {
			if p.Value.In == "query" {
				query = append(query, p.Value.Name)
			}
		}
		takes := slices.Clone(serve.RouteQuery[op])
		slices.Sort(query)
		slices.Sort(takes)
		if !slices.Equal(query, takes) {
			t.Errorf("%s: the document declares query parameters %v, the server takes %v", op, query, takes)
		}
	}
	for _, a := range mustSee() {
		if !declared[a] {
			t.Errorf("%d %s: no operation declares it (a response of that status naming the code)", a.Status, a.Code)
		}
	}
}
