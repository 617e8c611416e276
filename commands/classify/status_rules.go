package classify

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/fledger/fledger/events"
)

// statusRule applies reference §2.3 to status with the effective verdict
// eff. t is the message text (for the 402 text rule, the permanent-auth
// phrases and the "no body" test); plugin is the provider plugin's verdict.
// decided=false means the status says nothing ("null" in the reference).
// Each status, or range of statuses, has its rule below.
func statusRule(status int, eff verdict, t *text, c *msgCtx, explicit bool, plugin verdict) (verdict, bool) {
	s := statusCtx{status: status, eff: eff, t: t, c: c, plugin: plugin, field: "status"}
	if !explicit {
		s.field = fieldOf(t)
	}
	switch status {
	case 402:
		return s.payment()
	case 429:
		return s.tooMany()
	case 401, 403:
		return s.auth()
	case 408:
		return s.def(ReasonTimeout, ruleStatus408)
	case 410:
		return s.gone()
	}
	// From here on a context overflow verdict wins over the status.
	if eff.reason == ReasonContextOverflow {
		return s.keep()
	}
	switch {
	case status == 404:
		return s.notFound()
	case status == 529:
		return s.def(ReasonOverloaded, ruleStatus529)
	case status == 499 || status >= 500 && status <= 599:
		return s.serverSide()
	case status == 400 || status == 422:
		return s.badRequest()
	case status == 413:
		return s.keepOr(ReasonContextOverflow, ruleStatus413)
	case status >= 200 && status <= 299:
		return s.keepOr(ReasonEmptyResponse, ruleStatus2xx)
	}
	return verdict{}, false
}

// statusCtx is what the status rules read: the status, the effective
// verdict eff, the text, the message context, the plugin's verdict, and
// the field a status verdict cites.
type statusCtx struct {
	status int
	eff    verdict
	t      *text
	c      *msgCtx
	plugin verdict
	field  string
}

// def is the status's own verdict r, cited by rule.
func (s *statusCtx) def(r Reason, rule *ruleInfo) (verdict, bool) {
	return verdict{reason: r, rule: rule, field: s.field, match: strconv.Itoa(s.status), bare: !s.eff.ok() || statusEcho(s.eff)}, true
}

// keep keeps the effective verdict over the status.
func (s *statusCtx) keep() (verdict, bool) { v := s.eff; v.kept = true; return v, true }

// keepOr keeps a decided effective verdict, else gives the status's own.
func (s *statusCtx) keepOr(r Reason, rule *ruleInfo) (verdict, bool) {
	if s.eff.ok() {
		return s.keep()
	}
	return s.def(r, rule)
}

// is reports whether the effective verdict is one of rs.
func (s *statusCtx) is(rs ...Reason) bool {
	for _, r := range rs {
		if s.eff.reason == r {
			return true
		}
	}
	return false
}

// payment: 402 is billing without text, else the 402 sub-classifier's.
func (s *statusCtx) payment() (verdict, bool) {
	if s.t.empty() {
		return s.def(ReasonBilling, ruleStatus402)
	}
	r, why := classify402(s.t)
	return verdict{reason: r, rule: ruleStatus402, field: fieldOf(s.t), match: why}, true
}

// tooMany: 429 is rate_limit unless the text says billing (clearly, or
// from a provider that bills with 429) or overloaded.
func (s *statusCtx) tooMany() (verdict, bool) {
	if s.eff.reason == ReasonBilling && !ambiguousBalance(s.t) {
		return s.keep()
	}
	if providerBillingOn429(s.c.providerRaw) {
		if m, ok := billingMatch(s.t); ok {
			return verdict{reason: ReasonBilling, rule: ruleStatus429, field: fieldOf(s.t), match: m, kept: true}, true
		}
	}
	if s.eff.reason == ReasonOverloaded {
		v := s.eff
		v.kept = true
		v.rule = ruleStatus429Over
		return v, true
	}
	return s.def(ReasonRateLimit, ruleStatus429)
}

