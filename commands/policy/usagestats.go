package policy

import (
	"errors"
	"maps"
	"math"
	"math/bits"

	"github.com/fledger/fledger/events"
)

// ProfileState is one auth profile's usageStats (reference §4), folded from
// its profile events by [EvolveProfile]. Times are Unix ms UTC; 0 = unset.
type ProfileState struct {
	ProfileID string
	Provider  string
	// LastUsed and LastProbeAt are the time of the last success.
	LastUsed    int64
	LastProbeAt int64
	// ErrorCount is the aggregate failure count since the last reset.
	ErrorCount int
	// LastFailureAt is the time of the last recorded failure.
	LastFailureAt int64
	// FailureCounts counts failures per reason since the last reset
	// (rate_limit survives resets, reference §3 step 3).
	FailureCounts map[string]int
	// CooldownUntil, CooldownReason, CooldownModel: the cooldown window,
	// why, and the model it is scoped to ("" = every model).
	CooldownUntil  int64
	CooldownReason string
	CooldownModel  string
	// DisabledUntil and DisabledReason (billing | auth_permanent): a disable
	// blocks every model.
	DisabledUntil  int64
	DisabledReason string
	// BlockedUntil, BlockedReason (subscription_limit), BlockedSource and
	// BlockedModel: the subscription block, a provider-reported reset
	// (reference §3 markAuthProfileBlockedUntil; block.go). Scoped to
	// BlockedModel when set, every model otherwise.
	BlockedUntil  int64
	BlockedReason string
	BlockedSource string
	BlockedModel  string
}

// UnusableUntil is the end of the latest window, ignoring model scope:
// max(blockedUntil, cooldownUntil, disabledUntil) (reference §3).
func (s ProfileState) UnusableUntil() int64 {
	return max(s.CooldownUntil, s.DisabledUntil, s.BlockedUntil)
}

// ErrProviderMismatch is returned when a profile event or failure names a
// provider other than the profile's.
var ErrProviderMismatch = errors.New("policy: provider does not match the profile")

// neverCools reports whether provider never cools down (reference §3:
// openrouter, kilocode).
func (p Params) neverCools(provider string) bool {
	for _, x := range p.NeverCooldownProviders {
		if x == provider {
			return true
		}
	}
	return false
}

// Usable reports whether the profile may be called for model at now
// (reference §3 isProfileInCooldown): never-cooling providers are always
// usable; an active disable blocks every model; an active subscription
// block and an active cooldown each block their model only when scoped,
// every model otherwise; model "" ignores model-scoped cooldowns and
// blocks.
func (p Params) Usable(s ProfileState, model string, now int64) bool {
	if p.neverCools(s.Provider) {
		return true
	}
	if s.DisabledUntil > now || s.blocks(model, now) {
		return false
	}
	if s.CooldownUntil > now {
		if s.CooldownModel != "" && (model == "" || model != s.CooldownModel) {
			return true
		}
		return false
	}
	return true
}

// blockingUntil is the end of what blocks model (0 when nothing does), for
// ordering cooling profiles by soonest expiry.
func (p Params) blockingUntil(s ProfileState, model string, now int64) int64 {
	var u int64
	if s.DisabledUntil > now {
		u = s.DisabledUntil
	}
	if s.blocks(model, now) {
		u = max(u, s.BlockedUntil)
	}
	if s.CooldownUntil > now && (s.CooldownModel == "" || s.CooldownModel == model) {
		u = max(u, s.CooldownUntil)
	}
	return u
}

// capExp returns base × 2^(n−1) capped at max, n ≥ 1 (reference §3
// "Capped exponential").
func capExp(base, limit int64, n int) int64 {
	if n < 1 {
		n = 1
	}
	shift := n - 1
	if shift >= 62 || base > limit>>uint(shift) {
		return limit
	}
	if d := base << uint(shift); d < limit {
		return d
	}
	return limit
}

