package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/termtext"
)

// MaxIDBytes bounds profile ids, provider names and agent ids.
const MaxIDBytes = 256

// MaxFallbacks bounds a fallbacks list of a config being checked or
// applied (configs already stored are read whatever their length).
const MaxFallbacks = 256

// builder collects problems while it overlays a File on the defaults.
// With bounds, durations and counts are also held to [MaxDurationMs] and
// [MaxCount] (a file; not a stored config, see [Stored]).
type builder struct {
	problems []Problem
	bounds   bool
}

func (b *builder) bad(path, format string, a ...any) {
	b.problems = append(b.problems, Problem{path, fmt.Sprintf(format, a...)})
}

// build turns a decoded File into the policy's input, defaults applied.
// format is the canonical format the config follows: a config stored in
// format 1 or 2 (before provider reset times, issue 17) decides as its
// release did, so the keys format 3 added take the values that mean "off"
// ([legacyParams]). Format 4's failover.formatAdvances needs no such
// value: it is read only by turns of rule revision 2 on (revision 1, the
// turns of every earlier build, always advanced), so a config stored in an
// older format reads it as the default, false.
func build(f *File, bounds bool, format int) (policy.Config, []Problem) {
	b := &builder{bounds: bounds}
	c := policy.DefaultConfig()
	if format < 3 {
		legacyParams(&c.Params)
	}
	if f.Auth != nil {
		b.profiles(&c, f.Auth.Profiles)
		b.order(&c, f.Auth.Order)
		if f.Auth.Cooldowns != nil {
			b.cooldowns(&c.Params, f.Auth.Cooldowns)
		}
	}
	if f.Agents != nil {
		if f.Agents.Defaults != nil && f.Agents.Defaults.Model != nil {
			m := f.Agents.Defaults.Model
			c.Defaults.Primary = b.modelRef("agents.defaults.model.primary", m.Primary, true)
			c.Defaults.Fallbacks = b.modelRefs("agents.defaults.model.fallbacks", m.Fallbacks)
		}
		b.agents(&c, f.Agents.Entries)
	}
	if f.Retry != nil && f.Retry.Provider != nil {
		b.retry(&c.Params, f.Retry.Provider)
	}
	if f.Failover != nil {
		b.failover(&c.Params, f.Failover)
	}
	if len(b.problems) == 0 {
		if err := c.Params.Validate(); err != nil {
			b.bad("", "%s", strings.TrimPrefix(err.Error(), policy.ErrInvalidParams.Error()+": "))
		}
	}
	return c, b.problems
}

func (b *builder) profiles(c *policy.Config, m map[string]ProfileEntry) {
	for _, id := range sortedMapKeys(m) {
		e := m[id]
		path := joinKey("auth.profiles", id)
		b.checkID(path, "profile id", id)
		if e.Provider == "" {
			b.bad(path+".provider", "is required")
		} else {
			b.checkID(path+".provider", "provider", e.Provider)
		}
		switch e.Type {
		case policy.ProfileOAuth, policy.ProfileToken, policy.ProfileAPIKey:
		case "":
			b.bad(path+".type", "is required (oauth, token or api_key)")
		default:
			b.bad(path+".type", "%q is not oauth, token or api_key", e.Type)
		}
		p := policy.Profile{ID: id, Provider: e.Provider, Type: e.Type, InlineKey: e.InlineKey}
		p.ExpiresAt = b.expiry(path+".expires", e.Expires)
		if e.InlineKey && e.Type != policy.ProfileAPIKey && e.Type != "" {
			b.bad(path+".inlineKey", "only an api_key profile can be an inline key (type is %q)", e.Type)
		}
		c.Profiles = append(c.Profiles, p)
	}
	sort.Slice(c.Profiles, func(i, j int) bool { return c.Profiles[i].ID < c.Profiles[j].ID })
}

