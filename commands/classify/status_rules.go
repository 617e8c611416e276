package classify

import (
	"regexp"
	"strconv"
	"strings"
)

// statusRule applies reference §2.3 to status with the effective verdict
// eff. t is the message text (for the 402 text rule, the permanent-auth
// phrases and the "no body" test); plugin is the provider plugin's verdict.
// decided=false means the status says nothing ("null" in the reference).
func statusRule(status int, eff verdict, t *text, c *msgCtx, explicit bool, plugin verdict) (verdict, bool) {
	field := "status"
	if !explicit {
		field = fieldOf(t)
	}
	def := func(r Reason, rule *ruleInfo) (verdict, bool) {
		return verdict{reason: r, rule: rule, field: field, match: strconv.Itoa(status), bare: !eff.ok() || statusEcho(eff)}, true
	}
	keep := func() (verdict, bool) { v := eff; v.kept = true; return v, true }
	is := func(rs ...Reason) bool {
		for _, r := range rs {
			if eff.reason == r {
				return true
			}
		}
		return false
	}

	switch status {
	case 402:
		if t.empty() {
			return def(ReasonBilling, ruleStatus402)
		}
		r, why := classify402(t)
		return verdict{reason: r, rule: ruleStatus402, field: fieldOf(t), match: why}, true
	case 429:
		if eff.reason == ReasonBilling && !ambiguousBalance(t) {
			return keep()
		}
		if providerBillingOn429(c.providerRaw) {
			if m, ok := billingMatch(t); ok {
				return verdict{reason: ReasonBilling, rule: ruleStatus429, field: fieldOf(t), match: m, kept: true}, true
			}
		}
		if eff.reason == ReasonOverloaded {
			v := eff
			v.kept = true
			v.rule = ruleStatus429Over
			return v, true
		}
		return def(ReasonRateLimit, ruleStatus429)
	case 401, 403:
		if plugin.ok() {
			return keep()
		}
		if eff.reason == ReasonAuthPermanent {
			return keep()
		}
		if !t.empty() {
			if m, ok := highConfidenceAuth(t); ok {
				return verdict{reason: ReasonAuthPermanent, rule: ruleStatusAuth, field: fieldOf(t), match: m, kept: true}, true
			}
		}
		if eff.reason == ReasonBilling {
			return keep()
		}
		return def(ReasonAuth, ruleStatusAuth)
	case 408:
		return def(ReasonTimeout, ruleStatus408)
	case 410:
		if is(ReasonSessionExpired, ReasonBilling, ReasonAuthPermanent, ReasonAuth) {
			return keep()
		}
		return def(ReasonTimeout, ruleStatus410)
	}
	// From here on a context overflow verdict wins over the status.
	if eff.reason == ReasonContextOverflow {
		v := eff
		v.kept = true
		return v, true
	}
	switch {
	case status == 404:
		if is(ReasonSessionExpired, ReasonBilling, ReasonAuthPermanent, ReasonAuth, ReasonFormat) {
			return keep()
		}
		return def(ReasonModelNotFound, ruleStatus404)
	case status == 529:
		return def(ReasonOverloaded, ruleStatus529)
	case status == 499 || status >= 500 && status <= 599:
		if is(ReasonOverloaded, ReasonServerError) || status >= 500 && is(ReasonFormat) {
			return keep()
		}
		// fledger (issue 17, "Billing under a 5xx"): the provider's own
		// billing answer inside a 5xx — a body that states the account's
		// condition (insufficient balance, arrears, overdue) — is billing.
		// No server fault is worded as a balance; MiniMax sends its 1008
		// "insufficient balance" under HTTP 500, and relays wrap billing
		// answers in their own 500s. A billing noun alone is not enough.
		if status >= 500 && is(ReasonBilling) && c != nil && c.billingCondition {
			return keep()
		}
		switch status {
		case 499, 504, 522, 524:
			return def(ReasonTimeout, ruleStatus5xx)
		}
		return def(ReasonServerError, ruleStatus5xx)
	case status == 400 || status == 422:
		// fledger (issue 17 second blind set): transport wording (rule 26)
		// does not stand under the provider's 400/422 — the request was
		// answered, so "Unable to reach the model provider … status code
		// 400: {…ssrf_blocked…}" is an app's headline over a refusal.
		if eff.ok() && eff.reason != ReasonServerError && !transportNarration(eff) {
			return keep()
		}
		if noBody(t) {
			return verdict{}, false
		}
		return def(ReasonFormat, ruleStatus400)
	case status == 413:
		if eff.ok() {
			return keep()
		}
		return def(ReasonContextOverflow, ruleStatus413)
	case status >= 200 && status <= 299:
		if eff.ok() {
			return keep()
		}
		return def(ReasonEmptyResponse, ruleStatus2xx)
	}
	return verdict{}, false
}

