package classify

import (
	"regexp"
	"strings"
)

// has402Marker: text that carries an HTTP 402 (ref §2.4 "402 marker"): a
// leading "402 Payment Required", "402 … used up your points" or "402 No
// available asset for api access"; "HTTP 402"; "error [code] 402";
// "got/returned/received [a] 402" (but not "got 402 records"). A bare
// leading 402 counts only when the rest has a known signal.
func has402Marker(t *text) (string, bool) {
	if !word402.in(&t.hits) {
		return "", false
	}
	s := t.lower
	lead := leadingStatus(s) == 402
	if lead && leading402Rest.in(&t.hits) {
		rest := stripLeadingStatus(s)
		for _, p := range []string{"payment required", "no available asset for api access"} {
			if strings.HasPrefix(rest, p) {
				return "402 " + p, true
			}
		}
		if k := strings.Index(rest, "used up your points"); k >= 0 && k <= 40 {
			return "402 … used up your points", true
		}
	}
	for i := 0; i < len(s); {
		k := strings.Index(s[i:], "402")
		if k < 0 {
			break
		}
		k += i
		i = k + 3
		if k > 0 && isWordByte(s[k-1]) || k+3 < len(s) && isWordByte(s[k+3]) {
			continue
		}
		lo := k - 24
		if lo < 0 {
			lo = 0
		}
		before := strings.TrimRight(s[lo:k], " \t:=")
		switch {
		case hasWordSuffix(before, "http"):
			return "http 402", true
		case hasWordSuffix(before, "error"), hasWordSuffix(before, "error code"):
			return "error 402", true
		}
		b := strings.TrimSuffix(strings.TrimSuffix(before, " an"), " a")
		for _, w := range []string{"got", "returned", "received"} {
			if hasWordSuffix(b, w) {
				if strings.HasPrefix(strings.TrimLeft(s[k+3:], " "), "records") {
					break
				}
				return w + " 402", true
			}
		}
	}
	if lead {
		rest := newText(t.field, stripLeadingStatus(s))
		if billingPhrases.in(&rest.hits) || rateLimitPhrases.in(&rest.hits) {
			return "402", true
		}
		if _, ok := firstOf(rest, billingMore...); ok {
			return "402", true
		}
		if _, ok := transient402(rest); ok {
			return "402", true
		}
	}
	return "", false
}

func hasWordSuffix(s, w string) bool {
	return strings.HasSuffix(s, w) && (len(s) == len(w) || !isWordByte(s[len(s)-len(w)-1]))
}

var (
	wrapper402Re = regexp.MustCompile(`^\W{0,3}(?:error:?\s*)?(?:http\s*)?402\s*(?:payment required)?\s*[:\-–—]?\s*`)
	urlRe        = regexp.MustCompile(`https?://\S+`)
)

// classify402 is the 402 sub-classifier (ref §2.4; seed 000 "temporary 402
// usage-window and organization/workspace spend-limit errors are classified
// as rate_limit"). It returns billing or rate_limit and the deciding phrase.
func classify402(t *text) (Reason, string) {
	s := wrapper402Re.ReplaceAllString(t.lower, "")
	s = urlRe.ReplaceAllString(s, "")
	n := t
	if s != t.lower {
		n = newText(t.field, s)
	}
	if strings.TrimSpace(n.lower) == "" {
		return ReasonBilling, "402 (empty)"
	}
	// 2. a quota-refresh window.
	if strings.Contains(n.lower, "subscription quota limit") &&
		(strings.Contains(n.lower, "automatic quota refresh") || strings.Contains(n.lower, "rolling time window")) {
		return ReasonRateLimit, "subscription quota limit … quota refresh"
	}
	// 3. an explicit billing signal.
	if m, ok := explicit402Billing(n); ok {
		return ReasonBilling, m
	}
	// 4. the rate-limit table.
	if m, ok := rateLimitMatch(n); ok {
		return ReasonRateLimit, m
	}
	// 5. a retryable transient signal.
	if m, ok := transient402(n); ok {
		return ReasonRateLimit, m
	}
	return ReasonBilling, "402"
}

var explicit402 = newTable("402_explicit_billing",
	"insufficient credits", "insufficient quota", "credit balance", "insufficient balance",
	"plans & billing", "add more credits", "top up", "billing hard limit", "hard limit reached")
var planHint = newTable("402_plan_hint", "upgrade your plan", "upgrade plan", "current plan", "subscription")
var limitWord = newTable("limit_word", "limit")
var maximumAllowed = newTable("maximum_allowed", "maximum allowed")

func explicit402Billing(t *text) (string, bool) {
	if m, ok := explicit402.find(&t.hits); ok {
		return m, true
	}
	if limitWord.in(&t.hits) {
		if m, ok := planHint.find(&t.hits); ok {
			return m + " … limit", true
		}
		if maximumAllowed.in(&t.hits) {
			return "maximum allowed … limit", true
		}
	}
	return "", false
}

var (
	retryWord         = newTable("402_retry_word", "try again", "retry", "temporary", "cooldown")
	usageWindow       = newTable("402_usage_window", "usage limit", "rate limit", "organization usage")
	periodWord        = newTable("402_period", "daily", "weekly", "monthly")
	spendLimit        = newTable("402_spend_limit", "usage limit", "spend limit", "spending limit")
	resetWord         = newTable("402_reset", "reset")
	orgWord           = newTable("402_org", "organization", "workspace")
	orgLimitQualifier = newTable("402_org_qualifier", "spend limit", "spending limit", "billing period", "exceeded", "reached", "exhausted")
)

// transient402 is ref §2.4's "retryable transient signal".
func transient402(t *text) (string, bool) {
	h := &t.hits
	if retryWord.in(h) {
		if m, ok := usageWindow.find(h); ok {
			return m + " + retry", true
		}
	}
	if p, ok := periodWord.find(h); ok {
		if m, ok := spendLimit.find(h); ok {
			return p + " " + m, true
		}
		if limitWord.in(h) && resetWord.in(h) {
			return p + " limit … reset", true
		}
	}
	if o, ok := orgWord.find(h); ok && limitWord.in(h) {
		if m, ok := orgLimitQualifier.find(h); ok {
			return o + " limit … " + m, true
		}
	}
	return "", false
}
