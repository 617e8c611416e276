package schemas_test

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fledger/fledger/schemas"
)

// Every schema file has one $id base: schemas/<path> is
// https://fledger.dev/schemas/<path>, and declares JSON Schema 2020-12.
func TestSchemas_OneIDBase(t *testing.T) {
	files := schemas.Files()
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if len(paths) < 30 {
		t.Fatalf("only %d schema files: %v", len(paths), paths)
	}
	for _, p := range paths {
		var head struct {
			Schema string `json:"$schema"`
			ID     string `json:"$id"`
		}
		if err := json.Unmarshal(files[p], &head); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if want := "https://fledger.dev/schemas/" + p; head.ID != want {
			t.Errorf("%s: $id %q, want %q", p, head.ID, want)
		}
		if head.Schema != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema %q", p, head.Schema)
		}
		if strings.Contains(string(files[p]), "github.com/fledger/fledger/schemas") {
			t.Errorf("%s still names the old base github.com/fledger/fledger/schemas", p)
		}
		if _, err := schemas.Compile(p); err != nil {
			t.Errorf("%s does not compile: %v", p, err)
		}
	}
}

// The OpenAPI document's DecisionRecord component is
// schemas/decision-record.v1.json without $schema and $id, and it is what
// GET /v1/decisions lists, so a generated client types each decision.
func TestOpenAPI_DecisionRecordIsTheSchema(t *testing.T) {
	raw, err := os.ReadFile("openapi.v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	var component, view, want map[string]any
	if err := json.Unmarshal(doc.Components.Schemas["DecisionRecord"], &component); err != nil {
		t.Fatalf("components.schemas.DecisionRecord: %v", err)
	}
	if err := json.Unmarshal(schemas.Files()["decision-record.v1.json"], &want); err != nil {
		t.Fatal(err)
	}
	delete(want, "$schema")
	delete(want, "$id")
	if !reflect.DeepEqual(component, want) {
		a, _ := json.Marshal(component)
		b, _ := json.Marshal(want)
		t.Fatalf("components.schemas.DecisionRecord differs from decision-record.v1.json:\n got %s\nwant %s", a, b)
	}
	if err := json.Unmarshal(doc.Components.Schemas["DecisionsView"], &view); err != nil {
		t.Fatalf("components.schemas.DecisionsView: %v", err)
	}
	items := view["properties"].(map[string]any)["decisions"].(map[string]any)["items"]
	if !reflect.DeepEqual(items, map[string]any{"$ref": "#/components/schemas/DecisionRecord"}) {
		t.Fatalf("DecisionsView.decisions.items = %v, want the DecisionRecord component", items)
	}
}