// expiry accepts RFC 3339 text or Unix milliseconds (with bounds, at most
// events.MaxExactInt).
func (b *builder) expiry(path string, raw json.RawMessage) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			b.bad(path, "%q is not an RFC 3339 time (e.g. 2026-12-01T00:00:00Z) or Unix milliseconds", s)
			return 0
		}
		return t.UnixMilli()
	}
	var ms int64
	if err := json.Unmarshal(raw, &ms); err != nil || ms < 0 {
		b.bad(path, "%s is not an RFC 3339 time or non-negative Unix milliseconds", truncate(string(raw), 40))
		return 0
	}
	if b.bounds && ms > events.MaxExactInt {
		// Stored in ConfigApplied.config as a JSON number, which a
		// JavaScript reader rounds above 2^53 − 1 (the year 287396).
		b.bad(path, "%d Unix milliseconds is beyond 9007199254740991 (2^53 − 1, the year 287396)", ms)
		return 0
	}
	return ms
}

func (b *builder) order(c *policy.Config, m map[string][]string) {
	if len(m) == 0 {
		return
	}
	c.Order = make(map[string][]string, len(m))
	for _, prov := range sortedMapKeys(m) {
		path := joinKey("auth.order", prov)
		b.checkID(path, "provider", prov)
		seen := map[string]bool{}
		for i, id := range m[prov] {
			ip := fmt.Sprintf("%s[%d]", path, i)
			p, ok := c.Profile(id)
			switch {
			case !ok:
				b.bad(ip, "%q is not a profile in auth.profiles", id)
			case p.Provider != prov:
				b.bad(ip, "%q belongs to provider %q, not %q", id, p.Provider, prov)
			case seen[id]:
				b.bad(ip, "%q is listed twice", id)
			}
			seen[id] = true
		}
		c.Order[prov] = append([]string(nil), m[prov]...)
	}
}

func (b *builder) agents(c *policy.Config, m map[string]AgentEntry) {
	if len(m) == 0 {
		return
	}
	c.Agents = make(map[string]policy.AgentModel, len(m))
	for _, id := range sortedMapKeys(m) {
		path := joinKey("agents.entries", id)
		b.checkID(path, "agent id", id)
		raw := bytes.TrimSpace(m[id].Model)
		if len(raw) == 0 || string(raw) == "null" {
			b.bad(path+".model", "is required (a provider/model string or {primary, fallbacks})")
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			c.Agents[id] = policy.AgentModel{Primary: b.modelRef(path+".model", s, true)}
			continue
		}
		var spec ModelSpec
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			b.bad(path+".model", "must be a provider/model string or {primary, fallbacks}: %v", err)
			continue
		}
		c.Agents[id] = policy.AgentModel{
			Primary:      b.modelRef(path+".model.primary", spec.Primary, true),
			Fallbacks:    b.modelRefs(path+".model.fallbacks", spec.Fallbacks),
			HasFallbacks: spec.Fallbacks != nil,
		}
	}
}

// modelRef parses "provider/model"; the model part may itself contain
// slashes (openrouter/meta-llama/llama-3).
func (b *builder) modelRef(path, s string, required bool) events.ModelRef {
	if s == "" {
		if required {
			b.bad(path, "is required (provider/model)")
		}
		return events.ModelRef{}
	}
	prov, model, ok := strings.Cut(s, "/")
	if !ok || prov == "" || model == "" {
		b.bad(path, "%q is not provider/model", s)
		return events.ModelRef{}
	}
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		// Stored configs were refused so too: no model id holds white
		// space, and a `/model` could not select one that does.
		b.bad(path, "%q is not provider/model: it contains white space", s)
		return events.ModelRef{}
	}
	b.checkID(path, "provider", prov)
	if b.bounds && IDTextProblem("provider", prov) == "" {
		// The model part is held to the rule the engine holds a
		// selection to (engine.ParseModelSelection: a wildcard or control
		// character names no model, nor does a trailing @); stored
		// configs are read as they were.
		if p := IDTextProblem("model", model); p != "" {
			b.bad(path, "%s", p)
		} else if at := ProfileSuffixAt(s); at >= 0 {
			// A `/model` or a turn's model would pin this profile; a
			// configured model is called by its whole name, so the model
			// would be "gpt-5@openai:a". Stored configs are read as they
			// were (that name is what they recorded).
			b.bad(path, "%q names auth profile %q after its @; a configured model takes no @profile (it would be called as model %q): put the profile first in %s, or pin it per session with /model %s",
				s, s[at+1:], model, joinKey("auth.order", prov), s)
		} else if strings.HasSuffix(model, "@") {
			// `/model p/m@` is a selection whose profile was left out,
			// so the API could never select this model.
			b.bad(path, "model %q ends in @; name the model exactly (an @ inside it is fine)", model)
		}
	}
	return events.ModelRef{Provider: prov, Model: model}
}