// ladder returns the regular cooldown for errorCount (seed 000: 30 s, 60 s,
// 300 s cap).
func (p Params) ladder(errorCount int) int64 {
	i := errorCount - 1
	if i < 0 {
		i = 0
	}
	if i >= len(p.CooldownLadderMs) {
		i = len(p.CooldownLadderMs) - 1
	}
	return p.CooldownLadderMs[i]
}

// Failure is one failure to count against a profile.
type Failure struct {
	// Reason is the classified reason (one of the 16 names).
	Reason string
	// Model is the model the failing call ran ("" when unknown).
	Model string
	// TurnID and Attempt name the attempt ("" / 0 outside a turn).
	TurnID  string
	Attempt int
	// Reset is the provider-reported end of the usage window the failure
	// carried (nil = none): a rate_limit with one blocks the profile until
	// then (block.go).
	Reset *events.ProviderReset
}

// RecordFailure decides the failure transition of one profile (seed 000
// "Cooldowns", "Billing disables"; seed 004; reference §3
// computeNextProfileUsageStats). It returns the ProfileFailureRecorded
// event carrying the resulting usageStats, or ok=false when the failure is
// not recorded: never-cooling providers, the health-neutral reasons, and
// for inline keys every reason but auth, auth_permanent and billing.
//
// Transition, at now (Unix ms):
//  1. The counters reset when lastFailureAt > 0 and now − lastFailureAt >
//     FailureWindowMs, or (ResetOnExpiry) when the unusable window has
//     expired. A reset keeps only failureCounts.rate_limit.
//  2. errorCount and failureCounts[reason] are incremented;
//     lastFailureAt = now.
//  3. billing / auth_permanent: disabledUntil = now + base × 2^(n−1) capped
//     (n = that reason's count; inline keys: a fixed InlineKeyBillingWindowMs
//     for billing), unless the current disable is still active: it keeps its
//     deadline (seed 004, never extended or shortened).
//  4. A rate_limit carrying a provider reset, or one inside an active
//     subscription block of its model: the block instead of a cooldown
//     ([Params.recordBlock], block.go).
//  5. Other reasons: cooldownUntil = now + ladder(errorCount), or for
//     rate_limit in exponential mode the capped exponential on
//     failureCounts.rate_limit; an active cooldown keeps its deadline.
//     cooldownModel follows reference §3 step 6.
func (p Params) RecordFailure(s ProfileState, prof Profile, f Failure, now int64) (ev events.ProfileFailureRecorded, ok bool) {
	if p.neverCools(prof.Provider) || healthNeutral.has(f.Reason) {
		return ev, false
	}
	if prof.InlineKey && !inlineRecorded.has(f.Reason) {
		return ev, false
	}
	reset := s.LastFailureAt > 0 && now-s.LastFailureAt > p.FailureWindowMs
	// Only a profile with failures on record has counters to reset, so a
	// first failure never reads as a reset.
	if p.ResetOnExpiry && s.LastFailureAt > 0 && s.UnusableUntil() <= now {
		reset = true
	}
	n := s.ErrorCount
	counts := map[string]int{}
	if reset {
		n = 0
		if rl := s.FailureCounts[ReasonRateLimit]; rl > 0 {
			counts[ReasonRateLimit] = rl
		}
	} else {
		for k, v := range s.FailureCounts {
			counts[k] = v
		}
	}
	n++
	counts[f.Reason]++
	ev = events.ProfileFailureRecorded{
		ProfileID: prof.ID, Provider: prof.Provider, Model: f.Model, Reason: f.Reason,
		TurnID: f.TurnID, Attempt: f.Attempt, CountersReset: reset,
		ErrorCount: n, FailureCounts: counts, LastFailureAt: now,
		CooldownUntil: s.CooldownUntil, CooldownReason: s.CooldownReason, CooldownModel: s.CooldownModel,
		DisabledUntil: s.DisabledUntil, DisabledReason: s.DisabledReason,
		BlockedUntil: s.BlockedUntil, BlockedReason: s.BlockedReason, BlockedSource: s.BlockedSource, BlockedModel: s.BlockedModel,
	}
	switch f.Reason {
	case ReasonBilling, ReasonAuthPermanent:
		if s.DisabledUntil > now {
			ev.WindowKept = true
		} else {
			var d int64
			switch {
			case f.Reason == ReasonBilling && prof.InlineKey:
				d = p.InlineKeyBillingWindowMs
			case f.Reason == ReasonBilling:
				d = capExp(p.BillingBaseMs, p.BillingMaxMs, counts[f.Reason])
			default:
				d = capExp(p.AuthPermanentBaseMs, p.AuthPermanentMaxMs, counts[f.Reason])
			}
			ev.DisabledUntil = now + d
		}
		ev.DisabledReason = f.Reason
	default:
		if f.Reason == ReasonRateLimit && p.recordBlock(&ev, s, f, now) {
			break
		}
		active := s.CooldownUntil > now
		if active {
			ev.WindowKept = true
		} else {
			d := p.ladder(n)
			if f.Reason == ReasonRateLimit && p.RateLimitMode == RateLimitExponential {
				d = capExp(p.RateLimitBaseMs, p.RateLimitMaxMs, counts[ReasonRateLimit])
			}
			ev.CooldownUntil = now + d
		}
		ev.CooldownReason = f.Reason
		// Reference §3 step 6.
		switch {
		case active && (s.CooldownModel != f.Model || !modelScoped.has(f.Reason) || f.Model == ""):
			ev.CooldownModel = ""
		case active:
			ev.CooldownModel = s.CooldownModel
		case modelScoped.has(f.Reason):
			ev.CooldownModel = f.Model
		default:
			ev.CooldownModel = ""
		}
	}
	return ev, true
}