// auth: 401/403 is auth unless a plugin decided, the text is a permanent
// revocation, or the verdict is billing.
func (s *statusCtx) auth() (verdict, bool) {
	if s.plugin.ok() {
		return s.keep()
	}
	if s.eff.reason == ReasonAuthPermanent {
		return s.keep()
	}
	if !s.t.empty() {
		if m, ok := highConfidenceAuth(s.t); ok {
			return verdict{reason: ReasonAuthPermanent, rule: ruleStatusAuth, field: fieldOf(s.t), match: m, kept: true}, true
		}
	}
	if s.eff.reason == ReasonBilling {
		return s.keep()
	}
	// fledger (issue 17 fourth blind set): a 401/403 whose body names a
	// rate limit in words — Kimi's 403 permission_error "You've reached
	// your concurrent request limit. Please wait for your ongoing requests
	// to finish" — is the provider throttling, not refusing the key. A
	// verdict that only echoes a status number does not count.
	if s.eff.reason == ReasonRateLimit && !statusEcho(s.eff) {
		return s.keep()
	}
	return s.def(ReasonAuth, ruleStatusAuth)
}

// gone: 410 is timeout unless the verdict is a session, billing or auth
// one, or (fledger, issue 17 third blind set) a retired model: "The model
// 'x' has reached its end of life … and is no longer available" is what
// Gone means for a model.
func (s *statusCtx) gone() (verdict, bool) {
	if s.is(ReasonSessionExpired, ReasonBilling, ReasonAuthPermanent, ReasonAuth, ReasonModelNotFound) {
		return s.keep()
	}
	return s.def(ReasonTimeout, ruleStatus410)
}

// notFound: 404 is model_not_found unless the verdict is more specific.
func (s *statusCtx) notFound() (verdict, bool) {
	if s.is(ReasonSessionExpired, ReasonBilling, ReasonAuthPermanent, ReasonAuth, ReasonFormat) {
		return s.keep()
	}
	return s.def(ReasonModelNotFound, ruleStatus404)
}

// serverSide: 499 and 5xx are timeout (499, 504, 522, 524) or server_error,
// unless the verdict is overloaded, server_error, a 5xx format, or a
// billing condition.
func (s *statusCtx) serverSide() (verdict, bool) {
	if s.is(ReasonOverloaded, ReasonServerError) || s.status >= 500 && s.is(ReasonFormat) {
		return s.keep()
	}
	// fledger (issue 17 third blind set): a relay's 503 because no channel
	// or deployment serves the model ("当前分组 svip 下对于模型 无可用渠道",
	// "no available channel for model x") is the model's absence on this
	// route, not a server fault; the provider's own words say more.
	if s.status == 503 && s.is(ReasonModelNotFound) {
		return s.keep()
	}
	// fledger (issue 17 fresh-user pass; POLICY: provider-specific codes
	// and types beat the outer status): a wrapper's 5xx around the
	// provider's own rate_limit_error type or an SDK's RateLimitError is
	// the provider's 429.
	if s.is(ReasonRateLimit) && s.c != nil && s.c.typedRateLimit {
		return s.keep()
	}
	// fledger (issue 17, "Billing under a 5xx"): the provider's own
	// billing answer inside a 5xx — a body that states the account's
	// condition (insufficient balance, arrears, overdue) — is billing.
	// No server fault is worded as a balance; MiniMax sends its 1008
	// "insufficient balance" under HTTP 500, and relays wrap billing
	// answers in their own 500s. A billing noun alone is not enough.
	if s.status >= 500 && s.is(ReasonBilling) && s.c != nil && s.c.billingCondition {
		return s.keep()
	}
	switch s.status {
	case 499, 504, 522, 524:
		return s.def(ReasonTimeout, ruleStatus5xx)
	}
	return s.def(ReasonServerError, ruleStatus5xx)
}

// badRequest: 400/422 is format unless a decided verdict stands, or says
// nothing when there is no body.
func (s *statusCtx) badRequest() (verdict, bool) {
	// fledger (issue 17 second blind set): transport wording (rule 26)
	// does not stand under the provider's 400/422 — the request was
	// answered, so "Unable to reach the model provider … status code
	// 400: {…ssrf_blocked…}" is an app's headline over a refusal.
	if s.eff.ok() && s.eff.reason != ReasonServerError && !transportNarration(s.eff) {
		return s.keep()
	}
	if noBody(s.t) {
		return verdict{}, false
	}
	return s.def(ReasonFormat, ruleStatus400)
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
	// Token counts are stored (AttemptFailed.request_size_ceiling) as JSON
	// numbers: one above 2^53 − 1, which JavaScript would round, is no real
	// count, and the text states no ceiling.
	if err1 != nil || err2 != nil || req <= limit || req > events.MaxExactInt {
		return nil, ""
	}
	return &Ceiling{LimitTokens: limit, RequestedTokens: req}, m[0]
}