func (b *builder) modelRefs(path string, list []string) []events.ModelRef {
	if list == nil {
		return nil
	}
	if b.bounds && len(list) > MaxFallbacks {
		// A chain is tried candidate by candidate on every turn: thousands
		// of fallbacks is a generated or corrupt file, and would make
		// every turn start (and a what-if) slow. Stored configs are read
		// as they were.
		b.bad(path, "lists %d models; the limit is %d", len(list), MaxFallbacks)
		return nil
	}
	out := make([]events.ModelRef, 0, len(list))
	for i, s := range list {
		out = append(out, b.modelRef(fmt.Sprintf("%s[%d]", path, i), s, true))
	}
	return out
}

// checkID refuses ids that cannot be what the user meant: empty, too long,
// whitespace or control characters, or NATS wildcards (a profile id such as
// "openai:*" is a pattern, not a profile). Dots are fine: subjects encode
// them.
func (b *builder) checkID(path, what, id string) {
	switch {
	case id == "":
		b.bad(path, "%s is empty", what)
	case len(id) > MaxIDBytes:
		b.bad(path, "%s is %d bytes; the limit is %d", what, len(id), MaxIDBytes)
	default:
		if p := idTextProblem(what, id, b.bounds); p != "" {
			b.bad(path, "%s", p)
		}
	}
}

// ProfileSuffixAt is the index of the '@' in "provider/model@profile" that
// pins an auth profile, or -1 when s names a model only. An '@' ends the
// model only where a profile id as OpenClaw writes them starts,
// "<provider>:<name>" (seed 000 "Profile IDs"): the first such '@' after
// the '/' is the split, the profile id everything after it (an e-mail
// profile keeps its '@'). Any other '@' is part of the model, as in
// Vertex's versioned ids (vertex/claude-3-5-sonnet@20240620) and
// Cloudflare's @cf/ models. It is the one rule: engine.ParseModelSelection
// splits a `/model` or a turn's model there, and a config file refuses a
// model it would split.
func ProfileSuffixAt(s string) int {
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		return -1
	}
	for i := slash + 1; i < len(s); i++ {
		if s[i] == '@' && startsProfileID(s[i+1:]) {
			return i
		}
	}
	return -1
}

// startsProfileID reports whether s begins with "<provider>:" — a
// non-empty provider holding no '@', '/' or ':' — as every profile id
// OpenClaw writes does.
func startsProfileID(s string) bool {
	i := strings.IndexAny(s, "@/:")
	return i > 0 && s[i] == ':'
}

// IDTextProblem says why id cannot name one what ("" = it can): it holds
// a NATS wildcard (a profile id such as "openai:*" is a pattern, not a
// profile), white space, a control character or an undecodable byte. It
// is the one rule for provider, profile, model and agent ids, shared by
// the config, the engine (HTTP, micro) and the CLI so they agree on what
// an id may be. Emptiness and length are each caller's.
func IDTextProblem(what, id string) string { return idTextProblem(what, id, true) }