// RecordSuccess decides a success of prof on model at now (POLICY
// "Cooldowns and disables"; reference §3 markAuthProfileSuccess): lastUsed
// = now and every failure field clears, except an active cooldown scoped to
// another model, which stays with its errorCount, its reason's count and
// lastFailureAt (seeds; with ClearOtherModelCooldownOnSuccess it clears too,
// as OpenClaw 2026.9.6 does).
//
// When the success has no failure field to change (the profile is clean),
// it is recorded as an [events.ProfileUsed], which moves lastUsed only and
// so commutes with failures other turns record concurrently; otherwise as
// an [events.ProfileSucceeded] (docs/engine.md "Subjects and consistency").
func (p Params) RecordSuccess(s ProfileState, prof Profile, model, turnID string, attempt int, now int64) events.Payload {
	ev := p.recordReset(s, prof, model, turnID, attempt, now)
	if clearsNothing(s, ev) {
		return events.ProfileUsed{ProfileID: prof.ID, Provider: prof.Provider, Model: model,
			TurnID: turnID, Attempt: attempt, LastUsed: now}
	}
	return ev
}

// HasFailureState reports whether s holds any failure field a success
// would clear (errorCount, failure counts, lastFailureAt, a cooldown or a
// disable, expired or not).
func (s ProfileState) HasFailureState() bool {
	return s.ErrorCount != 0 || len(s.FailureCounts) != 0 || s.LastFailureAt != 0 ||
		s.CooldownUntil != 0 || s.CooldownReason != "" || s.CooldownModel != "" ||
		s.DisabledUntil != 0 || s.DisabledReason != "" ||
		s.BlockedUntil != 0 || s.BlockedReason != "" || s.BlockedSource != "" || s.BlockedModel != ""
}

