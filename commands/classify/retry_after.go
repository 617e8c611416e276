package classify

import (
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfterMs caps RetryAfterMs at one year: anything longer is a
// provider bug or a parse of something that was not a delay.
const maxRetryAfterMs = int64(365 * 24 * time.Hour / time.Millisecond)

// retryAfter finds the provider's requested wait (see [Result.RetryAfterMs]
// for the order). Headers of every error in the chain come first, then
// their texts. now resolves absolute times; when zero, each error's Date
// header is used.
func retryAfter(sigs []*signal, now time.Time) (int64, string) {
	for _, s := range sigs {
		if ms, f, ok := headerRetryAfter(s.e, now); ok {
			return ms, s.prefix + f
		}
	}
	for _, s := range sigs {
		for _, t := range []*text{s.msg, s.body} {
			if t == nil {
				continue
			}
			if ms, ok := textRetryAfter(t); ok {
				return ms, t.field
			}
		}
	}
	return 0, ""
}

func headerRetryAfter(e *ProviderError, now time.Time) (int64, string, bool) {
	if len(e.Headers) == 0 {
		return 0, "", false
	}
	if now.IsZero() {
		if d, err := http.ParseTime(e.Header("date")); err == nil {
			now = d
		}
	}
	for _, h := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if v := strings.TrimSpace(e.Header(h)); v != "" {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
				return clampMs(f), "headers." + h, true
			}
		}
	}
	if v := strings.TrimSpace(e.Header("retry-after")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return clampMs(f * 1000), "headers.retry-after", true
		}
		if at, err := http.ParseTime(v); err == nil && !now.IsZero() {
			return clampMs(float64(at.Sub(now)) / float64(time.Millisecond)), "headers.retry-after", true
		}
	}
	// An exhausted rate-limit window: a "…-remaining…" header at "0" with
	// its "…-reset…" sibling: Anthropic's anthropic-ratelimit-requests-
	// remaining/-reset (RFC 3339 times), OpenAI/Groq's x-ratelimit-remaining-
	// tokens/x-ratelimit-reset-tokens (durations such as "6m0s"). The
	// longest wait wins: every exhausted window must reopen.
	keys := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best, bestKey := int64(-1), ""
	for _, k := range keys {
		lk := strings.ToLower(k)
		if !strings.Contains(lk, "-remaining") || strings.TrimSpace(e.Headers[k]) != "0" {
			continue
		}
		rk := strings.Replace(lk, "-remaining", "-reset", 1)
		rv := strings.TrimSpace(e.Header(rk))
		if rv == "" {
			continue
		}
		ms, ok := resetValue(rv, now)
		if ok && ms > best {
			best, bestKey = ms, rk
		}
	}
	if best >= 0 {
		return best, "headers." + bestKey, true
	}
	return 0, "", false
}

// epochSecondsFloor and epochMillisFloor: a reset header value from here
// on is a Unix time in seconds (2001-09-09 on) or in milliseconds.
const (
	epochSecondsFloor = 1e9
	epochMillisFloor  = 1e12
)

// resetValue reads a reset header: a Go-style duration ("6m0s", "7.66s",
// "20ms"), plain seconds, or an RFC 3339 time (needs now).
func resetValue(v string, now time.Time) (int64, bool) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return clampMs(float64(d) / float64(time.Millisecond)), true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
		// A count this large is a Unix time, not a delay (OpenRouter's,
		// GitHub's X-RateLimit-Reset: epoch seconds, or milliseconds from
		// 1e12 on); relative to now, or unknown without one.
		if f >= epochSecondsFloor {
			if now.IsZero() {
				return 0, false
			}
			at := f * 1000
			if f >= epochMillisFloor {
				at = f
			}
			return clampMs(at - float64(now.UnixMilli())), true
		}
		return clampMs(f * 1000), true
	}
	if at, err := time.Parse(time.RFC3339, v); err == nil && !now.IsZero() {
		return clampMs(float64(at.Sub(now)) / float64(time.Millisecond)), true
	}
	return 0, false
}

var retryHint = newTable("retry_hint", "try again", "retry", "resets_in_seconds")

