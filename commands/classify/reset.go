package classify

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Provider reset times (issue 17; seed 000 "OpenAI Codex subscription plus
// API-key backup": "OpenClaw records the exact reset time when Codex
// provides one"; reference §3 "Subscription blocks").
//
// A rate limit may say when its usage window reopens. The sources, first
// found wins:
//
//  1. Codex usage_limit_reached JSON: "resets_at" (Unix seconds, or ms, or
//     RFC 3339) before "resets_in_seconds" (added to the decision time),
//     anywhere in a message or body of the chain, escaped JSON included.
//  2. Rate-limit reset headers of an exhausted window: a "…-reset…"
//     header (x-ratelimit-reset-requests/-tokens as Go durations "6m0s",
//     anthropic-ratelimit-*-reset as RFC 3339, ratelimit-reset and
//     x-ratelimit-reset as seconds or Unix seconds) whose "…-remaining…"
//     sibling is "0"; the latest of those wins (every exhausted window
//     must reopen). When no window says it is exhausted because the
//     response carries no "…-remaining…" header at all, the soonest reset
//     counts (fledger never blocks past a reopening it cannot rule out).
//  3. A reset time in the text (reset_text.go): "resets Feb 7, 11am
//     (Asia/Seoul)", "try again after July 3, 2026 at 2:45 PM", "Your
//     limit will reset at 2026-03-06 22:19:54", "resets 5pm".
//  4. For a long-window limit only (reset_window.go), the retry-after
//     ([Result.RetryAfterMs]): "429 subscription usage limit. Retry after
//     108000 seconds."
//
// A relative value needs the decision time ([ClassifyAt]'s now, else the
// error's ReceivedAt, else its Date header); without one only absolute
// resets are read. A reset at or before now, or more than maxResetAhead
// after it, is not a reset and the next source is tried.

// maxResetAhead: a "reset" more than a year and a day away is a parse of
// something else (an expiry date, an account creation date).
const maxResetAhead = 366 * 24 * time.Hour

// resetOf returns the reset and the long-window evidence of a rate limit.
func resetOf(sigs []*signal, now time.Time, retryAfterMs int64, retryField string) (*Reset, *Window) {
	if now.IsZero() && len(sigs) > 0 {
		if h := sigs[0].e.Header("date"); h != "" {
			if d, err := http.ParseTime(h); err == nil {
				now = d
			}
		}
	}
	w := longWindow(sigs)
	ok := func(r *Reset) bool {
		if r == nil || r.At.IsZero() {
			return false
		}
		return now.IsZero() || r.At.After(now) && r.At.Sub(now) <= maxResetAhead
	}
	for _, s := range sigs {
		for _, t := range []*text{s.msg, s.body} {
			if r := codexReset(t, now); ok(r) {
				return r, w
			}
		}
	}
	for _, s := range sigs {
		if r := headerReset(s, now); ok(r) {
			return r, w
		}
	}
	for _, s := range sigs {
		for _, t := range []*text{s.msg, s.body} {
			if r := textReset(t, now); ok(r) {
				return r, w
			}
		}
	}
	// A retry-after at its one-year cap was clamped from something longer
	// (a 10-year resets_in_seconds): no reset to state, like any other
	// source beyond maxResetAhead.
	if w != nil && retryAfterMs > 0 && retryAfterMs < maxRetryAfterMs && !now.IsZero() {
		r := &Reset{At: millis(now.Add(time.Duration(retryAfterMs) * time.Millisecond)), Source: ResetRetryAfter,
			Field: retryField, Match: strconv.FormatInt(retryAfterMs, 10) + " ms"}
		if ok(r) {
			return r, w
		}
	}
	return nil, w
}

// millis truncates t to the millisecond, in UTC (events store Unix ms).
func millis(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// codexReset reads Codex's usage_limit_reached fields from t.
func codexReset(t *text, now time.Time) *Reset {
	if t == nil || !strings.Contains(t.lower, "resets_") {
		return nil
	}
	if v, ok := keyValue(t.lower, "resets_at"); ok {
		if at, ok := absoluteValue(v); ok {
			return &Reset{At: at, Source: ResetCodex, Field: t.field, Match: "resets_at=" + v}
		}
	}
	if v, ok := keyValue(t.lower, "resets_in_seconds"); ok && !now.IsZero() {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f < maxResetAhead.Seconds() {
			at := now.Add(time.Duration(f * float64(time.Second)))
			return &Reset{At: millis(at), Source: ResetCodex, Field: t.field, Match: "resets_in_seconds=" + v}
		}
	}
	return nil
}

// keyValue finds key as a JSON-ish key in s (the next byte after it is a
// quote, backslash, space, ':' or '=') and returns its scalar value: after
// the ':' or '=', quotes, backslashes and spaces skipped, up to the next
// delimiter, at most 40 bytes.
func keyValue(s, key string) (string, bool) {
	for i := 0; ; {
		k := strings.Index(s[i:], key)
		if k < 0 {
			return "", false
		}
		k += i
		i = k + len(key)
		if k > 0 && isWordByte(s[k-1]) {
			continue
		}
		j := i
		for j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '\\' || s[j] == ' ') {
			j++
		}
		if j >= len(s) || (s[j] != ':' && s[j] != '=') {
			continue
		}
		j++
		for j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '\\' || s[j] == ' ') {
			j++
		}
		e := j
		for e < len(s) && e-j < 40 && !strings.ContainsRune(",}]\"'\\\n\r\t", rune(s[e])) {
			e++
		}
		if v := strings.TrimSpace(s[j:e]); v != "" && v != "null" {
			return v, true
		}
	}
}