// idTextProblem is [IDTextProblem]; a stored config (fresh false) is read
// with the rule of the builds that stored it, which let a bidirectional
// or line-separating character through.
func idTextProblem(what, id string, fresh bool) string {
	switch {
	case strings.ContainsAny(id, "*>"):
		return fmt.Sprintf("%s %q contains a wildcard (* or >); name one %s exactly", what, id, what)
	case strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0:
		return fmt.Sprintf("%s %q contains whitespace or control characters", what, id)
	case fresh && strings.IndexFunc(id, termtext.Reorders) >= 0:
		i := strings.IndexFunc(id, termtext.Reorders)
		r, _ := utf8.DecodeRuneInString(id[i:])
		return fmt.Sprintf("%s %q holds the bidirectional or line-separating character %U at byte %d", what, id, r, i)
	}
	return ""
}

func (b *builder) cooldowns(p *policy.Params, c *Cooldowns) {
	const path = "auth.cooldowns"
	if c.LadderMs != nil {
		p.CooldownLadderMs = append([]int64(nil), c.LadderMs...)
		if len(c.LadderMs) == 0 {
			b.bad(path+".ladderMs", "must have at least one step")
		} else if b.bounds && len(c.LadderMs) > MaxCount {
			b.bad(path+".ladderMs", "has %d steps; the limit is %d", len(c.LadderMs), MaxCount)
		}
		for i, v := range c.LadderMs {
			ip := fmt.Sprintf("%s.ladderMs[%d]", path, i)
			switch {
			case v <= 0:
				b.bad(ip, "%d is not a positive duration", v)
			case b.tooLong(ip, v): // reported
			case i > 0 && v < c.LadderMs[i-1]:
				b.bad(ip, "%d is shorter than the step before it", v)
			}
		}
	}
	if c.RateLimit != nil {
		switch *c.RateLimit {
		case policy.RateLimitLadder, policy.RateLimitExponential:
			p.RateLimitMode = *c.RateLimit
		default:
			b.bad(path+".rateLimit", "%q is not ladder or exponential", *c.RateLimit)
		}
	}
	b.ms(path+".rateLimitBaseMs", c.RateLimitBaseMs, &p.RateLimitBaseMs, 1)
	b.ms(path+".rateLimitMaxMs", c.RateLimitMaxMs, &p.RateLimitMaxMs, 1)
	b.msOrHours(path, "billingBackoffMs", c.BillingBackoffMs, "billingBackoffHours", c.BillingBackoffHours, &p.BillingBaseMs)
	b.msOrHours(path, "billingMaxMs", c.BillingMaxMs, "billingMaxHours", c.BillingMaxHours, &p.BillingMaxMs)
	b.ms(path+".authPermanentBackoffMs", c.AuthPermanentBackoffMs, &p.AuthPermanentBaseMs, 1)
	b.ms(path+".authPermanentMaxMs", c.AuthPermanentMaxMs, &p.AuthPermanentMaxMs, 1)
	b.msOrHours(path, "failureWindowMs", c.FailureWindowMs, "failureWindowHours", c.FailureWindowHours, &p.FailureWindowMs)
	b.ms(path+".inlineKeyBillingMs", c.InlineKeyBillingMs, &p.InlineKeyBillingWindowMs, 1)
	setBool(c.ResetOnExpiry, &p.ResetOnExpiry)
	setBool(c.ClearOtherModelCooldownOnSuccess, &p.ClearOtherModelCooldownOnSuccess)
	setBool(c.AutoPinSurvivesCompaction, &p.AutoPinSurvivesCompaction)
	b.count(path+".rateLimitedProfileRotations", c.RateLimitedProfileRotations, &p.RateLimitRotations)
	b.count(path+".overloadedProfileRotations", c.OverloadedProfileRotations, &p.OverloadedRotations)
	b.ms(path+".subscriptionBlockMaxMs", c.SubscriptionBlockMaxMs, &p.SubscriptionBlockMaxMs, 0)
	b.pair(path+".rateLimitMaxMs", p.RateLimitBaseMs, p.RateLimitMaxMs)
	b.pair(path+".billingMaxMs", p.BillingBaseMs, p.BillingMaxMs)
	b.pair(path+".authPermanentMaxMs", p.AuthPermanentBaseMs, p.AuthPermanentMaxMs)
	if c.NeverCooldownProviders != nil {
		list := append([]string(nil), c.NeverCooldownProviders...)
		for i, prov := range list {
			b.checkID(fmt.Sprintf("%s.neverCooldownProviders[%d]", path, i), "provider", prov)
		}
		sort.Strings(list)
		p.NeverCooldownProviders = dedupe(list)
	}
}

