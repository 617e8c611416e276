package classify

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// Agreement on real provider errors that the rules were not built on.
//
//   - ../shared/vectors/classify-2.jsonl (RE2-*): the second handed set;
//   - fixtures/classify/heldout-dev.jsonl (HD-*): real errors collected from
//     public bug reports, which the rules may be tuned on;
//   - fixtures/classify/heldout-test.jsonl (HT-*): collected at the same time
//     and labelled from the thread, never tuned on phrase by phrase. Its
//     figure is the generalisation measure (docs/classification.md
//     "Held-out measurement").
//
// go test ./commands/classify/ -run Agreement -v prints each miss.

// agreement classifies every vector of path and logs the misses and the
// pass rate.
func agreement(t *testing.T, path string) (pass, total int) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not present", path)
	}
	var misses []string
	for _, v := range loadVectors(t, path) {
		total++
		if v.Source == "" {
			t.Errorf("%s:%d %s: every vector needs a source", v.File, v.Line, v.ID)
		}
		got := v.classify(t)
		if msg := v.check(got); msg != "" {
			misses = append(misses, fmt.Sprintf("%s (%s): %s (rule %s, field %s, match %q)", v.ID, v.Source, msg, got.Evidence.Rule, got.Evidence.Field, got.Evidence.Match))
			continue
		}
		pass++
	}
	sort.Strings(misses)
	for _, m := range misses {
		t.Log("MISS " + m)
	}
	t.Logf("%s: %d/%d agree (%.1f%%)", filepath.Base(path), pass, total, 100*float64(pass)/float64(max(total, 1)))
	return pass, total
}

// heldoutFile: held-out sets are measured by TestAgreement, not required
// to pass case by case like the rule fixtures.
func heldoutFile(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "heldout-")
}

// TestAgreement measures each set of real errors the rules were not built
// on, in the order they were collected, and asserts its bar. "first run"
// is the figure when the set was first classified, before any rule saw it
// (docs/classification.md "Held-out measurement").
func TestAgreement(t *testing.T) {
	fixtures := filepath.Join(testutil.Root(t), "fixtures", "classify")
	sets := []struct {
		name, path string
		bar        float64
		// what the set is, and its first-run figure
		about string
	}{
		{"RE2", filepath.Join(testutil.Root(t), "..", "shared", "vectors", "classify-2.jsonl"), 0.97,
			"the second handed set (RE2-*); 28/40 before issue 17"},
		{"heldout-dev", filepath.Join(fixtures, "heldout-dev.jsonl"), 0.90,
			"HD-*, collected with heldout-test; the rules were tuned on it; 37/56 first run"},
		{"heldout-test", filepath.Join(fixtures, "heldout-test.jsonl"), 0.90,
			"HT-*, labelled from the thread, not tuned phrase by phrase; 33/55 first run"},
		{"heldout-fresh", filepath.Join(fixtures, "heldout-fresh.jsonl"), 0.90,
			"HF-*, after the issue 17 rules were written; 29/34 first run"},
		{"heldout-fresh2", filepath.Join(fixtures, "heldout-fresh2.jsonl"), 0.90,
			"HG-*, after heldout-fresh's misses were fixed; 20/24 first run"},
		{"heldout-fresh3", filepath.Join(fixtures, "heldout-fresh3.jsonl"), 0.90,
			"HH-*, after heldout-fresh2's misses were fixed; 18/19 first run"},
		{"heldout-blind", filepath.Join(fixtures, "heldout-blind.jsonl"), 0.90,
			"HB-*, collected and labelled by someone who never read the rules; 67/83 (80.7%) first run, then tuned by family on its misses"},
		{"heldout-blind3", filepath.Join(fixtures, "heldout-blind3.jsonl"), blind3Bar,
			"HB3-*, collected and labelled blind after heldout-blind2's families were fixed: 63/85 (74.1%) first run, the generalisation figure; then tuned by family on its misses (84/85 is a development figure)"},
		{"heldout-blind4-dev", filepath.Join(fixtures, "heldout-blind4-dev.jsonl"), blind4DevBar,
			"HC1-*/HC2-* (dev half of 160 collected and labelled blind after heldout-blind3's families were fixed, split by a hash of the thread): 76/80 (95.0%) first run; then tuned by family on its misses (78/80 is a development figure)"},
		{"heldout-blind4-test", filepath.Join(fixtures, "heldout-blind4-test.jsonl"), blind4TestBar,
			"HC1-*/HC2-* (test half), measured once after the dev half's fixes and never tuned on: 76/80 (95.0%), the latest generalisation figure"},
		{"heldout-blind5", filepath.Join(fixtures, "heldout-blind5.jsonl"), blind5Bar,
			"HC5-*, collected and labelled blind by a third collector after the fourth set's fixes, measured once and never tuned on: 78/81 (96.3%)"},
		{"heldout-blind2", filepath.Join(fixtures, "heldout-blind2.jsonl"), blind2Bar,
			"HB2-*, collected and labelled blind after heldout-blind's families were fixed: 82/102 (80.4%) first run, the generalisation figure; then tuned by family on its misses (102/102 is a development figure)"},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			t.Log(set.about)
			pass, total := agreement(t, set.path)
			if float64(pass) < set.bar*float64(total) {
				t.Errorf("%s agreement %d/%d is below %.0f%%", set.name, pass, total, 100*set.bar)
			}
		})
	}
}

// blind4DevBar: the fourth blind set's dev half after its family fixes
// (78/80; the two Bedrock "You don't have access to the model" misses are
// labelled model_not_found there, auth by RE-055: docs/classification.md
// "Fourth blind set"). A development figure; its first run was 76/80.
const blind4DevBar = 0.97

// blind4TestBar: the fourth blind set's test half at its one measurement
// (76/80, 95.0%), untuned — so a change that loses ground on it fails.
// Tune on it only after a newer blind set has been measured.
const blind4TestBar = 0.95

// blind5Bar: the fifth blind set at its one measurement (78/81, 96.3%),
// untuned; a regression guard and the second generalisation figure.
const blind5Bar = 0.96

// blind2Bar is heldout-blind2's bar: the figure reached after its family
// fixes (102/102). That is a development figure — the set was seen; its
// first run, the generalisation figure, was 82/102 (80.4%) — so the bar
// only keeps a later change from losing ground on it.
const blind2Bar = 1.00

// blind3Bar is heldout-blind3's bar: the figure reached after its family
// fixes (84/85; HB3-039, a 413 tier cap with no requested count, is left:
// docs/classification.md "Third blind-set families"). A development
// figure — its first run, the generalisation figure, was 63/85 (74.1%) —
// so the bar only keeps a later change from losing ground on it.
const blind3Bar = 0.98