// clearsNothing reports whether applying ev to s leaves every failure field
// as it is.
func clearsNothing(s ProfileState, ev events.ProfileSucceeded) bool {
	return s.ErrorCount == ev.KeptErrorCount && sameCounts(s.FailureCounts, ev.KeptFailureCounts) &&
		s.LastFailureAt == ev.KeptLastFailureAt &&
		s.CooldownUntil == ev.KeptCooldownUntil && s.CooldownReason == ev.KeptCooldownReason &&
		s.CooldownModel == ev.KeptCooldownModel && s.DisabledUntil == 0 && s.DisabledReason == "" &&
		s.BlockedUntil == ev.KeptBlockedUntil && s.BlockedReason == ev.KeptBlockedReason &&
		s.BlockedSource == ev.KeptBlockedSource && s.BlockedModel == ev.KeptBlockedModel
}

func sameCounts(a, b map[string]int) bool { return maps.Equal(a, b) }

// recordReset is the ProfileSucceeded of a success of prof on model at now.
func (p Params) recordReset(s ProfileState, prof Profile, model, turnID string, attempt int, now int64) events.ProfileSucceeded {
	ev := events.ProfileSucceeded{ProfileID: prof.ID, Provider: prof.Provider, Model: model,
		TurnID: turnID, Attempt: attempt, LastUsed: now}
	keepCooldown := !p.ClearOtherModelCooldownOnSuccess && s.CooldownUntil > now && s.CooldownModel != "" && s.CooldownModel != model
	keepBlock := p.keepsBlock(s, model, now)
	if keepCooldown {
		ev.KeptCooldownUntil = s.CooldownUntil
		ev.KeptCooldownReason = s.CooldownReason
		ev.KeptCooldownModel = s.CooldownModel
	}
	if keepBlock {
		ev.KeptBlockedUntil, ev.KeptBlockedReason = s.BlockedUntil, s.BlockedReason
		ev.KeptBlockedSource, ev.KeptBlockedModel = s.BlockedSource, s.BlockedModel
	}
	if keepCooldown || keepBlock {
		ev.KeptErrorCount = s.ErrorCount
		ev.KeptLastFailureAt = s.LastFailureAt
		kept := map[string]int{}
		if c := s.FailureCounts[s.CooldownReason]; keepCooldown && c > 0 {
			kept[s.CooldownReason] = c
		}
		if c := s.FailureCounts[ReasonRateLimit]; keepBlock && c > 0 {
			kept[ReasonRateLimit] = c
		}
		if len(kept) > 0 {
			ev.KeptFailureCounts = kept
		}
	}
	return ev
}

// ClearProfile decides an operator's clear (seed 000 "Billing disables":
// recharging does not itself clear persisted state, so an operator does).
func ClearProfile(prof Profile, by, note string) events.ProfileCleared {
	return events.ProfileCleared{ProfileID: prof.ID, Provider: prof.Provider, By: by, Note: note}
}

// EvolveProfile folds one event into a profile's state. Events of other
// profiles and other aggregates leave it unchanged. ProfileFailureRecorded
// carries the resulting state, so it is copied; ProfileSucceeded resets the
// failure fields to what it kept; ProfileUsed moves lastUsed only (to the
// later time, so concurrent successes commute); ProfileCleared resets them all.
func EvolveProfile(s ProfileState, p events.Payload) ProfileState {
	s, _ = evolveProfile(s, p)
	return s
}

