package archtest

import (
	"go/build"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/fledger/fledger"

// layers is docs/architecture.md's table: every package of the module and
// its layer. A package imports (outside its tests) only packages of a lower
// layer, or packages of its own top-level folder in the same layer (e.g.
// commands/config → commands/policy, projections/export → projections).
// A new package must be added here, where the layout says it belongs.
var layers = map[string]int{
	// 0 plumbing: leaves that import nothing of ours.
	"internal/natsserver": 0,
	"internal/interrupt":  0,
	"internal/filelock":   0,
	"internal/natstest":   0,
	"internal/redact":     0,
	"internal/termtext":   0,
	"internal/sqlitedb":   0,
	"internal/archtest":   0,
	// ui: the incident viewer page's embedded files (serve mounts it).
	"ui": 0,
	// deploy/prometheus holds only a test: the shipped alert rules parsed
	// with Prometheus's own rule parser.
	"deploy/prometheus": 0,
	// 2 test support over the store.
	"internal/testutil": 2,
	// 1 the event model and its store.
	"events": 1,
	// 2 schemas of the events and the files users write.
	"schemas":     2,
	"schemas/gen": 2,
	// the OpenAPI document's lint and answer checks (imported by tests).
	"internal/apispec": 2,
	// 3 the pure deciders.
	"commands/classify": 3,
	"commands/config":   3,
	"commands/policy":   3,
	// 4 the turn engine.
	"engine": 4,
	// 5 the read side.
	"projections":         5,
	"projections/export":  5,
	"projections/metrics": 5,
	// 6 replay and the scenario runner, over engine and projections.
	"replay":            6,
	"internal/scenario": 6,
	// 7 the API.
	"serve":        7,
	"serve/client": 7,
	// 8 tooling over the API.
	"internal/bench": 8,
	// 9 the binary.
	"cmd/fledger": 9,
}

// natsAllowed are the packages that may import the NATS client outside
// their tests: the store and its embedded server, and the tests' helpers
// (natstest: servers, foreign clients, a JetStream client of a test
// server). serve imports only the micro package's handler types; its
// connection comes from the store.
// A trailing "/..." allows a module's packages.
var natsAllowed = map[string][]string{
	"events":              {"github.com/nats-io/nats.go", "github.com/nats-io/nats.go/jetstream", "github.com/nats-io/nats.go/micro"},
	"internal/natsserver": {"github.com/nats-io/nats.go", "github.com/nats-io/nats-server/v2/..."},
	"internal/natstest":   {"github.com/nats-io/nats.go", "github.com/nats-io/nats.go/jetstream", "github.com/nats-io/nats-server/v2/..."},
	"serve":               {"github.com/nats-io/nats.go/micro"},
}

// packages returns every package directory of the module, relative to its
// root, with its non-test imports.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "fledger-data") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files (or only tests)
		}
		rel, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func top(rel string) string { return strings.SplitN(rel, "/", 2)[0] }

// TestLayers fails on a package missing from the table and on every
// import that points up (or sideways into another folder of the same
// layer).
func TestLayers(t *testing.T) {
	pkgs := packages(t)
	names := make([]string, 0, len(pkgs))
	for rel := range pkgs {
		names = append(names, rel)
	}
	sort.Strings(names)
	for _, rel := range names {
		l, ok := layers[rel]
		if !ok {
			t.Errorf("package %s is not in the layer table: add it where docs/architecture.md says it belongs", rel)
			continue
		}
		for _, imp := range pkgs[rel] {
			dep, ours := strings.CutPrefix(imp, module+"/")
			if !ours {
				continue
			}
			dl, ok := layers[dep]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which is not in the layer table", rel, dep)
			case dl > l || (dl == l && top(dep) != top(rel)):
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point down only", rel, l, dep, dl)
			}
		}
	}
	for rel := range layers {
		if _, ok := pkgs[rel]; !ok && rel != "internal/archtest" {
			t.Errorf("the layer table names %s, which has no package", rel)
		}
	}
}

// TestOnlyEventsTouchesNATS fails when a package other than the store
// imports the NATS client: everyone else reads and writes the stream
// through events.Store.
func TestOnlyEventsTouchesNATS(t *testing.T) {
	for rel, imps := range packages(t) {
		for _, imp := range imps {
			if !strings.HasPrefix(imp, "github.com/nats-io/") {
				continue
			}
			allowed := false
			for _, a := range natsAllowed[rel] {
				prefix, tree := strings.CutSuffix(a, "/...")
				allowed = allowed || a == imp || (tree && strings.HasPrefix(imp, prefix+"/"))
			}
			if !allowed {
				t.Errorf("%s imports %s: only events (and its embedded server) may touch NATS", rel, imp)
			}
		}
	}
}
