package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// Each file gets its own consumer, the same whatever path names it.
func TestFileConsumer(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs := func(p string) string { return filepath.Join(dir, p) }
	sub := filepath.Join(dir, "sub")
	testutil.NoError(t, os.Mkdir(sub, 0o755))
	name := func(p string) string {
		t.Helper()
		n, err := FileConsumer(p)
		testutil.NoError(t, err)
		return n
	}
	if got := name("/tmp/a.jsonl"); got != "fledger-export-jsonl-dbd9f7b9" { // sha256("/tmp/a.jsonl")
		t.Fatalf("FileConsumer(/tmp/a.jsonl) = %s, want fledger-export-jsonl-dbd9f7b9", got)
	}
	for _, tc := range []struct{ a, b string }{
		{"a.jsonl", abs("a.jsonl")},
		{"./sub/../a.jsonl", abs("a.jsonl")},
		{abs("sub//x/../a.jsonl"), filepath.Join(sub, "a.jsonl")},
	} {
		if name(tc.a) != name(tc.b) {
			t.Errorf("%s and %s, one file, got %s and %s", tc.a, tc.b, name(tc.a), name(tc.b))
		}
	}
	if name("a.jsonl") == name("sub/a.jsonl") || name("a.jsonl") == name("b.jsonl") {
		t.Fatalf("two files share a consumer: %s %s %s", name("a.jsonl"), name("sub/a.jsonl"), name("b.jsonl"))
	}
}
