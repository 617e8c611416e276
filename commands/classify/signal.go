package classify

import (
	"strconv"
	"strings"
)

// signal is one error of the chain, prepared for the rules (reference §2.1
// "classifyFailoverSignal").
type signal struct {
	e      *ProviderError
	prefix string // evidence prefix: "" for the top error, "cause[2]." below
	ctx    msgCtx

	status         int
	statusExplicit bool

	msg  *text // the message, or the body when there is no message
	body *text // the body, when there is also a message

	details     []*text
	detailsDone bool

	fam        string // provider family (provider_codes.go), lazy
	familyDone bool
	prov       []codeHit // provider-table hits, lazy
	provDone   bool

	inner      int // provider status written inside the texts, lazy
	innerField string
	innerDone  bool
	// statusInner: s.status was read from inside the text (innerStatus).
	statusInner bool
}

func newSignal(e *ProviderError, prefix string) *signal {
	s := &signal{e: e, prefix: prefix}
	s.ctx.providerRaw = strings.ToLower(strings.TrimSpace(e.Provider))
	s.ctx.provider = providerID(s.ctx.providerRaw)
	switch {
	case strings.TrimSpace(e.Message) != "":
		s.msg = newText(prefix+"message", e.Message)
		if strings.TrimSpace(e.Body) != "" {
			s.body = newText(prefix+"body", e.Body)
		}
	case strings.TrimSpace(e.Body) != "":
		s.msg = newText(prefix+"body", e.Body)
	default:
		s.msg = newText(prefix+"message", "")
	}
	if e.Status > 0 {
		s.status, s.statusExplicit = e.Status, true
	} else {
		s.status = leadingStatus(s.msg.lower)
	}
	s.ctx.status = s.status
	if len(e.Headers) == 0 {
		if h := embeddedHeaders(s.msg, s.body); len(h) > 0 {
			c := *e
			c.Headers = h
			s.e = &c
		}
	}
	s.ctx.billingCondition = statesBillingCondition(s.msg) || s.body != nil && statesBillingCondition(s.body)
	s.ctx.errType, s.ctx.errTypeField = e.Type, prefix+"type"
	if s.ctx.errType == "" && looksLikeType(e.Code) {
		s.ctx.errType, s.ctx.errTypeField = e.Code, prefix+"code"
	}
	s.ctx.typedRateLimit = typeReason(e.Type) == ReasonRateLimit || typeReason(e.Code) == ReasonRateLimit ||
		typedRateLimit(s.msg) || s.body != nil && typedRateLimit(s.body)
	for _, v := range []string{e.Code, e.Type} {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "server_error", "upstream_error":
			s.ctx.structuredServer = true
		}
	}
	return s
}

// embeddedHeaders reads rate-limit headers a body carries as JSON —
// OpenRouter's error.metadata.headers {"X-RateLimit-Remaining": "0",
// "X-RateLimit-Reset": "1741305600000"} — for an error that came without
// headers of its own (fledger, issue 17 fresh-user pass): the reset and
// retry-after readers then see them as headers.
func embeddedHeaders(ts ...*text) map[string]string {
	var h map[string]string
	for _, t := range ts {
		if t == nil || !strings.Contains(t.lower, "headers") || !strings.Contains(t.lower, "ratelimit") && !strings.Contains(t.lower, "retry-after") {
			continue
		}
		for _, f := range t.embedded() {
			i := strings.LastIndex(f.path, "headers.")
			if i < 0 {
				continue
			}
			name := strings.ToLower(f.path[i+len("headers."):])
			if strings.Contains(name, ".") || !strings.Contains(name, "ratelimit") && !strings.Contains(name, "retry-after") {
				continue
			}
			if h == nil {
				h = map[string]string{}
			}
			if _, dup := h[name]; !dup && len(h) < 16 {
				h[name] = f.val
			}
		}
	}
	return h
}

