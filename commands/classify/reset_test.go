package classify

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var resetNow = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

// Issue 17 (seed 000: "records the exact reset time when Codex provides
// one"): every reset source of reset.go, with the exact moment it gives
// at the decision time resetNow, and the long-window evidence.
func TestReset_SourcesGiveExactMoments(t *testing.T) {
	cases := []struct {
		name   string
		e      *ProviderError
		at     string // "" = no reset
		source string
		field  string
		match  string
		window string // "" = not a long window
	}{
		{"Codex resets_in_seconds (decision time + 86400 s)",
			&ProviderError{Status: 429, Code: "usage_limit_reached", Message: `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_in_seconds":86400}}`},
			"2026-01-03T03:04:00Z", ResetCodex, "message", "resets_in_seconds=86400", WindowSubscription},
		{"Codex resets_at wins over resets_in_seconds (RE-049)",
			&ProviderError{Status: 429, Code: "usage_limit_reached", Message: `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"free","resets_at":1775317531,"resets_in_seconds":602705}}`},
			"2026-04-04T15:45:31Z", ResetCodex, "message", "resets_at=1775317531", WindowSubscription},
		{"Codex fields in escaped JSON inside a wrapper's message",
			&ProviderError{Status: 429, Message: `proxy error: "{\"error\":{\"type\":\"usage_limit_reached\",\"resets_in_seconds\":3600}}"`},
			"2026-01-02T04:04:00Z", ResetCodex, "message", "resets_in_seconds=3600", WindowSubscription},
		{"Codex fields in the body",
			&ProviderError{Status: 429, Message: "Too Many Requests", Body: `{"error":{"type":"usage_limit_reached","resets_in_seconds":1.5}}`},
			"2026-01-02T03:04:01.5Z", ResetCodex, "body", "resets_in_seconds=1.5", WindowSubscription},
		{"x-ratelimit-reset-tokens of the exhausted window (6m0s), not requests' 1.5s",
			&ProviderError{Status: 429, Headers: map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s",
				"x-ratelimit-remaining-requests": "10", "x-ratelimit-reset-requests": "1.5s"}},
			"2026-01-02T03:10:00Z", ResetHeader, "headers.x-ratelimit-reset-tokens", "6m0s", ""},
		{"two exhausted windows: the later reset",
			&ProviderError{Status: 429, Headers: map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s",
				"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20m"}},
			"2026-01-02T03:24:00Z", ResetHeader, "headers.x-ratelimit-reset-requests", "20m", ""},
		{"no remaining header at all: the soonest reset",
			&ProviderError{Status: 429, Headers: map[string]string{"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-reset-requests": "1.5s"}},
			"2026-01-02T03:04:01.5Z", ResetHeader, "headers.x-ratelimit-reset-requests", "1.5s", ""},
		{"remaining headers but none exhausted: no reset",
			&ProviderError{Status: 429, Headers: map[string]string{"x-ratelimit-remaining-tokens": "5", "x-ratelimit-reset-tokens": "6m0s"}},
			"", "", "", "", ""},
		{"anthropic-ratelimit-requests-reset (RFC 3339, RE-132 shape)",
			&ProviderError{Status: 429, Code: "rate_limit_error", Headers: map[string]string{"anthropic-ratelimit-requests-remaining": "0",
				"anthropic-ratelimit-requests-reset": "2026-01-02T03:05:00Z", "anthropic-ratelimit-tokens-remaining": "90000", "anthropic-ratelimit-tokens-reset": "2026-01-02T03:04:10Z"}},
			"2026-01-02T03:05:00Z", ResetHeader, "headers.anthropic-ratelimit-requests-reset", "2026-01-02T03:05:00Z", ""},
		{"\"resets Feb 7, 11am (Asia/Seoul)\" (RE2-062)",
			&ProviderError{Status: 429, Message: "You've hit your limit - resets Feb 7, 11am (Asia/Seoul)/login to switch to an API usage-billed account."},
			"2026-02-07T02:00:00Z", ResetText, "message", "resets Feb 7, 11am (Asia/Seoul)", WindowUsageLimit},
		{"\"try again after July 3, 2026 at 2:45 PM\" (RE-048), no zone: read as UTC",
			&ProviderError{Status: 429, Code: "usage_limit_reached", Message: "You have reached your usage limit. Upgrade your plan or add credits to continue, or try again after July 3, 2026 at 2:45 PM."},
			"2026-07-03T14:45:00Z", ResetText, "message", "try again after July 3, 2026 at 2:45 PM", WindowSubscription},
		{"\"try again at Sep 14th, 2026 6:43 AM\" (RE2-072)",
			&ProviderError{Status: 429, Message: "You've hit your usage limit. Visit .../settings/usage to purchase more\n credits or try again at Sep 14th, 2026 6:43 AM."},
			"2026-09-14T06:43:00Z", ResetText, "message", "try again at Sep 14th, 2026 6:43 AM", WindowUsageLimit},
		{"\"Your limit will reset at 2026-03-06 22:19:54\" (OC-058)",
			&ProviderError{Status: 429, Message: "LLM error 1310: Weekly/Monthly Limit Exhausted. Your limit will reset at 2026-03-06 22:19:54 (request_id: 20260303141547610b7f574d1b44cb)"},
			"2026-03-06T22:19:54Z", ResetText, "message", "reset at 2026-03-06 22:19:54", WindowWeekly},
		{"an ISO reset with an offset",
			&ProviderError{Status: 429, Message: "Daily limit reached, resets at 2026-01-03T00:00:00+09:00"},
			"2026-01-02T15:00:00Z", ResetText, "message", "resets at 2026-01-03T00:00:00+09:00", WindowDaily},
		{"a time of day alone: the next such moment (5pm PST = 01:00Z tomorrow)",
			&ProviderError{Status: 429, Message: "You've hit your limit · resets 5pm PST"},
			"2026-01-03T01:00:00Z", ResetText, "message", "resets 5pm PST", WindowUsageLimit},
		{"a date without a year already past by more than a day: next year",
			&ProviderError{Status: 429, Message: "monthly quota exhausted, resets Jan 1"},
			"2027-01-01T00:00:00Z", ResetText, "message", "resets Jan 1", WindowMonthly},
		{"a long window's retry-after (\"429 subscription usage limit. Retry after 108000 seconds.\")",
			&ProviderError{Status: 429, Message: "429 subscription usage limit. Retry after 108000 seconds."},
			"2026-01-03T09:04:00Z", ResetRetryAfter, "message", "108000000 ms", WindowSubscription},
		{"a short window's retry-after is no reset (TPM, RE-014)",
			&ProviderError{Status: 429, Message: "Rate limit reached for gpt-4 on tokens per min (TPM): Limit 10000, Used 8554, Requested 3082. Please try again in 9.816s."},
			"", "", "", "", ""},
		{"Anthropic's \"(not your usage limit)\" is no long window (RE-087)",
			&ProviderError{Status: 429, Message: "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited"},
			"", "", "", "", ""},
		{"a daily allocation without reset time (RE-116): long window only",
			&ProviderError{Status: 429, Code: "4006", Message: "4006: you have used up your daily free allocation of 10,000 neurons"},
			"", "", "", "", WindowDaily},
		{"每日额度 (Chinese daily quota)",
			&ProviderError{Status: 429, Message: "您今日的调用额度已用尽，请明天再试"},
			"", "", "", "", WindowDaily},
		{"a reset in the past is ignored",
			&ProviderError{Status: 429, Headers: map[string]string{"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "2026-01-02T03:00:00Z"}},
			"", "", "", "", ""},
		{"a reset more than a year away is not a reset",
			&ProviderError{Status: 429, Message: `{"error":{"type":"usage_limit_reached","resets_at":1900000000}}`},
			"", "", "", "", WindowSubscription},
		{"billing carries no reset",
			&ProviderError{Status: 402, Message: `Insufficient credits {"resets_in_seconds": 60}`},
			"", "", "", "", ""},
		// The fresh-user pass (issue 17).
		{"a 10-year resets_in_seconds is not a reset, not even through the capped retry-after",
			&ProviderError{Status: 429, Body: `{"error":{"type":"usage_limit_reached","resets_in_seconds":315360000}}`},
			"", "", "", "", WindowSubscription},
		{"Claude's usage limit with its reset as Unix seconds after a bar",
			&ProviderError{Status: 429, Message: "Claude AI usage limit reached|1767330000"},
			"2026-01-02T05:00:00Z", ResetText, "message", "limit reached|1767330000", WindowUsageLimit},
		{"Chinese reset with no zone: China Standard Time",
			&ProviderError{Status: 429, Message: "本月额度已用完，将于2026-02-01重置"},
			"2026-01-31T16:00:00Z", ResetText, "message", "将于2026-02-01重置", WindowMonthly},
		{"Chinese reset with a time and (UTC+8)",
			&ProviderError{Status: 429, Message: "您的限额将在 2026-01-02 13:00:00 (UTC+8) 重置"},
			"2026-01-02T05:00:00Z", ResetText, "message", "将在 2026-01-02 13:00:00 (utc+8) 重置", ""},
		{"Zhipu's 5-hour cap in Chinese is a long window",
			&ProviderError{Status: 429, Message: "已达到5小时的使用上限。您的限额将在 2026-01-02 18:00:00 重置。"},
			"2026-01-02T10:00:00Z", ResetText, "message", "将在 2026-01-02 18:00:00 重置", WindowSubscription},
		{"OpenRouter's limit then its period: free-models-per-day",
			&ProviderError{Status: 429, Message: "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day"},
			"", "", "", "", WindowDaily},
		{"a zone with daylight saving time by name, in its summer (US rule: EDT from the second Sunday of March)",
			&ProviderError{Status: 429, Message: "You've hit your limit · resets Mar 10, 10pm (America/New_York)"},
			"2026-03-11T02:00:00Z", ResetText, "message", "resets Mar 10, 10pm (America/New_York)", WindowUsageLimit},
		{"the same zone in its winter",
			&ProviderError{Status: 429, Message: "You've hit your limit · resets Jan 5, 10pm (America/New_York)"},
			"2026-01-06T03:00:00Z", ResetText, "message", "resets Jan 5, 10pm (America/New_York)", WindowUsageLimit},
		{"an EU zone in its summer (CEST from the last Sunday of March)",
			&ProviderError{Status: 429, Message: "You've hit your limit · resets Apr 1, 3pm (Europe/Berlin)"},
			"2026-04-01T13:00:00Z", ResetText, "message", "resets Apr 1, 3pm (Europe/Berlin)", WindowUsageLimit},
		{"a southern zone in its summer (AEDT until the first Sunday of April)",
			&ProviderError{Status: 429, Message: "You've hit your limit · resets Jan 20, 9am (Australia/Sydney)"},
			"2026-01-19T22:00:00Z", ResetText, "message", "resets Jan 20, 9am (Australia/Sydney)", WindowUsageLimit},
		{"OpenRouter's rate-limit headers inside the body's metadata (Unix ms)",
			&ProviderError{Status: 429, Message: `{"error":{"message":"Rate limit exceeded: free-models-per-day","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1767333840000"}}}}`},
			"2026-01-02T06:04:00Z", ResetHeader, "headers.x-ratelimit-reset", "1767333840000", WindowDaily},
		{"a per-minute limit then its period is no long window",
			&ProviderError{Status: 429, Message: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 30000, Requested 100."},
			"", "", "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ClassifyAt(tc.e, resetNow)
			if tc.at == "" {
				if r.Reset != nil {
					t.Fatalf("reset %+v, want none (reason %s)", r.Reset, r.Reason)
				}
			} else {
				want, err := time.Parse(time.RFC3339Nano, tc.at)
				if err != nil {
					t.Fatal(err)
				}
				if r.Reset == nil {
					t.Fatalf("no reset (reason %s rule %s), want %s", r.Reason, r.Evidence.Rule, tc.at)
				}
				if !r.Reset.At.Equal(want) || r.Reset.Source != tc.source || r.Reset.Field != tc.field || r.Reset.Match != tc.match {
					t.Fatalf("reset %+v\nwant at %s source %s field %s match %q", r.Reset, tc.at, tc.source, tc.field, tc.match)
				}
			}
			switch {
			case tc.window == "" && r.LongWindow != nil:
				t.Fatalf("long window %+v, want none", r.LongWindow)
			case tc.window != "" && (r.LongWindow == nil || r.LongWindow.Kind != tc.window):
				t.Fatalf("long window %+v, want %s", r.LongWindow, tc.window)
			}
		})
	}
}

