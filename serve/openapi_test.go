package serve_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

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