// textRetryAfter reads the first delay stated in the text: "Please try again
// in 9m38.016s", "Please retry in 20s", "retry after 86400 seconds",
// Google's "retryDelay": "3s", Codex's "resets_in_seconds": 602705.
// "Retrying in 4 seconds" (a client's own retry notice) does not count.
// Hand-written rather than a regex: it runs on every rate-limited error.
func textRetryAfter(t *text) (int64, bool) {
	if !retryHint.in(&t.hits) {
		return 0, false
	}
	s := t.lower
	for i := 0; ; {
		k := strings.Index(s[i:], "try")
		if k < 0 {
			break
		}
		k += i
		i = k + 3
		var rest string
		switch {
		case strings.HasPrefix(s[k:], "try again"):
			rest = s[k+len("try again"):]
		case k >= 2 && s[k-2:k] == "re":
			rest = s[k+3:]
			if strings.HasPrefix(rest, "delay") { // "retryDelay": "3s"
				if ms, ok := keyedNumber(rest[len("delay"):], true); ok {
					return ms, true
				}
				continue
			}
		default:
			continue
		}
		if rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue // "retrying", "retries"
		}
		rest = strings.TrimLeft(rest, " \t")
		switch {
		case strings.HasPrefix(rest, "in "):
			rest = rest[3:]
		case strings.HasPrefix(rest, "after "):
			rest = rest[6:]
		default:
			continue
		}
		rest = strings.TrimLeft(rest, " ~")
		if len(rest) > 48 {
			rest = rest[:48]
		}
		if ms, ok := parseHumanDuration(rest); ok {
			return ms, true
		}
	}
	if k := strings.Index(s, "resets_in_seconds"); k >= 0 {
		return keyedNumber(s[k+len("resets_in_seconds"):], false)
	}
	return 0, false
}

// keyedNumber reads `"?\s*[:=]\s*"?<number>` (seconds) after a JSON key;
// unit says an "s" suffix is required ("3s").
func keyedNumber(s string, unit bool) (int64, bool) {
	s = strings.TrimLeft(s, "\"' ")
	if s == "" || (s[0] != ':' && s[0] != '=') {
		return 0, false
	}
	s = strings.TrimLeft(s[1:], "\"' ")
	n := 0
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] == '.') {
		n++
	}
	if n == 0 || unit && (n >= len(s) || s[n] != 's') {
		return 0, false
	}
	f, err := strconv.ParseFloat(s[:n], 64)
	if err != nil {
		return 0, false
	}
	return clampMs(f * 1000), true
}

var durationUnits = []struct {
	name string
	ms   float64
}{
	{"milliseconds", 1}, {"millisecond", 1}, {"ms", 1},
	{"seconds", 1000}, {"second", 1000}, {"secs", 1000}, {"sec", 1000}, {"s", 1000},
	{"minutes", 60000}, {"minute", 60000}, {"mins", 60000}, {"min", 60000}, {"m", 60000},
	{"hours", 3600000}, {"hour", 3600000}, {"hrs", 3600000}, {"hr", 3600000}, {"h", 3600000},
	{"days", 86400000}, {"day", 86400000}, {"d", 86400000},
}

// parseHumanDuration reads "50.597s", "9m38.016s", "86400 seconds",
// "1 minute 30 seconds": number-unit pairs until the first thing that is not
// one. At least one pair is needed.
func parseHumanDuration(s string) (int64, bool) {
	total, n := 0.0, 0
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		st := i
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == st {
			break
		}
		f, err := strconv.ParseFloat(s[st:i], 64)
		if err != nil {
			break
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		unit := 0.0
		for _, u := range durationUnits {
			if strings.HasPrefix(s[i:], u.name) {
				end := i + len(u.name)
				if end < len(s) && s[end] >= 'a' && s[end] <= 'z' {
					continue // "mo…", "sent": not a unit
				}
				unit, i = u.ms, end
				break
			}
		}
		if unit == 0 {
			break
		}
		total += f * unit
		n++
	}
	if n == 0 {
		return 0, false
	}
	return clampMs(total), true
}

func clampMs(ms float64) int64 {
	if math.IsNaN(ms) || ms <= 0 {
		return 0
	}
	c := math.Ceil(ms - 1e-9)
	if c > float64(maxRetryAfterMs) {
		return maxRetryAfterMs
	}
	return int64(c)
}