// A relative reset needs the decision time; without one (and no
// ReceivedAt or Date header) only absolute resets are read, and the wall
// clock is never consulted. With a Date header that header is the time.
func TestReset_RelativeResetsNeedTheDecisionTime(t *testing.T) {
	e := &ProviderError{Status: 429, Message: `{"error":{"type":"usage_limit_reached","resets_in_seconds":60}}`}
	if r := Classify(e); r.Reset != nil {
		t.Fatalf("reset without a time: %+v", r.Reset)
	}
	e.Headers = map[string]string{"Date": "Fri, 02 Jan 2026 03:04:00 GMT"}
	if r := Classify(e); r.Reset == nil || !r.Reset.At.Equal(resetNow.Add(time.Minute)) {
		t.Fatalf("reset against the Date header: %+v", r.Reset)
	}
	abs := &ProviderError{Status: 429, Message: `{"error":{"type":"usage_limit_reached","resets_at":1767323100}}`}
	if r := Classify(abs); r.Reset == nil || r.Reset.At.Unix() != 1767323100 {
		t.Fatalf("absolute reset without a time: %+v", r.Reset)
	}
}

// FuzzReset: whatever the input, a reset is a rate limit's, after now,
// within a year and a day, with a known source and bounded evidence; a
// long window is a rate limit's with a known kind.
func FuzzReset(f *testing.F) {
	f.Add(429, "usage_limit_reached", `{"resets_in_seconds":86400}`, "x-ratelimit-reset-tokens", "6m0s")
	f.Add(429, "", "You've hit your limit · resets Feb 30, 25am (Mars/Olympus)", "", "")
	f.Add(429, "", "weekly limit reached. resets at 9999-99-99 99:99:99", "anthropic-ratelimit-requests-reset", "2026-13-01T00:00:00Z")
	f.Add(402, "", strings.Repeat("resets ", 2000)+"jan 1", "ratelimit-reset", "1e308")
	f.Fuzz(func(t *testing.T, status int, code, message, hk, hv string) {
		e := &ProviderError{Status: status, Code: code, Message: message}
		if hk != "" {
			e.Headers = map[string]string{hk: hv, strings.Replace(hk, "reset", "remaining", 1): "0"}
		}
		r := ClassifyAt(e, resetNow)
		if r.Reset != nil {
			d := r.Reset.At.Sub(resetNow)
			if r.Reason != ReasonRateLimit || d <= 0 || d > maxResetAhead || utf8.RuneCountInString(r.Reset.Match) > matchPreview+1 {
				t.Fatalf("reset %+v (reason %s)", r.Reset, r.Reason)
			}
			switch r.Reset.Source {
			case ResetCodex, ResetHeader, ResetText, ResetRetryAfter:
			default:
				t.Fatalf("source %q", r.Reset.Source)
			}
		}
		if w := r.LongWindow; w != nil {
			switch w.Kind {
			case WindowDaily, WindowWeekly, WindowMonthly, WindowSubscription, WindowUsageLimit:
			default:
				t.Fatalf("kind %q", w.Kind)
			}
			if r.Reason != ReasonRateLimit {
				t.Fatalf("long window on %s", r.Reason)
			}
		}
	})
}
