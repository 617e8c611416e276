package classify

import (
	"slices"
	"testing"

	"github.com/fledger/fledger/events"
)

// TestVocabulary_ClassifyUsesTheEventsSets: classify's reasons and
// dispositions are the stored vocabulary itself (events.Reasons,
// events.Dispositions), and every reason its tables can answer is a member.
func TestVocabulary_ClassifyUsesTheEventsSets(t *testing.T) {
	if !slices.Equal(Reasons(), events.Reasons) {
		t.Errorf("Reasons() = %v, want events.Reasons %v", Reasons(), events.Reasons)
	}
	if !slices.Equal(Dispositions(), events.Dispositions) {
		t.Errorf("Dispositions() = %v, want events.Dispositions %v", Dispositions(), events.Dispositions)
	}
	tables := []struct {
		name  string
		table map[string]Reason
	}{
		{"codeReasons", codeReasons},
		{"typeReasons", typeReasons},
	}
	for _, tc := range tables {
		for k, r := range tc.table {
			if !r.Valid() {
				t.Errorf("%s[%q] = %q, not a member of events.Reasons", tc.name, k, r)
			}
		}
	}
}

// TestVocabulary_ClassifyOnlyReturnsMembers walks every status 0..599,
// alone and with each table code and type, and every shared vector and
// own fixture: each result's reason and disposition are members of the
// events sets (checkResult).
func TestVocabulary_ClassifyOnlyReturnsMembers(t *testing.T) {
	var inputs []*ProviderError
	for status := 0; status < 600; status++ {
		inputs = append(inputs, &ProviderError{Status: status})
	}
	for code := range codeReasons {
		inputs = append(inputs, &ProviderError{Code: code}, &ProviderError{Status: 400, Code: code})
	}
	for typ := range typeReasons {
		inputs = append(inputs, &ProviderError{Type: typ}, &ProviderError{Status: 400, Type: typ})
	}
	for _, v := range loadVectors(t, sharedVectorsPath(t)) {
		inputs = append(inputs, v.Input)
	}
	for _, e := range inputs {
		checkResult(t, Classify(e))
	}
}
