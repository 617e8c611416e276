package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// ---- notices (seed 000; reference §10) ----

func TestNotices_ExactTexts(t *testing.T) {
	if got := FallbackNoticeText("openai/gpt-5", "anthropic/claude", "rate limit (+1 more attempts)"); got != "↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude; rate limit (+1 more attempts))" {
		t.Fatal(got)
	}
	if got := FallbackClearedNoticeText("anthropic/claude", "openai/gpt-5"); got != "↪️ Model Fallback cleared: anthropic/claude (was openai/gpt-5)" {
		t.Fatal(got)
	}
	if got := FallbackClearedNoticeText("a/b", "a/b"); got != "↪️ Model Fallback cleared: a/b" {
		t.Fatal(got)
	}
	if OverloadNoticeText != "The AI service is temporarily overloaded. I'm still retrying; this may take a few minutes." {
		t.Fatal(OverloadNoticeText)
	}
	for _, c := range []struct{ at []events.ExhaustedAttempt }{{nil}} {
		if ReasonSummary(c.at) != "" {
			t.Fatal("empty")
		}
	}
	if got := ReasonSummary([]events.ExhaustedAttempt{{Code: "E42"}, {Reason: ReasonAuth}}); got != "E42 (+1 more attempts)" {
		t.Fatal(got)
	}
	if got := ReasonSummary([]events.ExhaustedAttempt{{Reason: ReasonAuthPermanent}}); got != "auth permanent" {
		t.Fatal(got)
	}
	for chat, want := range map[string]bool{"direct": true, "group": false, "channel": false} {
		if delivered(chat) != want {
			t.Errorf("%s: %v", chat, !want)
		}
	}
}

// A changed (selected, active) pair notifies again; a channel chat records
// the state change and the notice without delivering it.
func TestNotices_NewPairNotifiesAgainAndChannelSuppressed(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	h := newHarness(t, cfg)
	run := func(chat string, failures ...string) Next {
		h.profiles = map[string]ProfileState{}
		h.start(h.selectDefault(), chat)
		for _, r := range failures {
			h.outcome(failed(r))
		}
		return h.outcome(Outcome{OK: true})
	}
	n := run("direct", ReasonAuth, ReasonAuth)
	if len(n.Notices) != 1 || n.Notices[0].Text != "↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude; auth)" {
		t.Fatalf("%+v", n.Notices)
	}
	n = run("direct", ReasonAuth, ReasonAuth, ReasonAuth, ReasonAuth)
	if len(n.Notices) != 1 || n.Notices[0].Text != "↪️ Model Fallback: google/gemini (selected anthropic/claude; auth (+1 more attempts))" {
		t.Fatalf("%+v", n.Notices)
	}
	n = run("channel")
	ns := h.payloads("NoticeSent")
	if len(n.Notices) != 1 || n.Notices[0].Delivered || len(ns) != 1 || ns[0].(events.NoticeSent).Delivered ||
		ns[0].(events.NoticeSent).Text != "↪️ Model Fallback cleared: anthropic/claude (was google/gemini)" || h.sess.Notice != (NoticeState{}) {
		t.Fatalf("%+v %+v", n, ns)
	}
}