// evolveProfile is [EvolveProfile] reporting whether p is a type it knows: one
// case per type of the aggregate in the catalog
// (TestFold_EveryCatalogTypeIsEvolved).
func evolveProfile(s ProfileState, p events.Payload) (ProfileState, bool) {
	switch e := p.(type) {
	case events.ProfileFailureRecorded:
		if !s.owns(e.ProfileID) {
			return s, true
		}
		s.ProfileID, s.Provider = e.ProfileID, e.Provider
		s.ErrorCount = e.ErrorCount
		s.FailureCounts = copyCounts(e.FailureCounts)
		s.LastFailureAt = e.LastFailureAt
		s.CooldownUntil, s.CooldownReason, s.CooldownModel = e.CooldownUntil, e.CooldownReason, e.CooldownModel
		s.DisabledUntil, s.DisabledReason = e.DisabledUntil, e.DisabledReason
		s.BlockedUntil, s.BlockedReason, s.BlockedSource, s.BlockedModel = e.BlockedUntil, e.BlockedReason, e.BlockedSource, e.BlockedModel
	case events.ProfileSucceeded:
		if !s.owns(e.ProfileID) {
			return s, true
		}
		s.ProfileID, s.Provider = e.ProfileID, e.Provider
		s.LastUsed, s.LastProbeAt = e.LastUsed, e.LastUsed
		s.ErrorCount = e.KeptErrorCount
		s.FailureCounts = copyCounts(e.KeptFailureCounts)
		s.LastFailureAt = e.KeptLastFailureAt
		s.CooldownUntil, s.CooldownReason, s.CooldownModel = e.KeptCooldownUntil, e.KeptCooldownReason, e.KeptCooldownModel
		s.DisabledUntil, s.DisabledReason = 0, ""
		s.BlockedUntil, s.BlockedReason, s.BlockedSource, s.BlockedModel = e.KeptBlockedUntil, e.KeptBlockedReason, e.KeptBlockedSource, e.KeptBlockedModel
	case events.ProfileUsed:
		if !s.owns(e.ProfileID) {
			return s, true
		}
		s.ProfileID, s.Provider = e.ProfileID, e.Provider
		s.LastUsed, s.LastProbeAt = max(s.LastUsed, e.LastUsed), max(s.LastProbeAt, e.LastUsed)
	case events.ProfileCleared:
		if !s.owns(e.ProfileID) {
			return s, true
		}
		s.ProfileID = e.ProfileID
		if e.Provider != "" {
			s.Provider = e.Provider
		}
		s.ErrorCount, s.FailureCounts, s.LastFailureAt = 0, nil, 0
		s.CooldownUntil, s.CooldownReason, s.CooldownModel = 0, "", ""
		s.DisabledUntil, s.DisabledReason = 0, ""
		s.BlockedUntil, s.BlockedReason, s.BlockedSource, s.BlockedModel = 0, "", "", ""
	default:
		return s, false
	}
	return s, true
}

func (s ProfileState) owns(id string) bool { return s.ProfileID == "" || s.ProfileID == id }

