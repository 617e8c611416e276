package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGenerated_FilesAreUpToDate fails when schemas/events or the catalog
// section of docs/events.md differ from what `go generate ./schemas` would
// write, e.g. after a payload struct changed.
func TestGenerated_FilesAreUpToDate(t *testing.T) {
	out, err := generate("../../events", "../events")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range out.schemas {
		got, err := os.ReadFile(filepath.Join("..", "events", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("schemas/events/%s is stale or missing (%v): run `go generate ./schemas`", name, err)
		}
	}
	for name, want := range out.stored {
		got, err := os.ReadFile(filepath.Join("..", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("schemas/%s is stale or missing (%v): run `go generate ./schemas`", name, err)
		}
	}
	spec, err := os.ReadFile("../openapi.v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want, err := spliceComponent(spec, out.component); err != nil || !bytes.Equal(spec, want) {
		t.Errorf("schemas/openapi.v1.yaml's DecisionRecord component is stale (%v): run `go generate ./schemas`", err)
	}
	doc, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := spliceCatalog(doc, out.catalog)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, want) {
		t.Errorf("docs/events.md catalog section is stale: run `go generate ./schemas`")
	}
}
