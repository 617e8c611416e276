package scenario

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// A use step on a profile the engine would not call now for the step's
// model (disabled, cooling down) is refused before any call: the error
// names the step, the profile and its state, the step records nothing and
// the profile keeps its failure state (the warm-up call used to probe it
// and clear the disable). A cooldown scoped to another model does not
// stop it.
func TestRun_UseRefusesAnUnusableProfile(t *testing.T) {
	file := func(name string) string {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	scoped := caseHead + openaiFirst + `  retry: {provider: {maxRetries: 0}}
default: {candidate: anthropic/claude-sonnet-4-5, ok: true}
script:
  - at: "+0s"
    turn: {session: s, responses: [{candidate: openai/gpt-5, error: {status: 429, message: "429 Rate limit reached for requests"}, repeat: 2}]}
  - at: "+1s"
    command: {do: use, profile: "openai:a", model: openai/gpt-5-mini}
  - at: "+2s"
    command: {do: use, profile: "openai:b"}
`
	for _, c := range []struct {
		name, text string
		step       int    // the step that fails (-1: none)
		err        string // its error
		profile    string
		errorCount int
	}{
		{"b27: disabled by a 402", file("b27-use-disabled.yaml"), 1,
			"script[1]: use openai:a: openai:a is disabled until 2026-04-08T10:10:00Z (+10m0s, billing): a use step seeds a profile the engine can call now, so it recorded nothing",
			"openai:a", 1},
		{"b38: cooling down after a 401", file("b38-use-cooling-two.yaml"), 1,
			"script[1]: use openai:a: openai:a is cooling down until 2026-04-08T10:00:30Z (+30s, auth): a use step seeds a profile the engine can call now, so it recorded nothing",
			"openai:a", 1},
		{"model-scoped cooldown: another model is seeded, the cooling one refused", scoped, 2,
			"script[2]: use openai:b: openai:b is cooling down until 2026-03-02T09:00:30Z (+30s, rate_limit, model gpt-5): a use step seeds a profile the engine can call now, so it recorded nothing",
			"openai:b", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := Parse([]byte(c.text), "case")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(context.Background(), testutil.Store(t), sc, Options{})
			var se *ScriptError
			if !errors.As(err, &se) || se.Step != c.step || err.Error() != c.err {
				t.Fatalf("err %v\nwant %s", err, c.err)
			}
			if cr := rep.Steps[c.step].Command; len(cr.Events) != 0 {
				t.Errorf("the refused step recorded %v", cr.Events)
			}
			for _, p := range rep.Profiles {
				if p.ID == c.profile && p.ErrorCount != c.errorCount {
					t.Errorf("%s errorCount %d, want %d (kept)", p.ID, p.ErrorCount, c.errorCount)
				}
			}
		})
	}
}
