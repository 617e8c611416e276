package replay

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// The explain wording of issue 17: provider resets and subscription
// blocks, successes that keep another model's state, a single attempt's
// error as the user sees it, and an agent that is strict by `fallbacks: []`.

// resetDetails says what the provider reported about its usage window.
func resetDetails(r *events.ProviderReset, w *events.UsageWindow, at func(int64) string) []string {
	var out []string
	if w != nil {
		out = append(out, fmt.Sprintf("a long usage window (%s; field %s, matched %q): no same-model retry, the turn moves on at once",
			w.Kind, firstNonEmpty(w.Field, "?"), oneLine(w.Match, 80)))
	}
	if r != nil {
		zone := ""
		if r.ZoneUnknown {
			zone = " (no zone given or known: read as UTC)"
		}
		out = append(out, fmt.Sprintf("provider reset at %s, read from %s %q (%s)%s",
			at(r.At), firstNonEmpty(r.Field, "?"), oneLine(r.Match, 80), r.Source, zone))
	}
	return out
}

// blockText is the subscription block of a ProfileFailureRecorded.
func blockText(e events.ProfileFailureRecorded, at func(int64) string) string {
	scope := ""
	if e.BlockedModel != "" {
		scope = ", model " + e.BlockedModel + " only"
	}
	return fmt.Sprintf("blocked until %s (%s from %s%s)", at(e.BlockedUntil), e.BlockedReason, e.BlockedSource, scope)
}

// blockDetails says where a block's deadline came from.
func blockDetails(e events.ProfileFailureRecorded, at func(int64) string) []string {
	r := e.Reset
	switch {
	case r == nil && e.BlockedUntil > 0 && e.WindowKept:
		return []string{"a rate limit inside the active subscription block: counted, no cooldown on top, the block keeps its deadline"}
	case r == nil:
		return nil
	case e.BlockBounded:
		return []string{fmt.Sprintf("the provider's reset %s (%s %q) lies past auth.cooldowns.subscriptionBlockMaxMs: the block ends at %s instead",
			at(r.At), r.Field, oneLine(r.Match, 80), at(e.BlockedUntil))}
	case r.At < e.BlockedUntil:
		return []string{fmt.Sprintf("the provider's reset %s is earlier than the block already recorded: the block keeps %s", at(r.At), at(e.BlockedUntil))}
	}
	return []string{fmt.Sprintf("the deadline is the provider's own reset (%s %q, %s), not a ladder step", r.Field, oneLine(r.Match, 80), r.Source)}
}

// successText describes a ProfileSucceeded: what it cleared and, when a
// cooldown or block scoped to another model survives, what it kept.
func successText(e events.ProfileSucceeded, at func(int64) string) (string, []string) {
	var kept, details []string
	if e.KeptCooldownUntil > 0 {
		kept = append(kept, fmt.Sprintf("the %s cooldown of model %s", e.KeptCooldownReason, e.KeptCooldownModel))
		details = append(details, fmt.Sprintf("a %s cooldown for model %s until %s is kept (a success on %s proves nothing about it)",
			e.KeptCooldownReason, e.KeptCooldownModel, at(e.KeptCooldownUntil), firstNonEmpty(e.Model, "another model")))
	}
	if e.KeptBlockedUntil > 0 {
		kept = append(kept, fmt.Sprintf("the subscription block of model %s", e.KeptBlockedModel))
		details = append(details, fmt.Sprintf("a %s block for model %s until %s (from %s) is kept",
			e.KeptBlockedReason, e.KeptBlockedModel, at(e.KeptBlockedUntil), e.KeptBlockedSource))
	}
	if len(kept) == 0 {
		return fmt.Sprintf("profile %s: success recorded, failure state cleared, lastUsed %s", e.ProfileID, at(e.LastUsed)), nil
	}
	counts := "no failure counts"
	if len(e.KeptFailureCounts) > 0 {
		keys := make([]string, 0, len(e.KeptFailureCounts))
		for k := range e.KeptFailureCounts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%d", k, e.KeptFailureCounts[k])
		}
		counts = "failure counts " + strings.Join(parts, ",")
	}
	text := fmt.Sprintf("profile %s: success recorded on %s, lastUsed %s; other failure state cleared, but errorCount %d, %s and %s are kept",
		e.ProfileID, firstNonEmpty(e.Model, "its model"), at(e.LastUsed), e.KeptErrorCount, counts, strings.Join(kept, " and "))
	return text, details
}

