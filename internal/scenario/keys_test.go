package scenario

import (
	"errors"
	"strings"
	"testing"
)

// Ids that become aggregate keys are checked at parse time, with their
// path, instead of breaking the run half-way (an unfinished turn and
// "events: invalid envelope").
func TestParse_OverlongKeysHavePaths(t *testing.T) {
	long := strings.Repeat("k", 600)
	_, err := Parse([]byte(`
name: long
start: "2026-03-02T09:00:00Z"
config: {agents: {defaults: {model: {primary: openai/gpt-5}}}}
script:
  - at: "+0s"
    turn: {session: `+long+`, responses: [{candidate: openai/gpt-5, ok: true}]}
  - at: "+1s"
    turn: {id: `+long+`, session: s, responses: [{candidate: openai/gpt-5, ok: true}]}
  - at: "+2s"
    command: {do: model, session: `+long+`, model: "openai/gpt-5@openai:`+long+`"}
  - at: "+3s"
    command: {do: pin, session: s, profile: `+long+`}
`), "long.yaml")
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"script[0].turn.session: is 600 bytes; the limit is 512",
		"script[1].turn.id: is 600 bytes; the limit is 512",
		"script[2].command.session: is 600 bytes; the limit is 512",
		"script[2].command.model: profile is 607 bytes; the limit is 512",
		"script[3].command.profile: is 600 bytes; the limit is 512",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

// The scenario runner splits `/model p/m@profile` with the engine's
// parser (the one `fledger serve` uses).
func TestSplitProfile_SharedParser(t *testing.T) {
	for in, want := range map[string][2]string{
		"openai/gpt-5@openai:backup":         {"openai/gpt-5", "openai:backup"},
		"openai/gpt-5":                       {"openai/gpt-5", ""},
		"codex/gpt-5@codex:me@example.com":   {"codex/gpt-5", "codex:me@example.com"},
		"vertex/claude@20240620@vertex:work": {"vertex/claude@20240620", "vertex:work"},
		"vertex/claude@20240620":             {"vertex/claude@20240620", ""},
		"cloudflare/@cf/meta/llama-3":        {"cloudflare/@cf/meta/llama-3", ""},
	} {
		if m, p := splitProfile(in); m != want[0] || p != want[1] {
			t.Errorf("splitProfile(%q) = %q, %q; want %q, %q", in, m, p, want[0], want[1])
		}
	}
}
