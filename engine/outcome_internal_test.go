package engine

import (
	"strings"
	"testing"

	"github.com/fledger/fledger/commands/classify"
)

// A cause chain that loops back on itself, or is far deeper than the
// classifier's limit, still yields a record (and terminates).
func TestErrorRecord_CyclicAndDeepCausesAreBounded(t *testing.T) {
	a := &classify.ProviderError{Name: "Error"}
	b := &classify.ProviderError{Name: "Wrapped", Cause: a}
	a.Cause = b
	if rec := errorRecord(a); rec.MessagePreview != "" || rec.Hash != "" {
		t.Fatalf("cyclic chain without text: got %+v", rec)
	}

	deep := &classify.ProviderError{Message: "upstream connect error"}
	for i := 0; i < 10000; i++ {
		deep = &classify.ProviderError{Cause: deep}
	}
	if rec := errorRecord(deep); rec.MessagePreview != "" {
		t.Fatalf("text beyond depth %d must not be searched, got %q", causeDepth, rec.MessagePreview)
	}

	near := &classify.ProviderError{Message: "sk-ant-api03-" + strings.Repeat("x", 40) + " rejected"}
	for i := 0; i < 3; i++ {
		near = &classify.ProviderError{Cause: near}
	}
	rec := errorRecord(near)
	if !strings.Contains(rec.MessagePreview, "rejected") || strings.Contains(rec.MessagePreview, "sk-ant-api03-xxxx") {
		t.Fatalf("a cause's text is kept, redacted: %q", rec.MessagePreview)
	}
}

// The stored hash is of redacted text: it cannot confirm a guessed secret,
// and two errors differing only in their secret share it.
func TestErrorRecord_HashIsOfRedactedText(t *testing.T) {
	a := errorRecord(&classify.ProviderError{Message: "login failed: password=hunter2"})
	b := errorRecord(&classify.ProviderError{Message: "login failed: password=swordfish"})
	if a.Hash == "" || a.Hash != b.Hash {
		t.Fatalf("hashes %q and %q: want equal, non-empty (secrets redacted before hashing)", a.Hash, b.Hash)
	}
	if strings.Contains(a.MessagePreview, "hunter2") {
		t.Fatalf("preview keeps the password: %q", a.MessagePreview)
	}
	c := errorRecord(&classify.ProviderError{Message: "login failed: account locked"})
	if c.Hash == a.Hash {
		t.Fatal("different errors must hash differently")
	}
}
