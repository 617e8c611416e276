package engine

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// ErrBeginMismatch: a begin of a turn id that exists for the same session
// with another request than the one that started it (another model,
// chat, fallbacks…; see [BeginMismatchError]).
var ErrBeginMismatch = errors.New("engine: turn already begun with another request")

// BeginMismatchError is ErrBeginMismatch naming the first field of the
// request that differs from what the turn's TurnStarted records. Nothing
// was appended. What is compared, in this order (a field the request
// leaves out is not compared; what the TurnStarted does not record — the
// agents.entries agent, a selection's source default, which the turn does
// not run — cannot be):
//
//   - chat ("" = direct) with TurnStarted.chat;
//   - seed (when the request sets one) with TurnStarted.seed;
//   - model: a selection of source user, legacy or auto, or a cron
//     payload's model, with TurnStarted.requested (an auto override's
//     origin probe runs its origin instead: not compared), and the
//     source with TurnStarted.selection_source (default: the source
//     only, agent or default);
//   - profile (`@profile`) with TurnStarted.pinned_profile;
//   - fallbacks_override: given or not with TurnStarted.fallbacks_override,
//     and its list with the recorded chain after the requested model;
//   - a cron payload's fallbacks (without fallbacks_override) with the
//     recorded chain after the requested model.
type BeginMismatchError struct {
	TurnID string
	// Field is the request's field ("chat", "seed", "model", "source",
	// "profile", "fallbacks_override", "fallbacks").
	Field string
	// Recorded is what the turn's TurnStarted holds, Requested what the
	// request asked, both as text.
	Recorded, Requested string
}

func (e *BeginMismatchError) Error() string {
	return fmt.Sprintf("%v: turn %s was begun with %s %s, this begin asks %s", ErrBeginMismatch, e.TurnID, e.Field, e.Recorded, e.Requested)
}

// Unwrap returns ErrBeginMismatch.
func (e *BeginMismatchError) Unwrap() error { return ErrBeginMismatch }

// beginMismatch compares a normalized begin req with the TurnStarted ts
// of the turn its id names (same session): nil when req could have
// started it.
func beginMismatch(req TurnRequest, ts events.TurnStarted) *BeginMismatchError {
	diff := func(field, rec, asked string) *BeginMismatchError {
		return &BeginMismatchError{TurnID: req.TurnID, Field: field, Recorded: rec, Requested: asked}
	}
	if req.Chat != ts.Chat {
		return diff("chat", strconv.Quote(ts.Chat), strconv.Quote(req.Chat))
	}
	if req.HasSeed && req.Seed != ts.Seed {
		return diff("seed", strconv.FormatUint(ts.Seed, 10), strconv.FormatUint(req.Seed, 10))
	}
	src := policy.SelectionSource(ts.SelectionSource)
	var model events.ModelRef
	switch {
	case req.Cron != nil:
		if src != policy.SourceCron {
			return diff("source", strconv.Quote(ts.SelectionSource), `"cron"`)
		}
		model = req.Cron.Model
	case req.Select != nil:
		want := policy.SelectionSource(req.Select.Source)
		if want == "" {
			want = policy.SourceUser
		}
		switch {
		case want == policy.SourceDefault:
			if src != policy.SourceDefault && src != policy.SourceAgent {
				return diff("source", strconv.Quote(ts.SelectionSource), `"default"`)
			}
		case src != want:
			return diff("source", strconv.Quote(ts.SelectionSource), strconv.Quote(string(want)))
		case !ts.AutoOriginProbe:
			model = req.Select.Model
		}
		if p := req.Select.Profile; p != "" && (ts.PinnedProfile != p || policy.PinSource(ts.PinSource) != policy.PinUser) {
			return diff("profile", strconv.Quote(ts.PinnedProfile), strconv.Quote(p))
		}
	}
	if model != (events.ModelRef{}) && model != ts.Requested {
		return diff("model", strconv.Quote(ts.Requested.String()), strconv.Quote(model.String()))
	}
	if (req.FallbacksOverride != nil) != ts.FallbacksOverride {
		return diff("fallbacks_override", given(ts.FallbacksOverride), given(req.FallbacksOverride != nil))
	}
	var list []policy.ModelRef
	field := "fallbacks_override"
	switch {
	case req.FallbacksOverride != nil:
		list = *req.FallbacksOverride
	case req.Cron != nil && req.Cron.HasFallbacks:
		list, field = req.Cron.Fallbacks, "fallbacks"
	default:
		return nil
	}
	want := policy.BuildChain(ts.Requested, list, true, policy.ModelRef{})
	if !sameModels(want, ts.Chain) {
		return diff(field, chainText(ts.Chain[min(1, len(ts.Chain)):]), chainText(want[min(1, len(want)):]))
	}
	return nil
}

func given(b bool) string {
	if b {
		return "given"
	}
	return "absent"
}

// sameModels reports whether two chains name the same provider/models in
// the same order (route origins aside).
func sameModels(a, b []events.Candidate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Provider != b[i].Provider || a[i].Model != b[i].Model {
			return false
		}
	}
	return true
}

// chainText is a chain's models as a JSON-like list: ["p/m","p2/m2"].
func chainText(c []events.Candidate) string {
	out := "["
	for i, x := range c {
		if i > 0 {
			out += ","
		}
		out += strconv.Quote(x.Provider + "/" + x.Model)
	}
	return out + "]"
}

// NoNextStepError: a turn's log leaves it with no step to answer —
// running but neither in flight nor waiting, and not ended — which only
// a commit no engine writes causes: a TurnStarted whose chain is empty
// (every candidate chain holds at least the requested model; a start
// without one is refused, ErrNoModel). Nothing can be called, reported or
// resumed on such a turn; the step API answers this error instead of a
// step of no kind.
type NoNextStepError struct {
	TurnID string
	// Seq is the sequence of the turn's last commit, Phase its phase
	// after it, Chain the length of its recorded candidate chain.
	Seq   uint64
	Phase string
	Chain int
}

func (e *NoNextStepError) Error() string {
	if e.Chain == 0 {
		return fmt.Sprintf("engine: turn %s has no next step: its TurnStarted holds an empty candidate chain (\"chain\": []; no engine writes one), so there is no model to call (last commit seq %d, phase %s)",
			e.TurnID, e.Seq, e.Phase)
	}
	return fmt.Sprintf("engine: turn %s has no next step: after its commit at seq %d it is %s, neither in flight, waiting nor ended", e.TurnID, e.Seq, e.Phase)
}