// typedRateLimit: the provider's own error type or code inside the text
// names a rate limit ({"error":{"type":"rate_limit_error"}}), or an SDK's
// RateLimitError class wraps it — the provider said 429 whatever the
// wrapper's status.
func typedRateLimit(t *text) bool {
	if sdkRateLimit.in(&t.hits) {
		return true
	}
	for _, f := range t.embedded() {
		if k := keyKind(f.key); (k == keyType || k == keyCode) && typeReason(f.val) == ReasonRateLimit {
			return true
		}
	}
	return false
}

var sdkRateLimit = newTable("sdk_rate_limit", "ratelimiterror")

// statesBillingCondition: the text states the account's billing condition
// (billingCondition, or a negative remaining balance).
func statesBillingCondition(t *text) bool {
	if billingCondition.in(&t.hits) {
		return true
	}
	_, ok := negativeRemaining.find(t)
	return ok
}

// providerID is the provider id rules are scoped by: lower case, up to the
// first space, "(" or "/" ("openrouter", "xai", "claude-cli").
func providerID(p string) string {
	if i := strings.IndexAny(p, " (/"); i >= 0 {
		p = p[:i]
	}
	return p
}

// hasContent: anything at all to classify (POLICY: no message, no status
// and no code is empty_response).
func (s *signal) hasContent() bool {
	e := s.e
	return !s.msg.empty() || e.Status > 0 || strings.TrimSpace(e.Code) != "" ||
		strings.TrimSpace(e.Type) != "" || e.statusCode != ""
}

// Detail limits: at most maxDetails texts and about maxDetailBytes of text
// per error are classified as details.
const (
	maxDetails     = 32
	maxDetailBytes = 256 << 10
)

// detailTexts are the other places a message may hide (reference §2.1 step
// 2 "details"): the body when kept apart from the message, then every
// message-like string inside JSON in the message or body.
func (s *signal) detailTexts() []*text {
	if s.detailsDone {
		return s.details
	}
	s.detailsDone = true
	budget := maxDetailBytes
	if s.body != nil {
		s.details = append(s.details, s.body)
	}
	for _, t := range []*text{s.msg, s.body} {
		if t == nil {
			continue
		}
		for _, f := range t.embedded() {
			if len(s.details) >= maxDetails || budget <= 0 {
				break
			}
			if f.str && keyKind(f.key) == keyMessage && strings.TrimSpace(f.val) != "" {
				s.details = append(s.details, newText(t.field+"#"+f.path, f.val))
				budget -= len(f.val)
			}
		}
	}
	return s.details
}

func (s *signal) detailVerdict() verdict {
	c := s.ctx
	c.noLeadingStatus = false
	// A message that starts with a 429 status keeps billing text out of the
	// billing rule (ref §2.2 rule 11); its quoted body must not bypass that.
	c.parentLead429 = leadingStatus(s.msg.lower) == 429
	for _, d := range s.detailTexts() {
		if v := messageVerdict(d, &c); v.ok() {
			return v
		}
	}
	return verdict{}
}

// detailsMatter: whether the details can change the message verdict under
// mergeVerdicts. A separate body always can. Embedded details are substrings
// of the message, so they can only add a verdict when the message has none
// or format, turn rate_limit into billing when the message has billing text,
// or add an overflow the message rules did not reach.
func (s *signal) detailsMatter(mv verdict) bool {
	switch {
	case mv.reason == ReasonContextOverflow:
		return false
	case s.body != nil, !mv.ok(), mv.reason == ReasonFormat:
		return true
	case mv.reason == ReasonRateLimit && isBilling(s.msg):
		return true
	}
	_, ok := s.msg.overflow()
	return ok
}

// mergeVerdicts is reference §2.1 step 2's merge, also used for the code
// verdict in step 7: context overflow wins; a billing second opinion beats a
// rate_limit first one; a format first opinion yields; otherwise the first
// opinion stands.
func mergeVerdicts(first, second verdict) verdict {
	switch {
	case !second.ok():
		return first
	case !first.ok():
		return second
	case first.reason == ReasonContextOverflow:
		return first
	case second.reason == ReasonContextOverflow:
		return second
	case second.reason == ReasonBilling && first.reason == ReasonRateLimit:
		return second
	case first.reason == ReasonFormat:
		return second
	}
	return first
}

