package export

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// Each file gets its own consumer, the same whatever path names it, and
// another on another host.
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
	host, err := os.Hostname()
	testutil.NoError(t, err)
	sum := sha256.Sum256([]byte(host + "\x00/tmp/a.jsonl"))
	if got, want := name("/tmp/a.jsonl"), "fledger-export-jsonl-"+hex.EncodeToString(sum[:4]); got != want {
		t.Fatalf("FileConsumer(/tmp/a.jsonl) = %s, want %s (the host's name and the path)", got, want)
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
