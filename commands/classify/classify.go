package classify

import (
	"strconv"
	"strings"
	"time"

	"github.com/fledger/fledger/internal/redact"
)

// maxCauseDepth is how many nested causes the walk follows (reference §2.7:
// depth limit 25).
const maxCauseDepth = 25

// matchPreview is the longest [Evidence.Match], in runes.
const matchPreview = 160

// Classify classifies one provider failure. It is pure and deterministic: no
// clock, no I/O, no globals written. An HTTP-date Retry-After is resolved
// against e.ReceivedAt, else the response's Date header; when neither is
// present it is ignored. Use [ClassifyAt] to pass the decision time.
//
// A nil e is empty_response. The cost is bounded whatever the input: every
// field is scanned over its first 64 KiB and last 8 KiB, at most 25 causes
// are followed, and embedded JSON is read to depth 25.
func Classify(e *ProviderError) Result { return ClassifyAt(e, time.Time{}) }

// ClassifyAt is [Classify] with the decision time now, used only to turn an
// HTTP-date Retry-After (or an RFC 3339 rate-limit reset header) into
// RetryAfterMs, and a relative provider reset (resets_in_seconds, "6m0s")
// into [Result.Reset]. A zero now falls back to e.ReceivedAt, then the
// Date header.
func ClassifyAt(e *ProviderError, now time.Time) Result {
	chain, walkCut := causeChain(e)
	sigs := make([]*signal, len(chain))
	for i, c := range chain {
		prefix := ""
		if i > 0 {
			prefix = "cause[" + strconv.Itoa(i) + "]."
		}
		sigs[i] = newSignal(c, prefix)
	}

	v, disp := decide(sigs)
	res := Result{Reason: v.reason, Disposition: disp}
	res.Evidence = Evidence{Rule: v.rule.id, Source: v.rule.source, Field: v.field, Match: preview(v.match)}
	res.Evidence.CauseTruncated = e != nil && e.CauseTruncated || walkCut
	if v.reason == ReasonContextOverflow && v.ceiling != nil {
		c := *v.ceiling
		res.RequestSizeCeiling = &c
	}

	// Disposition: refusals are decided apart from the reason.
	if disp == DispositionFailover {
		if rv, ok := refusal(sigs, v); ok {
			res.Disposition = DispositionRefusal
			res.Evidence.Disposition = &Evidence{Rule: rv.rule.id, Source: rv.rule.source, Field: rv.field, Match: preview(rv.match)}
			// fledger: a refusal nothing else classified is a refused
			// request, reason format (its POLICY status is 400, the status
			// providers send refusals with; format touches no profile
			// health). With a status or another verdict the reason stays
			// what they say (RE-067: timeout; FX-DI-01: format from 400).
			if res.Reason == ReasonUnclassified {
				res.Reason = ReasonFormat
				res.Evidence.Rule, res.Evidence.Source = rv.rule.id, rv.rule.source
				res.Evidence.Field, res.Evidence.Match = rv.field, preview(rv.match)
			}
		} else if v.reason == ReasonContextOverflow && v.ceiling == nil {
			res.Disposition = DispositionCompaction
		}
	}

	res.Status = visibleStatus(sigs, res.Reason)
	if now.IsZero() && e != nil {
		now = e.ReceivedAt
	}
	res.RetryAfterMs, res.Evidence.RetryAfter = retryAfter(sigs, now)
	if res.Reason == ReasonRateLimit {
		res.Reset, res.LongWindow = resetOf(sigs, now, res.RetryAfterMs, res.Evidence.RetryAfter)
	}
	return res
}

// preview is the evidence text: redacted and cut, except for a phrase of
// our own tables, which is static text and needs neither.
func preview(m string) string {
	if staticPhrase[m] {
		return m
	}
	return redact.Preview(m, matchPreview)
}

// causeChain flattens e and its causes, outermost first, stopping at depth
// maxCauseDepth or at a pointer already seen (cycle-safe). cut reports
// causes left unwalked below the depth limit (Evidence.CauseTruncated).
func causeChain(e *ProviderError) (chain []*ProviderError, cut bool) {
	if e == nil {
		return []*ProviderError{{}}, false
	}
	chain = make([]*ProviderError, 0, 2)
	c := e
	for ; c != nil && len(chain) <= maxCauseDepth; c = c.Cause {
		for _, seen := range chain {
			if seen == c {
				return chain, false
			}
		}
		chain = append(chain, c)
	}
	return chain, c != nil
}