// codes yields the structured codes of the signal: the code field, a
// non-numeric status, then codes found in JSON inside the message and body.
func (s *signal) codes(yield func(field, code string) bool) {
	if c := strings.TrimSpace(s.e.Code); c != "" && !yield(s.prefix+"code", c) {
		return
	}
	if s.e.statusCode != "" && !yield(s.prefix+"status", s.e.statusCode) {
		return
	}
	for _, t := range []*text{s.msg, s.body} {
		if t == nil {
			continue
		}
		for _, f := range t.embedded() {
			if keyKind(f.key) == keyCode && f.str {
				if !yield(t.field+"#"+f.path, f.val) {
					return
				}
			}
		}
	}
}

// codeVerdict is reference §2.1 step 6: the first code with a verdict.
func (s *signal) codeVerdict() verdict {
	var v verdict
	s.codes(func(field, code string) bool {
		if r, ok := codeReasons[normCode(code)]; ok {
			v = verdict{reason: r, rule: ruleCode, field: field, match: code}
			return false
		}
		return true
	})
	return v
}

func (s *signal) isTLS() (string, string, bool) {
	if m, ok := tlsPhrases.find(&s.msg.hits); ok {
		return s.msg.field, m, true
	}
	var field, match string
	s.codes(func(f, code string) bool {
		if tlsCodes[normCode(code)] {
			field, match = f, code
			return false
		}
		return true
	})
	return field, match, field != ""
}

// isHTML: a full HTML document (a proxy or CDN error page).
func (s *signal) isHTML() bool {
	for _, t := range []*text{s.msg, s.body} {
		if t == nil {
			continue
		}
		l := strings.TrimLeft(t.lower, " \t\r\n")
		if (strings.HasPrefix(l, "<!doctype html") || strings.HasPrefix(l, "<html")) && strings.Contains(l, "</html>") {
			return true
		}
	}
	return false
}

// pluginVerdict is the provider hook (reference §2.1 step 3, §2.6).
func (s *signal) pluginVerdict(mv verdict) verdict {
	e := s.e
	hasCode := strings.TrimSpace(e.Code) != "" || e.statusCode != ""
	descriptor := s.statusExplicit || hasCode || strings.TrimSpace(e.Type) != "" ||
		(s.ctx.provider != "" && (s.status == 401 || s.status == 403 || s.status == 429))
	overflowish := mv.reason == ReasonContextOverflow
	if !overflowish {
		_, overflowish = s.msg.overflow()
	}
	if !(descriptor || overflowish || !mv.ok()) {
		return verdict{}
	}
	t := s.msg
	switch s.ctx.provider {
	case "openrouter":
		if m, ok := openRouterKeyLimit.find(&t.hits); ok {
			return hit(ReasonBilling, rulePluginOpenRouterKeyLimit, t, m)
		}
		if !mv.ok() {
			if f, ok := s.bareIs("provider returned error"); ok {
				return verdict{reason: ReasonTimeout, rule: rulePluginOpenRouterProvider, field: f, match: "provider returned error"}
			}
		}
	case "together":
		if m, ok := concurrencyLimit.find(t); ok {
			return hit(ReasonRateLimit, rulePluginTogether, t, m)
		}
	case "xai":
		if m, ok := xaiBillingRe.find(t); ok {
			return hit(ReasonBilling, rulePluginXAIBilling, t, m)
		}
		if m, ok := xaiRateRe.find(t); ok {
			return hit(ReasonRateLimit, rulePluginXAIRate, t, m)
		}
		if s.status == 0 && !hasCode && strings.TrimSpace(e.Type) == "" {
			if m, ok := xaiInternal.find(&t.hits); ok {
				return hit(ReasonServerError, rulePluginXAIInternal, t, m)
			}
		}
	case "ollama":
		if m, ok := firstOf(t, ollamaOverflow...); ok {
			return hit(ReasonContextOverflow, rulePluginOllamaOverflow, t, m)
		}
		if t.bare == "ollama api stream ended without a final response" {
			return hit(ReasonServerError, rulePluginOllamaStreamEnd, t, t.bare)
		}
	}
	return verdict{}
}

