package replay_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// switchWords lists what an explanation says of live switching and the
// transport recovery: its live_switch and decision steps as "kind: text",
// and each failed step's "no transport recovery" detail as
// "failed: detail".
func switchWords(x *replay.Explanation) []string {
	var out []string
	for _, s := range x.Steps {
		switch s.Kind {
		case "live_switch", "decision", "command":
			out = append(out, s.Kind+": "+s.Text)
		case "failed":
			for _, d := range s.Details {
				if strings.HasPrefix(d, "no transport recovery") {
					out = append(out, "failed: "+d)
				}
			}
		}
	}
	return out
}

// Explain words what became of a pending live switch, a `/model default`
// that marked one, a jump's candidate_failed record as the jump's (not a
// fallback), a hand-back's record, and why a transport failure was not
// recovered, and a /reset stored while the turn ran (rule revision 3).
func TestExplain_LiveSwitchWords(t *testing.T) {
	st := openStore(t)
	for _, name := range []string{"live-switch-model-default", "live-switch-later-candidate", "live-switch-transport", "live-switch-outside-chain", "transport-recovery", "live-switch-command-after-start"} {
		runScenario(t, st, name, name)
	}
	const (
		def     = "live_switch: the user ran /model default while the turn ran (the session's selection cleared): a switch to the default primary anthropic/claude-opus-4-6: "
		claude  = "anthropic/claude-opus-4-6"
		flash   = "google-gemini/gemini-2.5-flash"
		jumpGem = "live_switch: ↪ live switch anthropic/claude-opus-4-6 → google-gemini/gemini-2.5-flash (the user's selection, a later candidate; reason unknown)"
	)
	cases := []struct {
		agent, turn string
		want        []string
	}{
		{"live-switch-model-default", "deselected", []string{def + "marked, not taken: the answer stood (no pin written)"}},
		{"live-switch-model-default", "handed-back", []string{
			def + "a pending live switch, taken at the next step",
			"decision: decision record: openai/gpt-5 failed (overloaded); no next candidate: the live switch hands the turn back",
		}},
		{"live-switch-model-default", "jumped", []string{
			def + "a pending live switch, taken at the next step",
			"decision: decision record: openai/gpt-5 failed (overloaded); the live switch jumps to " + claude + ", no fallback",
			"live_switch: ↪ live switch openai/gpt-5 → " + claude + " (the user's selection, a later candidate; reason unknown)",
			"decision: decision record: " + claude + " succeeded at chain position 2",
		}},
		{"live-switch-later-candidate", "jump", []string{
			"live_switch: the user selected " + flash + " while the turn ran: a pending live switch, taken at the next step",
			"decision: decision record: " + claude + " failed (overloaded); the live switch jumps to " + flash + ", no fallback",
			jumpGem,
			"decision: decision record: " + flash + " succeeded at chain position 3",
		}},
		{"live-switch-transport", "reset-then-jump", []string{
			"live_switch: the user selected " + flash + " while the turn ran: a pending live switch, taken at the next step",
			"failed: no transport recovery: the pending live switch was taken instead (the failure is not counted against the profile)",
			"decision: decision record: " + claude + " failed (timeout); the live switch jumps to " + flash + ", no fallback",
			jumpGem,
			"decision: decision record: " + flash + " succeeded at chain position 3",
		}},
		{"live-switch-outside-chain", "answered-anyway", []string{
			"live_switch: the user selected google-gemini/gemini-2.5-pro while the turn ran: marked, not taken: the answer stood (no pin written)",
		}},
		{"transport-recovery", "recovered-twice", []string{
			"failed: no transport recovery: the turn's 2 recoveries were used",
			"decision: decision record: openai/gpt-5 succeeded at chain position 2",
		}},
		{"transport-recovery", "output-started", []string{
			"failed: no transport recovery: output or a tool call had started (a partial response or an unfinished tool batch)",
			"decision: decision record: openai/gpt-5 succeeded at chain position 2",
		}},
		{"live-switch-command-after-start", "reset-during", []string{
			"command: the user ran /reset while the turn ran: the session's automatic pin and automatic selection are cleared; the turn writes no automatic pin after it",
		}},
		{"transport-recovery", "unfinished-batch", []string{
			"failed: no transport recovery: output or a tool call had started (a partial response or an unfinished tool batch)",
			"decision: decision record: openai/gpt-5 succeeded at chain position 2",
		}},
		{"transport-recovery", "no-tool-batch", []string{
			"failed: no transport recovery: the call did not continue the transcript after a settled tool batch",
			"decision: decision record: openai/gpt-5 succeeded at chain position 2",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.agent+"/"+tc.turn, func(t *testing.T) {
			x, err := replay.Explain(context.Background(), st, tc.agent, tc.turn)
			testutil.NoError(t, err)
			if got := switchWords(x); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	// The session's timeline shows the /model default as a command and
	// the mark in the turn's explanation.
	tl, err := replay.ExplainTimeline(context.Background(), st, "live-switch-model-default", "dm-deselect", time.Time{}, time.Time{})
	testutil.NoError(t, err)
	var got []string
	for _, e := range tl.Entries {
		switch {
		case e.Kind == "command":
			got = append(got, "command: "+e.Text)
		case e.Turn != nil:
			got = append(got, "turn "+e.Turn.TurnID+": "+strings.Join(switchWords(e.Turn), " | "))
		}
	}
	want := []string{
		"command: model openai/gpt-5 selected (source user)",
		"turn deselected: " + def + "marked, not taken: the answer stood (no pin written)",
		"command: selection openai/gpt-5 cleared (default_command)",
		"turn after-default: ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("timeline\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
