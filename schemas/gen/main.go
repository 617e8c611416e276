// Command gen writes the JSON Schema (2020-12) of every registered event
// type's current version to schemas/events/<Type>.v<N>.json, the schemas
// of the stored envelope and commit and of the decision record
// (schemas/envelope.v1.json, commit.v1.json, decision-record.v1.json: see
// records.go), the DecisionRecord component of openapi.v1.yaml (the
// decision record's schema as YAML: openapi.go) and the event catalog
// section of docs/events.md, from the Go structs in events/ (reflection
// for shapes, go/ast doc comments for descriptions, `enum` struct tags for
// value sets).
//
// Run it from schemas/ with `go generate` (see ../events.go). Older
// versions' schema files are never rewritten or deleted: a stored event is
// forever, and so is the schema it was written under. gen_test.go fails
// when the checked-in files differ from what gen would write.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	eventsDir := flag.String("events", "../events", "directory of the events package sources")
	outDir := flag.String("out", "events", "directory for the event schema files")
	storedDir := flag.String("stored", ".", "directory for the envelope, commit and decision record schemas")
	docs := flag.String("docs", "../docs/events.md", "markdown file whose generated catalog section is rewritten")
	openapi := flag.String("openapi", "openapi.v1.yaml", "OpenAPI document whose generated DecisionRecord component is rewritten")
	flag.Parse()
	files, err := generate(*eventsDir, *outDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for name, b := range files.schemas {
		if err := writeIfChanged(filepath.Join(*outDir, name), b); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
	for name, b := range files.stored {
		if err := writeIfChanged(filepath.Join(*storedDir, name), b); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
	spec, err := os.ReadFile(*openapi)
	if err == nil {
		spec, err = spliceComponent(spec, files.component)
	}
	if err == nil {
		err = writeIfChanged(*openapi, spec)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	doc, err := os.ReadFile(*docs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	out, err := spliceCatalog(doc, files.catalog)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := writeIfChanged(*docs, out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func writeIfChanged(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(path, b, 0o644)
}