// decide walks the chain (reference §2.7) and returns the reason verdict and
// the disposition implied by the chain itself (abort, coordination) or
// failover.
func decide(sigs []*signal) (verdict, Disposition) {
	// Local coordination errors are never provider faults: stop first.
	for _, s := range sigs {
		if coordinationNames[strings.TrimSpace(s.e.Name)] {
			return verdict{reason: ReasonUnknown, rule: ruleCoordination, field: s.prefix + "name", match: s.e.Name}, DispositionCoordination
		}
	}

	// Steps 2–3: classify the top error; when it says nothing or only
	// context_overflow, the first nested error with a verdict wins. So it
	// does when the top error's verdict is only a generic transport
	// wrapper's text ("Request failed", "fetch failed", "Connection
	// error."): seed 004, normalization "searches wrapped error and cause
	// objects for evidence instead of relying exclusively on the
	// outermost 'request failed' message" — a 401, a credit balance or a
	// 529 inside it is what happened. Either is kept for when no nested
	// error says more.
	var found, overflow, wrapper verdict
	foundAt, wrapperAt := -1, -1
	for i, s := range sigs {
		v := s.classify()
		if v.ok() && abortNoise(s, v) {
			v = s.bodyVerdict()
		}
		if !v.ok() {
			continue
		}
		if v.reason == ReasonContextOverflow {
			if !overflow.ok() {
				overflow = v
			}
			continue
		}
		if i < len(sigs)-1 && genericWrapper(v) {
			if !wrapper.ok() {
				wrapper, wrapperAt = v, i
			}
			continue
		}
		found, foundAt = v, i
		break
	}
	if !found.ok() {
		found = overflow
	}
	if !found.ok() && wrapper.ok() {
		found, foundAt = wrapper, wrapperAt
	}

	// Step 4: a format verdict over a nested no-body 400/422 is no verdict;
	// a nested error with its own classifiable message ends that search.
	var noBody *signal
	if found.reason == ReasonFormat && foundAt >= 0 {
		for _, s := range sigs[foundAt+1:] {
			if !s.msg.empty() {
				break
			}
			if s.status == 400 || s.status == 422 {
				found, noBody = verdict{}, s
				break
			}
		}
	}
	if found.ok() {
		return found, DispositionFailover
	}

	// Step 5: error names.
	for _, s := range sigs {
		if n, f := s.errName(); n == NameTimeout {
			return verdict{reason: ReasonTimeout, rule: ruleTimeoutName, field: f, match: NameTimeout}, DispositionFailover
		}
	}
	for i, s := range sigs {
		n, f := s.errName()
		if n != NameAbort {
			continue
		}
		if m, ok := abortTimeoutEvidence(sigs[i:]); ok {
			return verdict{reason: ReasonTimeout, rule: ruleTimeoutName, field: s.prefix + "message", match: m}, DispositionFailover
		}
		return verdict{reason: ReasonUnknown, rule: ruleAbort, field: f, match: NameAbort}, DispositionAbort
	}

	// Nothing matched.
	if noBody != nil {
		return verdict{reason: ReasonUnclassified, rule: ruleNoBodyNested, field: noBody.prefix + "status", match: strconv.Itoa(noBody.status)}, DispositionFailover
	}
	for _, s := range sigs {
		if s.hasContent() {
			return verdict{reason: ReasonUnclassified, rule: ruleUnclassified, field: s.msg.field, match: s.msg.raw}, DispositionFailover
		}
	}
	return verdict{reason: ReasonEmptyResponse, rule: ruleEmpty}, DispositionFailover
}

// abortNoise: an AbortError whose only evidence is its own "operation was
// aborted" text is a cancellation, not a timeout (seed 004: the wrapper's
// name alone does not discard real evidence, but abort wording is not
// evidence).
func abortNoise(s *signal, v verdict) bool {
	if n, _ := s.errName(); n != NameAbort || v.rule != ruleMsgTimeout {
		return false
	}
	return strings.Contains(v.match, "abort")
}

// genericWrappers are the timeout table's phrases an SDK or fetch layer
// wraps any failed request in: alone they say a request failed, not why.
var genericWrappers = map[string]bool{
	"request failed": true, "llm request failed": true, "fetch failed": true,
	"connection error": true, "network error": true, "network request failed": true,
}

// genericWrapper: v stands only on a generic wrapper's text (the message
// rule's timeout phrase, nothing structured).
func genericWrapper(v verdict) bool {
	return v.rule == ruleMsgTimeout && genericWrappers[strings.TrimRight(v.match, ".")]
}

// bodyVerdict classifies an AbortError whose message is only abort
// wording by its body alone: seed 004, "explicit failure evidence is not
// discarded merely because the wrapper's name contains Abort" — a rate
// limit in the body is a rate limit. No body, or nothing in it beyond
// abort wording, is no verdict (the abort is decided by name, step 5).
func (s *signal) bodyVerdict() verdict {
	if s.body == nil {
		return verdict{}
	}
	e := *s.e
	e.Message = ""
	bs := newSignal(&e, s.prefix)
	if v := bs.classify(); v.ok() && !abortNoise(bs, v) {
		return v
	}
	return verdict{}
}

var abortTimeoutRe = newPattern("abort_timeout", `request (?:was )?aborted`, "aborted")

// abortTimeoutEvidence: an AbortError counts as a timeout when its message
// says "request (was) aborted" or a cause is a TimeoutError or has timeout
// text (reference §2.7 step 5).
func abortTimeoutEvidence(sigs []*signal) (string, bool) {
	if m, ok := abortTimeoutRe.find(sigs[0].msg); ok {
		return m, true
	}
	for _, s := range sigs[1:] {
		if n, _ := s.errName(); n == NameTimeout {
			return NameTimeout, true
		}
		for _, p := range []string{"timeout", "timed out", "deadline exceeded"} {
			if strings.Contains(s.msg.lower, p) {
				return p, true
			}
		}
	}
	return "", false
}

