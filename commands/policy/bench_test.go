package policy

import "testing"

// BenchmarkStepDecision measures one full outcome → next decision: a rate
// limit on the primary's first profile, recorded against the profile
// (cooldown), then the rotation to the second profile (order resolution,
// usability checks, events folded).
func BenchmarkStepDecision(b *testing.B) {
	h := newHarness(b, testConfig())
	h.cfg.MaxRetries = 0
	h.start(h.selectDefault(), "direct")
	st, env := h.st, h.env()
	out := Outcome{Reason: ReasonRateLimit, Status: 429}
	b.ReportAllocs()
	for b.Loop() {
		d, err := OnOutcome(st, env, out)
		if err != nil || d.Next.Kind != NextCall {
			b.Fatal(err, d.Next)
		}
	}
}

// BenchmarkStepDecision_Fallback measures a failure that advances to the
// next candidate (decision record, chain walk, cooldown check).
func BenchmarkStepDecision_Fallback(b *testing.B) {
	h := newHarness(b, testConfig())
	h.cfg.MaxRetries = 0
	h.start(h.selectDefault(), "direct")
	st, env := h.st, h.env()
	out := Outcome{Reason: ReasonModelNotFound, Status: 404}
	b.ReportAllocs()
	for b.Loop() {
		d, err := OnOutcome(st, env, out)
		if err != nil || d.Next.Kind != NextCall {
			b.Fatal(err, d.Next)
		}
	}
}

// BenchmarkStepDecision_Success measures a success with its profile,
// pin and notice-state events.
func BenchmarkStepDecision_Success(b *testing.B) {
	h := newHarness(b, testConfig())
	h.start(h.selectDefault(), "direct")
	st, env := h.st, h.env()
	b.ReportAllocs()
	for b.Loop() {
		d, err := OnOutcome(st, env, Outcome{OK: true})
		if err != nil || d.Next.Kind != NextDone {
			b.Fatal(err, d.Next)
		}
	}
}