// singleAttemptEnd is the end of an exhaustion with one attempt:
// OpenClaw rethrows the last error as is (reference §7 "Failure
// summary"), so the user sees that error, not the stored summary.
// With no call at all (the only candidate was skipped) the user sees the
// skip's reason, and the turn ended without any attempt.
func singleAttemptEnd(e events.TurnExhausted, failed bool) string {
	a := e.Attempts[0]
	what := "after a single attempt: the user sees the provider's own error"
	if !failed {
		what = "without any attempt (the only candidate was skipped): the user sees the reason it was skipped"
	}
	return fmt.Sprintf("exhausted (%s) %s as it is, %q (%s, %s/%s)",
		msDur(e.DurationMs), what, oneLine(firstNonEmpty(a.Error, humanWords(a.Reason)), 200),
		firstNonEmpty(a.Reason, policy.ReasonUnknown), a.Provider, a.Model)
}

func humanWords(r string) string { return strings.ReplaceAll(r, "_", " ") }

// strictAgentWhy says why an agent primary is strict, from the config the
// turn ran under (raw: its canonical form, nil when not in the stream):
// its model object's fallbacks are explicitly empty (`fallbacks: []`), or
// it has none of its own (seed 000 "Selection source policy").
func (x *Explanation) strictAgentWhy(raw json.RawMessage) {
	if policy.SelectionSource(x.SelectionSource) != policy.SourceAgent || !x.Strict || len(raw) == 0 {
		return
	}
	l, err := config.Parse(raw, "ConfigApplied "+x.ConfigHash, config.Stored())
	if err != nil {
		return
	}
	var explicit, absent []string
	for id, a := range l.Policy.Agents {
		if a.Primary.String() != x.Requested {
			continue
		}
		if a.HasFallbacks && len(a.Fallbacks) == 0 {
			explicit = append(explicit, id)
		} else if !a.HasFallbacks {
			absent = append(absent, id)
		}
	}
	sort.Strings(explicit)
	sort.Strings(absent)
	names := func(ids []string) string {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = "agents.entries." + id + ".model"
		}
		return strings.Join(parts, ", ")
	}
	switch {
	case len(explicit) > 0 && len(absent) == 0:
		x.Why = fmt.Sprintf("the agent's own primary (%s) is requested; it is strict because its fallbacks are explicitly empty (fallbacks: []), so no other model is tried. The chain is this model alone.", names(explicit))
	case len(absent) > 0 && len(explicit) == 0:
		x.Why = fmt.Sprintf("the agent's own primary (%s) is requested; it is strict because its model lists no fallbacks of its own (an agent primary is strict unless it does). The chain is this model alone.", names(absent))
	}
	if x.PinnedProfile != "" && (len(explicit) > 0) != (len(absent) > 0) {
		x.Why = strings.TrimSuffix(x.Why, ".") + fmt.Sprintf(". The session's %s pin %s is tried first on its provider.", x.PinSource, x.PinnedProfile)
	}
}

// usedText describes a ProfileUsed: a success that changed no failure
// field. With the profile's state before it (prev) it says whether there
// was none, or which failure state a success on another model leaves as
// it is.
func usedText(e events.ProfileUsed, prev policy.ProfileState, now int64, at func(int64) string) (string, []string) {
	if !prev.HasFailureState() {
		return fmt.Sprintf("profile %s: success recorded (no failure state to clear), lastUsed %s", e.ProfileID, at(e.LastUsed)), nil
	}
	var kept, details []string
	if prev.CooldownUntil > now && prev.CooldownModel != "" && prev.CooldownModel != e.Model {
		kept = append(kept, fmt.Sprintf("the %s cooldown of model %s", prev.CooldownReason, prev.CooldownModel))
		details = append(details, fmt.Sprintf("a %s cooldown for model %s until %s is kept (a success on %s proves nothing about it)",
			prev.CooldownReason, prev.CooldownModel, at(prev.CooldownUntil), firstNonEmpty(e.Model, "another model")))
	}
	if prev.BlockedUntil > now && prev.BlockedModel != "" && prev.BlockedModel != e.Model {
		kept = append(kept, fmt.Sprintf("the subscription block of model %s", prev.BlockedModel))
		details = append(details, fmt.Sprintf("a %s block for model %s until %s (from %s) is kept",
			prev.BlockedReason, prev.BlockedModel, at(prev.BlockedUntil), prev.BlockedSource))
	}
	what := "its failure state"
	if len(kept) > 0 {
		what = strings.Join(kept, " and ")
	}
	text := fmt.Sprintf("profile %s: success recorded on %s, lastUsed %s; nothing cleared: errorCount %d and %s are kept",
		e.ProfileID, firstNonEmpty(e.Model, "its model"), at(e.LastUsed), prev.ErrorCount, what)
	return text, details
}
