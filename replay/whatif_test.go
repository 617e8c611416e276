package replay_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// incidentConfig is incident-day's config with fallbacks replaced.
func incidentConfig(t testing.TB, fallbacks string) *config.Loaded {
	t.Helper()
	l, err := config.Parse([]byte(`
auth:
  profiles:
    "anthropic:work": {provider: anthropic, type: api_key}
    "anthropic:personal": {provider: anthropic, type: api_key}
    "openai:user@example.com": {provider: openai, type: oauth, expires: "2027-01-01T00:00:00Z"}
  order:
    anthropic: ["anthropic:work", "anthropic:personal"]
agents:
  defaults:
    model:
      primary: anthropic/claude-opus-4-6
      fallbacks: `+fallbacks+`
`), "test")
	testutil.NoError(t, err)
	return l
}

func whatIf(t *testing.T, fallbacks string) *replay.WhatIfReport {
	t.Helper()
	st := openStore(t)
	runScenario(t, st, "incident-day", "demo")
	l := incidentConfig(t, fallbacks)
	rep, err := replay.WhatIf(context.Background(), st, &l.Policy, replay.WhatIfOptions{})
	testutil.NoError(t, err)
	var b bytes.Buffer
	testutil.NoError(t, replay.WriteWhatIf(&b, rep))
	t.Log("\n" + b.String())
	return rep
}

func TestWhatIf_SameConfigChangesNothing(t *testing.T) {
	rep := whatIf(t, "[openai/gpt-5]")
	if rep.Turns != 5 || len(rep.Changed) != 0 || rep.Unknown != 0 {
		t.Fatalf("the recorded config re-decided: %d turns, %d changed, %d unknown", rep.Turns, len(rep.Changed), rep.Unknown)
	}
}

// TestWhatIf_NoFallbacksFailsInsteadOfFallingBack: with fallbacks: [] the
// storm turn has no gpt-5 to fall back to and is exhausted.
func TestWhatIf_NoFallbacksFailsInsteadOfFallingBack(t *testing.T) {
	rep := whatIf(t, "[]")
	var storm *replay.TurnComparison
	for i := range rep.Changed {
		if rep.Changed[i].TurnID == "storm" {
			storm = &rep.Changed[i]
		}
	}
	if storm == nil {
		t.Fatalf("storm does not change: %+v", rep.Changed)
	}
	if storm.Recorded.Outcome != "succeeded" || storm.WhatIf.Outcome != "exhausted" {
		t.Fatalf("storm: recorded %s, what-if %s (%s)", storm.Recorded.Outcome, storm.WhatIf.Outcome, storm.WhatIf.End)
	}
	if len(storm.WhatIf.Chain) != 1 {
		t.Fatalf("what-if chain %v", storm.WhatIf.Chain)
	}
}

// TestWhatIf_ExtraFallbackIsUnknown: a fallback never tried in reality
// makes the outcome unknown at that attempt, never invented.
func TestWhatIf_ExtraFallbackIsUnknown(t *testing.T) {
	rep := whatIf(t, "[google/gemini-2.5-pro, openai/gpt-5]")
	if rep.Unknown == 0 || len(rep.Changed) == 0 {
		t.Fatalf("want an unknown turn: %+v", rep)
	}
	for _, c := range rep.Changed {
		if c.TurnID != "storm" {
			continue
		}
		if c.WhatIf.Outcome != replay.OutcomeUnknown || c.WhatIf.UnknownFrom != 6 || !strings.Contains(c.WhatIf.End, "google/gemini-2.5-pro was never tried") {
			t.Fatalf("storm what-if: %+v", c.WhatIf)
		}
		return
	}
	t.Fatal("storm does not change")
}
