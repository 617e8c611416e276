package replay_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/replay"
)

// Stored text (a provider error preview, a notice, a session key) with a
// line break or a terminal escape is written on its own line, escaped.
func TestWriteExplanation_StoredTextStaysOnItsLine(t *testing.T) {
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	x := &replay.Explanation{TurnID: "t1", Agent: "main", Session: "s\nFAKE", Chat: "direct", StartedAt: at,
		Steps:   []replay.Step{{At: at, Offset: "+0ms", Text: "attempt 1 failed", Details: []string{"error: upstream\nFAKE LINE\x1b[2J"}}},
		Notices: []replay.NoticeRecord{{Kind: "fallback", Text: "switched\r\nFAKE"}}}
	var b strings.Builder
	if err := replay.WriteExplanation(&b, x); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`turn t1  agent main  session s\nFAKE (direct chat)`,
		`· error: upstream\nFAKE LINE\x1b[2J`,
		`notices    switched\r\nFAKE (fallback, recorded, not shown)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "FAKE") || strings.ContainsAny(l, "\x1b\r") {
			t.Errorf("stored text printed raw: %q", l)
		}
	}
}