func copyCounts(m map[string]int) map[string]int {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// SoonestExpiry is the model-aware soonest cooldown expiry over states at
// now (reference §7 getSoonestCooldownExpiry), 0 when none:
//
//   - windows that ended at or before now count as cleared (OpenClaw sweeps
//     expired windows on every order resolution, reference §3
//     clearExpiredCooldowns; fledger keeps them in state, so the sweep is
//     applied here);
//   - a profile whose only active windows are a cooldown or a subscription
//     block scoped to another model is skipped;
//   - for a rate_limit cooldown scoped to exactly model, with no disable
//     or block active, the latest such expiry counts;
//   - otherwise the profile's end of what blocks model counts, and the
//     earliest of those;
//   - the result is the minimum of the two.
func (p Params) SoonestExpiry(states []ProfileState, model string, now int64) int64 {
	var earliest, latestMatching int64
	for _, s := range states {
		if p.neverCools(s.Provider) {
			continue
		}
		dis, bl := s.DisabledUntil > now, s.blocks(model, now)
		cd := s.CooldownUntil > now && (s.CooldownModel == "" || s.CooldownModel == model)
		switch {
		case !cd && !dis && !bl:
			continue
		case !dis && !bl && s.CooldownReason == ReasonRateLimit && s.CooldownModel != "" && s.CooldownModel == model:
			latestMatching = max(latestMatching, s.CooldownUntil)
			continue
		}
		var u int64
		if dis {
			u = s.DisabledUntil
		}
		if bl {
			u = max(u, s.BlockedUntil)
		}
		if cd {
			u = max(u, s.CooldownUntil)
		}
		if earliest == 0 || u < earliest {
			earliest = u
		}
	}
	switch {
	case earliest == 0:
		return latestMatching
	case latestMatching == 0:
		return earliest
	}
	return min(earliest, latestMatching)
}

// UnavailableReason infers why every profile in states is unusable for
// model (reference §7 step 5 resolveProfilesUnavailableReason): an active
// disable adds 1000 to its reason, an active subscription block adds 1000
// to rate_limit, an active cooldown adds 1000 to its reason; a profile
// with none adds its failure counts; with no score at
// all the answer is unknown. The highest score wins; ties go to the earlier
// reason of the usage-state priority list.
func (p Params) UnavailableReason(states []ProfileState, model string, now int64) string {
	score := map[string]int{}
	for _, s := range states {
		active := false
		if s.DisabledUntil > now && s.DisabledReason != "" {
			score[s.DisabledReason] += 1000
			active = true
		}
		if s.blocks(model, now) {
			score[ReasonRateLimit] += 1000
			active = true
		}
		if s.CooldownUntil > now && s.CooldownReason != "" && (s.CooldownModel == "" || s.CooldownModel == model) {
			score[s.CooldownReason] += 1000
			active = true
		}
		if !active {
			for _, r := range sortedKeys(s.FailureCounts) {
				score[r] += s.FailureCounts[r]
			}
		}
	}
	best, bestScore := ReasonUnknown, 0
	for _, r := range unavailablePriority {
		if score[r] > bestScore {
			best, bestScore = r, score[r]
		}
	}
	return best
}

// ppm converts a jitter bound to parts per million. One product, one
// rounding: no fused multiply-add can change it across architectures.
func ppm(f float64) int64 { return int64(math.Round(float64(f * 1e6))) }

// jitterPPM maps a 64-bit seed (splitmix64) to a jitter factor in parts per
// million, uniform in [loPPM, hiPPM). Integer arithmetic only, so the same
// seed gives the same factor on every platform (Go may fuse float
// multiply-adds on arm64, ppc64le and s390x).
func jitterPPM(seed uint64, loPPM, hiPPM int64) int64 {
	z := seed + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	if hiPPM <= loPPM {
		return loPPM
	}
	hi, _ := bits.Mul64(z, uint64(hiPPM-loPPM))
	return loPPM + int64(hi)
}

// scalePPM returns round(base × factor / 10^6) for base, factor ≥ 0,
// saturating at limit.
func scalePPM(base, factor, limit int64) int64 {
	hi, lo := bits.Mul64(uint64(base), uint64(factor))
	lo, carry := bits.Add64(lo, 500000, 0)
	hi += carry
	if hi >= 1000000 {
		return limit
	}
	q, _ := bits.Div64(hi, lo, 1000000)
	if q > uint64(limit) {
		return limit
	}
	return int64(q)
}

// JitteredDelay is the same-model retry delay before the retry-after floor
// (reference §9): base = min(max, base × 2^(k−1)); delay = min(max,
// round(base × jitter)), jitter uniform in [JitterMin, JitterMax) drawn
// from seed in integer parts per million. It returns base and delay.
func (p Params) JitteredDelay(k int, seed uint64) (base, delay int64) {
	base = capExp(p.RetryBackoffBaseMs, p.RetryBackoffMaxMs, k)
	f := jitterPPM(seed, ppm(p.JitterMin), ppm(p.JitterMax))
	return base, scalePPM(base, f, p.RetryBackoffMaxMs)
}

// mixSeed derives the jitter seed of one draw from the turn seed and the
// attempt number it follows.
func mixSeed(seed uint64, attempt int) uint64 {
	return bits.RotateLeft64(seed, 17) ^ (uint64(attempt) * 0x9e3779b97f4a7c15)
}