func (b *builder) retry(p *policy.Params, r *ProviderRetry) {
	const path = "retry.provider"
	b.count(path+".maxRetries", r.MaxRetries, &p.MaxRetries)
	b.ms(path+".backoffBaseMs", r.BackoffBaseMs, &p.RetryBackoffBaseMs, 1)
	b.ms(path+".backoffMaxMs", r.BackoffMaxMs, &p.RetryBackoffMaxMs, 1)
	b.ms(path+".windowMs", r.WindowMs, &p.RetryWindowMs, 1)
	b.count(path+".rateLimitRetryCap", r.RateLimitRetryCap, &p.RateLimitRetryCap)
	b.ms(path+".maxRetryDelayMs", r.MaxRetryDelayMs, &p.MaxRetryDelayMs, 0)
	b.pair(path+".backoffMaxMs", p.RetryBackoffBaseMs, p.RetryBackoffMaxMs)
	if r.JitterMin != nil {
		p.JitterMin = *r.JitterMin
	}
	if r.JitterMax != nil {
		p.JitterMax = *r.JitterMax
	}
	if !(p.JitterMin > 0 && p.JitterMin <= p.JitterMax) {
		b.bad(path+".jitterMin", "need 0 < jitterMin (%g) <= jitterMax (%g)", p.JitterMin, p.JitterMax)
	} else if b.bounds && p.JitterMax > MaxJitter {
		b.bad(path+".jitterMax", "%g is more than the limit of %g", p.JitterMax, MaxJitter)
	}
}

func (b *builder) failover(p *policy.Params, f *FailoverSection) {
	const path = "failover"
	b.ms(path+".skipTtlMs", f.SkipTTLMs, &p.SkipCacheTTLMs, 0)
	if f.SDKRetryMaxWaitSeconds != nil {
		s := *f.SDKRetryMaxWaitSeconds
		if s < 0 || s > math.MaxInt64/1000 {
			b.bad(path+".sdkRetryMaxWaitSeconds", "%d is not a non-negative number of seconds (0 turns the cap off)", s)
		} else if b.bounds && s > MaxDurationMs/1000 {
			b.bad(path+".sdkRetryMaxWaitSeconds", "%d is longer than the limit of %d seconds (366 days)", s, MaxDurationMs/1000)
		} else {
			p.SDKRetryAfterCapMs = s * 1000
		}
	}
	b.ms(path+".probeThrottleMs", f.ProbeThrottleMs, &p.ProbeThrottleMs, 0)
	b.ms(path+".nearExpiryMarginMs", f.NearExpiryMarginMs, &p.NearExpiryMarginMs, 0)
	b.count(path+".transientProbesPerProvider", f.TransientProbesPerProvider, &p.TransientProbesPerProvider)
	b.ms(path+".autoOverrideProbeIntervalMs", f.AutoOverrideProbeIntervalMs, &p.AutoOverrideProbeIntervalMs, 0)
	if r := f.ChainOverloadRetry; r != nil {
		cp := path + ".chainOverloadRetry"
		b.count(cp+".rounds", r.Rounds, &p.ChainOverloadRounds)
		b.ms(cp+".baseMs", r.BaseMs, &p.ChainOverloadBaseMs, 1)
		b.ms(cp+".maxMs", r.MaxMs, &p.ChainOverloadMaxMs, 1)
		b.ms(cp+".noticeAfterMs", r.NoticeAfterMs, &p.ChainOverloadNoticeAfterMs, 0)
		b.pair(cp+".maxMs", p.ChainOverloadBaseMs, p.ChainOverloadMaxMs)
	}
	if l := f.LoopLimit; l != nil {
		lp := path + ".loopLimit"
		b.count(lp+".base", l.Base, &p.LoopLimitBase)
		b.count(lp+".perProfile", l.PerProfile, &p.LoopLimitPerProfile)
		b.count(lp+".min", l.Min, &p.LoopLimitMin)
		b.count(lp+".max", l.Max, &p.LoopLimitMax)
		if p.LoopLimitMin < 1 || p.LoopLimitMax < p.LoopLimitMin {
			b.bad(lp, "need 1 <= min (%d) <= max (%d)", p.LoopLimitMin, p.LoopLimitMax)
		}
	}
	setBool(f.FormatAdvances, &p.FormatAdvances)
}