// transportNarration: a verdict read from transport wording (rule 26),
// which a provider's own 4xx answer contradicts.
func transportNarration(v verdict) bool { return v.rule == ruleMsgTimeout }

// statusEcho: a verdict that rests only on a status number written in the
// text — rule 29's leading status, rule 20's bare "401"/"403", rule 13's
// "429" in text — says no more than the status itself.
func statusEcho(v verdict) bool {
	switch v.rule {
	case ruleMsgLeadingStatus:
		return true
	case ruleMsgAuth:
		return v.match == "401" || v.match == "403"
	case ruleMsgRateLimit:
		return strings.Contains(v.match, "429")
	}
	return false
}

func fieldOf(t *text) string {
	if t == nil || t.field == "" {
		return "message"
	}
	return t.field
}

// noBody: no message at all, or an explicit "no body" wrapper (ref §2.3
// 400/422; seed 004: "an HTTP wrapper with no response body is not
// automatically classified as a format error").
func noBody(t *text) bool {
	if t.empty() {
		return true
	}
	s := t.lower
	if st := leadingStatus(s); st != 0 {
		s = stripLeadingStatus(s)
	}
	s = strings.TrimLeft(strings.TrimRight(strings.TrimSpace(s), ". "), ":-– ")
	switch s {
	case "", "no body", "no response body", "status code (no body)", "(no body)", "no body response":
		return true
	}
	return strings.HasSuffix(s, "(no body)")
}

var leadingStatusRe = regexp.MustCompile(`^\s*(?:error:?\s*)?(?:http(?:/[\d.]+)?\s*)?\d{3}\b\s*`)

func stripLeadingStatus(s string) string { return leadingStatusRe.ReplaceAllString(s, "") }

// ambiguousBalance is the generic "insufficient account balance" a 429 may
// carry for a transient reason (ref §2.3 429), unless a JSON error type
// names billing.
func ambiguousBalance(t *text) bool {
	if !strings.Contains(t.lower, "insufficient account balance") {
		return false
	}
	for _, f := range t.embedded() {
		if keyKind(f.key) == keyType && typeReason(f.val) == ReasonBilling {
			return false
		}
	}
	return true
}

// providerBillingOn429: xAI, Moonshot and Kimi send real billing errors with
// 429 (ref §2.3 429: the provider id contains xai/moonshot/kimi). The
// provider is the lower-cased provider field as given.
func providerBillingOn429(p string) bool {
	return strings.Contains(p, "xai") || strings.Contains(p, "moonshot") || strings.Contains(p, "kimi")
}

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

// ceilingRe reads "Limit X, [Used U,] Requested Y" (Groq, OpenAI TPM text).
var ceilingRe = regexp.MustCompile(`\blimit\W{0,3}~?(\d(?:[\d,]*\d)?)\W{1,4}(?:used\W{0,3}~?\d[\d,]*\W{1,4})?requested\W{0,3}~?(\d(?:[\d,]*\d)?)`)

// detectCeiling finds a provider request-size ceiling: TPM (or TPD) text
// stating limit X and requested Y with Y > X (ref §2.5; POLICY "request-size
// ceiling"; seed 000 Groq "413 … on tokens per minute (TPM): Limit 8000,
// Requested 8098").
func detectCeiling(t *text) (*Ceiling, string) {
	if !tpmHint.in(&t.hits) || !strings.Contains(t.lower, "requested") {
		return nil, ""
	}
	m := ceilingRe.FindStringSubmatch(t.lower)
	if m == nil {
		return nil, ""
	}
	limit, err1 := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	req, err2 := strconv.ParseInt(strings.ReplaceAll(m[2], ",", ""), 10, 64)
	if err1 != nil || err2 != nil || req <= limit {
		return nil, ""
	}
	return &Ceiling{LimitTokens: limit, RequestedTokens: req}, m[0]
}