// refusal finds a final provider refusal anywhere in the chain: a refusal
// code, or refusal text (content filter, safety block). v is the chain's
// verdict: the refusal lexicon (refusalLexicon) does not apply to an
// account or quota condition the text or a code stated.
func refusal(sigs []*signal, v0 verdict) (verdict, bool) {
	for _, s := range sigs {
		var v verdict
		s.codes(func(field, code string) bool {
			if refusalCodes[normCode(code)] {
				v = verdict{rule: ruleRefusalCode, field: field, match: code}
				return false
			}
			return true
		})
		if v.rule != nil {
			return v, true
		}
		// fledger: a provider's documented moderation code (DashScope
		// DataInspectionFailed, Zhipu 1301, MiniMax 1026; provider_codes.go),
		// or a refusal code given as the error type (Moonshot "type":
		// "content_filter").
		if v, ok := s.refusalCode(); ok {
			return v, true
		}
		if t := strings.TrimSpace(s.e.Type); refusalCodes[normCode(t)] {
			return verdict{rule: ruleRefusalCode, field: s.prefix + "type", match: t}, true
		}
		// fledger: a code coined from moderation words (Google
		// PUBLIC_ERROR_UNSAFE_GENERATION, OpenAI moderation_blocked,
		// Volcengine InputTextSensitiveContentDetected) in the code or type
		// field or a code/reason/type/finish key of embedded JSON.
		if v, ok := s.refusalCodeWords(); ok {
			return v, true
		}
		for _, t := range []*text{s.msg, s.body} {
			if t == nil {
				continue
			}
			for _, f := range t.embedded() {
				if (keyKind(f.key) == keyFinish || keyKind(f.key) == keyType) && refusalCodes[normCode(f.val)] {
					return verdict{rule: ruleRefusalCode, field: t.field + "#" + f.path, match: f.val}, true
				}
			}
			if m, ok := refusalPhrases.find(&t.hits); ok {
				return verdict{rule: ruleRefusalText, field: t.field, match: m}, true
			}
			if m, ok := refusalBlockRe.find(t); ok {
				return verdict{rule: ruleRefusalText, field: t.field, match: m}, true
			}
			if lexiconRefusalAllowed(v0) {
				if _, acct := firstOf(t, accountBlock...); !acct {
					if m, ok := firstOf(t, refusalLexicon...); ok {
						return verdict{rule: ruleRefusalText, field: t.field, match: m}, true
					}
				}
			}
		}
	}
	return verdict{}, false
}

// lexiconRefusalAllowed: the refusal lexicon stays out of errors whose
// reason is an account, quota or request-size condition stated by the text
// or a code; those say more than a policy word. A status that decided
// alone does not count: OpenRouter's moderation answers 403 "Your input
// was flagged for harassment", which status.401_403 alone calls auth.
func lexiconRefusalAllowed(v verdict) bool {
	switch v.reason {
	case ReasonRateLimit, ReasonBilling, ReasonAuth, ReasonAuthPermanent, ReasonModelNotFound,
		ReasonSessionExpired, ReasonTLSCertificate, ReasonContextOverflow:
		return v.bare
	}
	return true
}

// refusalCodeWords is the first code-shaped value of the signal that
// refusalCodeLike accepts.
func (s *signal) refusalCodeWords() (verdict, bool) {
	for _, f := range []struct{ field, val string }{{s.prefix + "code", s.e.Code}, {s.prefix + "type", s.e.Type}} {
		if refusalCodeLike(f.val) {
			return verdict{rule: ruleRefusalCode, field: f.field, match: strings.TrimSpace(f.val)}, true
		}
	}
	for _, t := range []*text{s.msg, s.body} {
		if t == nil {
			continue
		}
		for _, f := range t.embedded() {
			if !f.str {
				continue
			}
			switch k := keyKind(f.key); {
			case k == keyType, k == keyFinish, k == keyCode && f.key != "name" && f.key != "status":
				if refusalCodeLike(f.val) {
					return verdict{rule: ruleRefusalCode, field: t.field + "#" + f.path, match: f.val}, true
				}
			}
		}
	}
	return verdict{}, false
}

// visibleStatus: the provider's own status when known (explicit, or leading
// the message), searching the chain outermost first; else the reason's.
func visibleStatus(sigs []*signal, r Reason) int {
	for _, s := range sigs {
		if s.statusExplicit {
			return s.status
		}
	}
	for _, s := range sigs {
		if s.status != 0 {
			return s.status
		}
	}
	return r.Status()
}

// Redact returns s with API keys, bearer tokens, JWTs, e-mail addresses and
// org/project ids replaced by [REDACTED:<kind>] markers. It is
// [redact.String], offered here so callers of Classify need one import for
// previews they build themselves; every Evidence.Match is already redacted.
func Redact(s string) string { return redact.String(s) }
