package classify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// TestRules_EveryIDIsDocumented keeps docs/classification.md in step with
// the rules: every id the classifier can cite appears there, with a source.
func TestRules_EveryIDIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testutil.Root(t), "docs", "classification.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range ruleBook {
		if seen[r.id] {
			t.Errorf("duplicate rule id %s", r.id)
		}
		seen[r.id] = true
		if r.source == "" {
			t.Errorf("%s: no source", r.id)
		}
		if !strings.Contains(string(doc), "`"+r.id+"`") {
			t.Errorf("%s is not in docs/classification.md", r.id)
		}
	}
	if len(RuleIDs()) != len(ruleBook) {
		t.Fatal("RuleIDs")
	}
}

// TestRules_MessageRulesInReferenceOrder: rule n of reference §2.2 is the
// n-th message rule (16a, 28a and 29a are ours, after 16, 28 and 29).
func TestRules_MessageRulesInReferenceOrder(t *testing.T) {
	var got []string
	for _, r := range messageRules {
		got = append(got, strings.SplitN(r.info.id, ".", 2)[0])
	}
	want := "msg01 msg02 msg03 msg04 msg05 msg06 msg07 msg08 msg09 msg10 msg11 msg12 msg13 msg14 msg15 msg16 msg16a msg17 msg18 msg19 msg20 msg21 msg22 msg23 msg24 msg25 msg26 msg27 msg28 msg28a msg29 msg29a"
	if strings.Join(got, " ") != want {
		t.Fatalf("order:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// TestPhrases_TablesAreLowerCaseAndFit: every phrase compiled (newTable
// panics otherwise) and the automaton has room left.
func TestPhrases_TablesAreLowerCaseAndFit(t *testing.T) {
	if n := len(phraseBook.list); n == 0 || n > phraseWords*64 {
		t.Fatalf("%d phrases", n)
	}
	t.Logf("%d phrases, %d automaton states × %d byte classes", len(phraseBook.list), len(compiled().outStart)-1, compiled().width)
}