// ms sets *dst from v when present; min is 0 (non-negative) or 1 (positive).
func (b *builder) ms(path string, v *int64, dst *int64, min int64) {
	if v == nil {
		return
	}
	if *v < min {
		if min == 0 {
			b.bad(path, "%d is negative; durations are milliseconds >= 0", *v)
		} else {
			b.bad(path, "%d is not a positive duration in milliseconds", *v)
		}
		return
	}
	if b.tooLong(path, *v) {
		return
	}
	*dst = *v
}

// tooLong reports (with bounds) a duration over [MaxDurationMs]: a deadline
// now + d must stay a real time, and a cooldown of years is a typo.
func (b *builder) tooLong(path string, v int64) bool {
	if !b.bounds || v <= MaxDurationMs {
		return false
	}
	b.bad(path, "%d is longer than the limit of %d ms (366 days)", v, MaxDurationMs)
	return true
}

// msOrHours reads a *Ms key or its OpenClaw *Hours alias (not both).
func (b *builder) msOrHours(path, msKey string, ms *int64, hKey string, hours *float64, dst *int64) {
	switch {
	case ms != nil && hours != nil:
		b.bad(path+"."+hKey, "give %s or %s, not both", msKey, hKey)
	case ms != nil:
		b.ms(path+"."+msKey, ms, dst, 1)
	case hours != nil:
		h := *hours
		if !(h > 0) || h > 24*366 {
			b.bad(path+"."+hKey, "%g is not a positive number of hours (at most a year)", h)
			return
		}
		if ms := int64(math.Round(h * 3600000)); ms >= 1 {
			*dst = ms
		} else {
			b.bad(path+"."+hKey, "%g hours is under a millisecond", h)
		}
	}
}

func (b *builder) count(path string, v *int, dst *int) {
	if v == nil {
		return
	}
	if *v < 0 {
		b.bad(path, "%d is negative", *v)
		return
	}
	if b.bounds && *v > MaxCount {
		b.bad(path, "%d is more than the limit of %d", *v, MaxCount)
		return
	}
	*dst = *v
}

func (b *builder) pair(path string, base, max int64) {
	if max < base {
		b.bad(path, "%d is below its base %d", max, base)
	}
}

func setBool(v *bool, dst *bool) {
	if v != nil {
		*dst = *v
	}
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// legacyParams sets the parameters canonical format 3 introduced to what a
// config of an earlier format meant: provider resets not honoured
// (subscriptionBlockMaxMs 0) and no rate-limit wait limit
// (maxRetryDelayMs 0). So replay --verify re-decides a ledger written
// before them exactly as it was decided.
func legacyParams(p *policy.Params) {
	p.SubscriptionBlockMaxMs = 0
	p.MaxRetryDelayMs = 0
}
