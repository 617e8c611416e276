package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// Root is the module's root directory: the nearest directory holding
// go.mod at or above the test's working directory (its package's).
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// Scenarios returns the paths of the fixture scenarios
// (fixtures/scenarios/*.yaml), sorted, and fails the test when there are
// none.
func Scenarios(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(Root(t), "fixtures", "scenarios", "*.yaml"))
	NoError(t, err)
	if len(files) == 0 {
		t.Fatal("no scenarios in fixtures/scenarios")
	}
	return files
}

// EachScenario runs f in a subtest per fixture scenario, named by its
// file name, with the scenario's path.
func EachScenario(t *testing.T, f func(t *testing.T, path string)) {
	t.Helper()
	for _, path := range Scenarios(t) {
		t.Run(filepath.Base(path), func(t *testing.T) { f(t, path) })
	}
}
