package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// Issue 22, reporting exhaustion summaries: "exhaustion summaries keep raw
// newlines from provider messages". From rule revision 2 the `All models
// failed (N): …` summary puts each provider message on one line: every
// run of \r and \n is one space. Revision 1's summary is kept as it was
// recorded.
func TestSummary_EachProviderMessageOnOneLine(t *testing.T) {
	cases := []struct {
		name  string
		rules Rules
		msg   string
		want  string
	}{
		{"revision 1 keeps the line breaks", RulesV1, "Local llama.cpp is unavailable.\nReason: ENOENT",
			"All models failed (2): anthropic/claude: Local llama.cpp is unavailable.\nReason: ENOENT (unclassified) | google/gemini: overloaded error (overloaded)"},
		{"revision 2: a line break is a space", RulesV2, "Local llama.cpp is unavailable.\nReason: ENOENT",
			"All models failed (2): anthropic/claude: Local llama.cpp is unavailable. Reason: ENOENT (unclassified) | google/gemini: overloaded error (overloaded)"},
		{"revision 2: a run of \\r\\n is one space", RulesV2, "a\r\n\r\nb\rc\n",
			"All models failed (2): anthropic/claude: a b c  (unclassified) | google/gemini: overloaded error (overloaded)"},
		{"revision 2: a message without line breaks is unchanged", RulesV2, "plain text",
			"All models failed (2): anthropic/claude: plain text (unclassified) | google/gemini: overloaded error (overloaded)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxRetries, cfg.ChainOverloadRounds = 0, 0
			cfg.Defaults.Fallbacks = []ModelRef{m("google", "gemini")} // one profile: no rotation
			cfg.Profiles = cfg.Profiles[2:]                            // no anthropic profiles: no rotation
			h := newHarness(t, cfg)
			h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "t", Session: "s1", Chat: "direct", Rules: tc.rules}))
			h.outcome(Outcome{Reason: ReasonUnclassified, Error: events.ProviderErrorRecord{MessagePreview: tc.msg}})
			n := h.outcome(failed(ReasonOverloaded))
			te := h.payloads("TurnExhausted")
			if n.Kind != NextExhausted || n.Summary != tc.want || len(te) != 1 || te[0].(events.TurnExhausted).Summary != tc.want {
				t.Fatalf("summary %q\nwant    %q", n.Summary, tc.want)
			}
			if a := te[0].(events.TurnExhausted).Attempts[0]; a.Error != tc.msg {
				t.Fatalf("the attempt's own error is kept as recorded: %q", a.Error)
			}
		})
	}
}
