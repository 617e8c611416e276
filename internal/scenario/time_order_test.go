package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Steps are in time order: a step whose at is before the step above it is
// refused at parse time, naming both steps (it would otherwise run at the
// earlier step's time, silently); equal times run in script order.
func TestParse_StepsGoForwardInTime(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "b07-time-backwards.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	steps := func(ats ...string) string {
		s := caseHead + openaiFirst + "default: {candidate: openai/gpt-5, ok: true}\nscript:\n"
		for _, at := range ats {
			s += "  - {at: \"" + at + "\", turn: {session: s}}\n"
		}
		return s
	}
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"b07: +5s after +10s", string(raw), []string{`script[1].at: "+5s" is before script[0]'s "+10s": steps are in time order (equal times run in script order)`}},
		{"equal times", steps("+0s", "+5s", "+5s", "+5.0s"), nil},
		{"back past an invalid at", steps("+1m", "soon", "+30s"), []string{
			`script[1].at: "soon" is not an offset like +45s or +2m30s`,
			`script[2].at: "+30s" is before script[0]'s "+1m": steps are in time order (equal times run in script order)`}},
		{"each step against the latest before it", steps("+0s", "+2m", "+1m", "+1m30s", "+2m"), []string{
			`script[2].at: "+1m" is before script[1]'s "+2m": steps are in time order (equal times run in script order)`,
			`script[3].at: "+1m30s" is before script[1]'s "+2m": steps are in time order (equal times run in script order)`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := parseProblems(t, c.text, "case"); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("problems\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}