// absoluteValue reads an absolute time: Unix seconds (or milliseconds
// when above 10^11) or RFC 3339 (any case).
func absoluteValue(v string) (time.Time, bool) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
		if n > 1e11 {
			return millis(time.UnixMilli(n)), true
		}
		return millis(time.Unix(n, 0)), true
	}
	if t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(v)); err == nil {
		return millis(t), true
	}
	return time.Time{}, false
}

// headerReset reads the reset headers of e (see source 2 above).
func headerReset(s *signal, now time.Time) *Reset {
	e := s.e
	if len(e.Headers) == 0 {
		return nil
	}
	keys := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type cand struct {
		key, val string
		at       time.Time
	}
	var exhausted, silent []cand
	anyRemaining := false
	for _, k := range keys {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "ratelimit") && strings.Contains(lk, "remaining") {
			anyRemaining = true
		}
		if !strings.Contains(lk, "ratelimit") || !strings.Contains(lk, "-reset") {
			continue
		}
		v := strings.TrimSpace(e.Headers[k])
		at, ok := resetHeaderValue(v, now)
		if !ok {
			continue
		}
		c := cand{key: lk, val: v, at: at}
		switch rem := strings.TrimSpace(e.Header(strings.Replace(lk, "-reset", "-remaining", 1))); rem {
		case "0":
			exhausted = append(exhausted, c)
		case "":
			silent = append(silent, c)
		}
	}
	var best *cand
	switch {
	case len(exhausted) > 0:
		for i := range exhausted {
			if best == nil || exhausted[i].at.After(best.at) {
				best = &exhausted[i]
			}
		}
	case !anyRemaining && len(silent) > 0:
		for i := range silent {
			if best == nil || silent[i].at.Before(best.at) {
				best = &silent[i]
			}
		}
	}
	if best == nil {
		return nil
	}
	return &Reset{At: best.at, Source: ResetHeader, Field: s.prefix + "headers." + best.key, Match: best.val}
}

// resetHeaderValue reads a reset header: a Go duration ("6m0s", "1.5s",
// "20ms") or plain seconds after now; a number from 10^9 is Unix seconds,
// from 10^12 Unix milliseconds; RFC 3339 is absolute.
func resetHeaderValue(v string, now time.Time) (time.Time, bool) {
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		if now.IsZero() {
			return time.Time{}, false
		}
		return millis(now.Add(d)), true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
		if f >= epochMillisFloor { // OpenRouter's X-RateLimit-Reset: Unix milliseconds
			return millis(time.UnixMilli(int64(f))), true
		}
		if f >= epochSecondsFloor {
			return millis(time.UnixMilli(int64(f * 1000))), true
		}
		if now.IsZero() || f > maxResetAhead.Seconds() {
			return time.Time{}, false
		}
		return millis(now.Add(time.Duration(f * float64(time.Second)))), true
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return millis(t), true
	}
	return time.Time{}, false
}