// bareIs reports whether the message, or a message inside its JSON, is
// exactly want.
func (s *signal) bareIs(want string) (string, bool) {
	if s.msg.bare == want {
		return s.msg.field, true
	}
	for _, d := range s.detailTexts() {
		if d.bare == want {
			return d.field, true
		}
	}
	return "", false
}

func (s *signal) typeVerdict() verdict {
	if r := typeReason(s.ctx.errType); r != "" {
		return verdict{reason: r, rule: ruleType, field: s.ctx.errTypeField, match: s.ctx.errType}
	}
	return verdict{}
}

// classify is reference §2.1 for one error. It returns no verdict when
// nothing in this error decides. The steps are: the message verdict (2),
// the provider plugin (3), transport answers (4, 5: transportVerdict), the
// codes (6), the effective verdict (7: effective), a permanent-auth code
// and a request-size ceiling (8), the status rules (9: statusVerdict), and
// the code verdict (10).
func (s *signal) classify() verdict {
	// The inner status is known before the message rules, for the rules
	// that apply only when the error carries no status at all.
	if s.status == 0 {
		s.ctx.innerStatus, _ = s.innerStatus()
	}
	// 2. message verdict, merged with the details.
	mv := messageVerdict(s.msg, &s.ctx)
	if s.detailsMatter(mv) {
		mv = mergeVerdicts(mv, s.detailVerdict())
	}
	// 3. provider plugin.
	pv := s.pluginVerdict(mv)
	if v, ok := s.transportVerdict(pv); ok {
		return v
	}
	// 6. code verdict; fledger: the provider's documented codes
	// (provider_codes.go), definitive ones and generic ones.
	cv := s.codeVerdict()
	dv := s.definitiveCode()
	eff := s.effective(pv, mv, cv, dv)
	fromProvider := dv.ok() && eff.rule == dv.rule && eff.field == dv.field
	// 8. a permanent-auth code ends it.
	if cv.reason == ReasonAuthPermanent && !fromProvider {
		return cv
	}
	// POLICY: a request-size ceiling is context_overflow whatever the status.
	if eff.ceiling != nil {
		eff.rule = ruleCeiling
		return eff
	}
	if v, ok := s.statusVerdict(eff, pv, cv, dv, fromProvider); ok {
		return v
	}
	// 10. the code verdict, else the effective verdict.
	if fromProvider {
		return eff
	}
	if cv.ok() {
		return cv
	}
	return eff
}

// transportVerdict is steps 4 and 5 when no plugin decided (pv): a TLS
// failure with no status, or an HTML transport page judged by its status.
// Between them it takes the provider's status written inside the text as
// the status when the error has none.
func (s *signal) transportVerdict(pv verdict) (verdict, bool) {
	if !pv.ok() {
		// 4. TLS with no status: the request never reached the provider.
		if s.status == 0 {
			if f, m, ok := s.isTLS(); ok {
				return verdict{reason: ReasonTLSCertificate, rule: ruleTLS, field: f, match: m}, true
			}
		}
	}
	// fledger: no explicit or leading status, but the provider's own status
	// is written inside the text ("Error code: 400 - {…}", "<400>",
	// {"error":{"code":429}}): it is the status (provider_codes.go).
	if s.status == 0 {
		if n, _ := s.innerStatus(); n != 0 {
			s.status, s.statusInner = n, true
		}
	}
	if !pv.ok() {
		// 5. HTML transport pages: by status only.
		if (s.status == 408 || s.status == 499 || s.status >= 500 && s.status <= 599) && s.isHTML() {
			if v, ok := statusRule(s.status, verdict{}, s.msg, &s.ctx, s.statusExplicit, verdict{}); ok {
				v.rule, v.field = ruleHTML, s.prefix+"status"
				v.match = strconv.Itoa(s.status) + " + HTML page"
				return v, true
			}
		}
	}
	return verdict{}, false
}

