package schemas_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fledger/fledger/schemas"
)

// Every fixture scenario and config starts with a yaml-language-server
// modeline naming its schema (so editors validate it), and that schema
// validates it.
func TestFixtures_ModelineNamesASchemaThatValidates(t *testing.T) {
	for _, tc := range []struct{ dir, schema string }{
		{"scenarios", "scenario.v1.json"},
		{"configs", "config.v1.json"},
	} {
		files, err := filepath.Glob(filepath.Join("..", "fixtures", tc.dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("fixtures/%s: %v %v", tc.dir, files, err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(raw), "\n")
			want := "# yaml-language-server: $schema=../../schemas/" + tc.schema
			if first != want {
				t.Errorf("%s: first line %q, want %q", f, first, want)
				continue
			}
			named, err := filepath.Rel("..", filepath.Join(filepath.Dir(f), strings.TrimPrefix(first, "# yaml-language-server: $schema=")))
			if err != nil || named != filepath.Join("schemas", tc.schema) {
				t.Errorf("%s: the modeline names %s (%v)", f, named, err)
				continue
			}
			js, err := yaml.YAMLToJSON(raw)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if err := schemas.Validate(tc.schema, js); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
