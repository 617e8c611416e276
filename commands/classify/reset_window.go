package classify

import "strings"

// Long usage windows (issue 17; reference §9: "rejected for rate limits
// with long-window evidence (periodic or subscription windows go straight
// to fallback)"; seed 000 "Cooldowns": "periodic usage-window limits such
// as weekly limit reached or monthly limit exhausted").
//
// A rate limit is a long window when, anywhere in the chain:
//
//   - its code or type is Codex's usage_limit_reached (a ChatGPT
//     subscription window), as a field or written in a text (a body or an
//     SDK message quoting it, escaped JSON included);
//   - its text names a period with a limit: daily, weekly, monthly, per
//     day/week/month, tokens/requests per day, a 5-hour window, within 40
//     bytes before limit, quota, allocation, usage, cap, exhausted, reached
//     or a request count ("Weekly/Monthly Limit Exhausted", "you have used
//     up your daily free allocation", "MONTHLY_REQUEST_COUNT"), and the
//     Chinese 每日/每天/今日/每周/本周/每月/本月 before 额度/限额/上限/用量/次数;
//   - its text names a subscription's limit ("subscription usage limit",
//     "subscription quota limit");
//   - its text says the user hit or reached their usage limit ("You've hit
//     your limit", "You have reached your usage limit", "The usage limit
//     has been reached"). A bare "usage limit" is not enough: Anthropic
//     says "(not your usage limit)" on a short server-side throttle.
//
// A minute or hour window (TPM, RPM, "per min") is short: retried as
// before.

var (
	windowPeriodic = newPattern("window_periodic",
		`\b(daily|weekly|monthly|per[ -]day|per[ -]week|per[ -]month|5-hour|five-hour)[^.\n]{0,40}?(limit|quota|allocation|usage|\bcap\b|exhaust|reached|request_count)`,
		"daily", "weekly", "monthly", "per day", "per-day", "per week", "per-week", "per month", "per-month", "5-hour", "five-hour")
	windowSubscription = newPattern("window_subscription",
		`\bsubscription[^.\n]{0,30}?(limit|quota|usage)|(limit|quota|usage)[^.\n]{0,20}?\bsubscription\b`,
		"subscription")
	// The limit then its period: OpenRouter "Rate limit exceeded:
	// free-models-per-day", "quota exceeded for requests per day".
	windowPeriodicAfter = newPattern("window_periodic_after",
		`\b(?:limit|quota)\b[^.\n]{0,40}?\b(daily|weekly|monthly|per[ -]day|per[ -]week|per[ -]month)\b`,
		"daily", "weekly", "monthly", "per day", "per-day", "per week", "per-week", "per month", "per-month")
	windowCJK = newPattern("window_cjk",
		`(每日|每天|今日|当日|每周|本周|每月|本月|\d+\s*小时)[^。]{0,12}?(额度|限额|上限|用量|次数)`,
		"每日", "每天", "今日", "当日", "每周", "本周", "每月", "本月", "小时")
	// Codex's code written into a text (a proxy that quotes the body as an
	// escaped JSON string).
	windowCodeText = newTable("window_code_text", "usage_limit_reached", "usage_limit_exceeded")
	windowHit      = newTable("window_hit", "hit your limit", "hit your usage limit", "reached your usage limit",
		"usage limit has been reached", "usage limit reached", "reached the usage limit", "exceeded your usage limit",
		"reached your limit")
)

// windowCodes are the codes and types of a long window (normalised with
// normCode).
var windowCodes = map[string]string{
	normCode("usage_limit_reached"):  WindowSubscription,
	normCode("usage_limit_exceeded"): WindowSubscription,
}

// longWindow returns the evidence that the chain's rate limit is a long
// usage window, nil when nothing says so.
func longWindow(sigs []*signal) *Window {
	for _, s := range sigs {
		for _, f := range []struct{ field, v string }{{s.prefix + "code", s.e.Code}, {s.prefix + "type", s.e.Type}} {
			if k, ok := windowCodes[normCode(f.v)]; ok && f.v != "" {
				return &Window{Kind: k, Field: f.field, Match: preview(f.v)}
			}
		}
	}
	for _, s := range sigs {
		for _, t := range []*text{s.msg, s.body} {
			if w := textWindow(t); w != nil {
				return w
			}
		}
	}
	return nil
}

// textWindow applies the text rules above to one field.
func textWindow(t *text) *Window {
	if t == nil {
		return nil
	}
	if m, ok := windowCodeText.find(&t.hits); ok {
		return &Window{Kind: WindowSubscription, Field: t.field, Match: m}
	}
	if m, ok := windowHit.find(&t.hits); ok {
		return &Window{Kind: WindowUsageLimit, Field: t.field, Match: m}
	}
	if g := submatch(windowPeriodic, t); g != nil {
		return &Window{Kind: periodKind(g[1]), Field: t.field, Match: preview(g[0])}
	}
	if g := submatch(windowPeriodicAfter, t); g != nil {
		return &Window{Kind: periodKind(g[1]), Field: t.field, Match: preview(g[0])}
	}
	if g := submatch(windowCJK, t); g != nil {
		return &Window{Kind: periodKind(g[1]), Field: t.field, Match: preview(g[0])}
	}
	if g := submatch(windowSubscription, t); g != nil {
		return &Window{Kind: WindowSubscription, Field: t.field, Match: preview(g[0])}
	}
	return nil
}

// submatch runs p (gated by its phrases) and returns its groups.
func submatch(p *pattern, t *text) []string {
	if !p.gate.in(&t.hits) {
		return nil
	}
	return p.re.FindStringSubmatch(t.lower)
}

// periodKind names the period a matched word stands for.
func periodKind(w string) string {
	switch {
	case strings.Contains(w, "week"), w == "每周", w == "本周":
		return WindowWeekly
	case strings.Contains(w, "month"), w == "每月", w == "本月":
		return WindowMonthly
	case strings.Contains(w, "hour"), strings.Contains(w, "小时"):
		return WindowSubscription
	}
	return WindowDaily
}