// effective is step 7: the verdict the status rules weigh, from the
// plugin's (pv), the message's (mv), the code's (cv) and the provider's
// definitive code's (dv).
func (s *signal) effective(pv, mv, cv, dv verdict) verdict {
	switch {
	case pv.ok():
		return pv
	case dv.ok() && definitiveBeats(dv, mv):
		return dv
	case cv.reason == ReasonFormat:
		return cv
	}
	base := mv
	if !base.ok() {
		base = s.typeVerdict()
	}
	// fledger: a provider's generic code says more than a bare leading
	// status (rule 29), as an API type does (rule 28 precedes 29).
	if !base.ok() || base.rule == ruleMsgLeadingStatus {
		if gv := s.genericCode(); gv.ok() {
			base = gv
		}
	}
	return mergeVerdicts(base, cv)
}

// statusVerdict is step 9, the status rules over the effective verdict
// eff; a provider's documented code (dv, when fromProvider) or a specific
// code (cv) beats the status's default. ok is false when no status decides.
func (s *signal) statusVerdict(eff, pv, cv, dv verdict, fromProvider bool) (verdict, bool) {
	// fledger: a wrapper's 5xx around the provider's own 4xx (a JSON
	// code/status inside, "Error code: 429") is judged by the provider's
	// status.
	st, stExplicit, stField := s.status, s.statusExplicit, ""
	if stExplicit && st >= 500 {
		if n, f := s.innerStatus(); n >= 400 && n < 500 {
			st, stExplicit, stField = n, false, f
		}
	} else if s.statusInner {
		// A status read from inside the text only fills a gap: it decides
		// when nothing else did, and never overrides a verdict (OpenClaw
		// reads only explicit and leading statuses) — except transport
		// wording over the provider's own 400/422, which the status
		// contradicts (transportNarration).
		if eff.ok() && !(transportNarration(eff) && (st == 400 || st == 422)) {
			st = 0
		}
		_, stField = s.innerStatus()
	}
	if st == 0 {
		return verdict{}, false
	}
	v, ok := statusRule(st, eff, s.msg, &s.ctx, stExplicit, pv)
	if !ok {
		return verdict{}, false
	}
	if stExplicit {
		if v.field == "status" {
			v.field = s.prefix + "status"
		}
	} else if stField != "" && !v.kept {
		v.field = stField
	}
	// A 401/403 kept a rate limit its text names (statusCtx.auth) that
	// the signal's own code names too: the code is the better evidence.
	if v.kept && (st == 401 || st == 403) && v.reason == ReasonRateLimit && cv.reason == v.reason {
		cv.rule = ruleCodeBeatsStatus
		return cv, true
	}
	if !v.kept {
		// fledger: a provider's documented code beats the status's
		// default (code.provider.*).
		if fromProvider && dv.reason != v.reason {
			return dv, true
		}
		// POLICY: a provider-specific code beats the status's default.
		if cv.ok() && !transportReason(cv.reason) && cv.reason != v.reason {
			cv.rule = ruleCodeBeatsStatus
			return cv, true
		}
	}
	return v, true
}

// definitiveBeats: a provider's documented code decides over the message
// verdict, except a context overflow read from the text (a shape or phrase
// about this request) and a high-confidence revocation over a plain auth
// code.
func definitiveBeats(dv, mv verdict) bool {
	switch {
	case mv.reason == ReasonContextOverflow:
		return false
	case mv.reason == ReasonAuthPermanent && dv.reason == ReasonAuth:
		return false
	}
	return true
}

// abortNameText: an AbortError written in the text ("LLM stream error
// {"error":"AbortError: This operation was aborted"}").
var abortNameText = newTable("abort_name_text", `\baborterror\b`)

// errName is the JavaScript-style error name of the signal and the field it
// came from: the name field; else a code that is one of the named classes
// (SDKs put "AbortError" in code); else an AbortError named in the text
// (fledger, issue 17 family 9: RE2-064).
func (s *signal) errName() (string, string) {
	if n := strings.TrimSpace(s.e.Name); n != "" {
		return n, s.prefix + "name"
	}
	switch c := strings.TrimSpace(s.e.Code); {
	case strings.EqualFold(c, NameAbort):
		return NameAbort, s.prefix + "code"
	case strings.EqualFold(c, NameTimeout):
		return NameTimeout, s.prefix + "code"
	}
	if abortNameText.in(&s.msg.hits) {
		return NameAbort, s.msg.field
	}
	return "", ""
}
