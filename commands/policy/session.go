package policy

import (
	"errors"
	"fmt"

	"github.com/fledger/fledger/events"
)

// Selection sources (modelOverrideSource, seed 000 "Selection source
// policy"; reference §6). SourceAgent is an agents.entries.<id>.model
// primary; the others are what a session may store.
type SelectionSource string

// Selection sources (SessionModelSelected.Source, TurnStarted.SelectionSource).
const (
	SourceDefault SelectionSource = "default"
	SourceAgent   SelectionSource = "agent"
	SourceUser    SelectionSource = "user"
	SourceLegacy  SelectionSource = "legacy"
	SourceAuto    SelectionSource = "auto"
	SourceCron    SelectionSource = "cron"
)

// PinSource is who pinned a session's auth profile (seed 000 "Session
// stickiness"; SessionAuthPinned.Source).
type PinSource string

// Pin sources.
const (
	PinAuto PinSource = "auto"
	PinUser PinSource = "user"
)

// SessionAuthUnpinned causes.
const (
	UnpinReset            = "reset"
	UnpinCompaction       = "compaction"
	UnpinCooldown         = "cooldown"
	UnpinProviderMismatch = "provider_mismatch"
	UnpinProfileRemoved   = "profile_removed"
	UnpinReplaced         = "replaced"
	UnpinDefaultCommand   = "default_command"
)

// NoticeState is the persisted fallback-notice state (reference §10
// fallbackNotice = {selectedModel, activeModel, reason}); Active "" means no
// fallback is active.
type NoticeState struct {
	Selected string `json:",omitzero"`
	Active   string `json:",omitzero"`
	Reason   string `json:",omitzero"`
}

// SessionState is one session's selection, auth pin and notice state,
// folded from its session events by [EvolveSession]. Fallback never writes
// the selection (seed 000: fallback is turn-local).
//
// The engine's snapshot encodes it (engine/snapshot.go) with encoding/json:
// a zero field is left out (omitzero, which keeps a nil slice apart from
// an empty one), so a session's snapshot holds only what it has — most
// hold a session key and an auto pin.
type SessionState struct {
	Session string `json:",omitzero"`
	// Model is the stored model override (zero = none) and Source its
	// modelOverrideSource ("" with a model = legacy, treated as user).
	Model  ModelRef        `json:",omitzero"`
	Source SelectionSource `json:",omitzero"`
	// Origin is the configured model a stored auto override fell back from.
	Origin ModelRef `json:",omitzero"`
	// Fallbacks/HasFallbacks: a fallbacks override the selection carries.
	Fallbacks    []ModelRef `json:",omitzero"`
	HasFallbacks bool       `json:",omitzero"`
	// Pin is the auth-profile pin, PinProvider its provider and PinSource
	// auto | user.
	Pin         string    `json:",omitzero"`
	PinProvider string    `json:",omitzero"`
	PinSource   PinSource `json:",omitzero"`
	// Notice is the fallback-notice state.
	Notice NoticeState `json:",omitzero"`
	// CompactionCount is the number of completed compactions.
	CompactionCount int `json:",omitzero"`
	// LastReset is the kind of the last /new or /reset ("" = none).
	LastReset string `json:",omitzero"`
	// UserCommandSeq is the stream sequence of the last user session
	// command stored ([UserCommand], [NoteSeq]; 0 = none known).
	UserCommandSeq uint64 `json:",omitzero"`
	// OtherCommandSeq is the stream sequence of the last user session
	// command stored that is not a model selection (a `/model default`,
	// `/new`, `/reset`, a user pin; 0 = none known).
	OtherCommandSeq uint64 `json:",omitzero"`
	// SelectSeq is the stream sequence of the last model selection with
	// source user stored (`/model`, a begin with a model; 0 = none known)
	// and SelectProfile the profile the same command pinned ("" = none):
	// the live switch a running turn derives (rule revision 5,
	// deriveSwitch).
	SelectSeq     uint64 `json:",omitzero"`
	SelectProfile string `json:",omitzero"`
}

// EvolveSession folds one session event into the state; events of other
// sessions and other aggregates leave it unchanged.
func EvolveSession(s SessionState, p events.Payload) SessionState {
	s, _ = evolveSession(s, p)
	return s
}

// evolveSession is [EvolveSession] reporting whether p is a type it knows: one
// case per type of the aggregate in the catalog
// (TestFold_EveryCatalogTypeIsEvolved).
func evolveSession(s SessionState, p events.Payload) (SessionState, bool) {
	switch e := p.(type) {
	case events.SessionModelSelected:
		if !s.owns(e.Session) {
			return s, true
		}
		s.Session, s.Model, s.Source = e.Session, e.Model, SelectionSource(e.Source)
		s.Origin = ModelRef{}
		if e.Origin != nil {
			s.Origin = *e.Origin
		}
		s.Fallbacks, s.HasFallbacks = append([]ModelRef(nil), e.Fallbacks...), e.HasFallbacks
	case events.SessionModelCleared:
		if !s.owns(e.Session) {
			return s, true
		}
		s.Session = e.Session
		s.Model, s.Source, s.Origin, s.Fallbacks, s.HasFallbacks = ModelRef{}, "", ModelRef{}, nil, false
	case events.SessionAuthPinned:
		if !s.owns(e.Session) {
			return s, true
		}
		s.Session, s.Pin, s.PinProvider, s.PinSource = e.Session, e.ProfileID, e.Provider, PinSource(e.Source)
	case events.SessionAuthUnpinned:
		if !s.owns(e.Session) || e.ProfileID != s.Pin {
			return s, true
		}
		s.Pin, s.PinProvider, s.PinSource = "", "", ""
	case events.SessionReset:
		if !s.owns(e.Session) {
			return s, true
		}
		s.Session, s.LastReset = e.Session, e.Kind
	case events.FallbackNoticeStateChanged:
		if !s.owns(e.Session) {
			return s, true
		}
		s.Session = e.Session
		if e.Active == "" {
			s.Notice = NoticeState{}
		} else {
			s.Notice = NoticeState{Selected: e.Selected, Active: e.Active, Reason: e.Reason}
		}
	case events.CompactionCompleted:
		if !s.owns(e.Session) {
			return s, true
		}
		s.Session, s.CompactionCount = e.Session, e.CompactionCount
	case events.SessionPruned:
		if !s.owns(e.Session) {
			return s, true
		}
		// Session maintenance dropped everything the session held: it
		// starts again as a fresh session key does ([PruneStale]).
		s = SessionState{}
	default:
		return s, false
	}
	return s, true
}

func (s SessionState) owns(id string) bool { return s.Session == "" || s.Session == id }

// strict reports whether the stored selection is strict: user, and legacy
// (a model with no source) (seed 000).
func (s SessionState) strict() bool {
	return s.Source == SourceUser || s.Source == SourceLegacy || s.Source == ""
}

// ErrUnknownProfile is returned when a pin names a profile the config does
// not have; ErrPinProvider when it belongs to another provider than the
// selected model's.
var (
	ErrUnknownProfile = errors.New("policy: unknown auth profile")
	ErrPinProvider    = errors.New("policy: profile does not match the selected provider")
	ErrBadSource      = errors.New("policy: unknown selection source")
)

// SelectModel decides a model selection on the session (`/model`, the
// picker, sessions.patch: source user; imports: auto with origin; cron:
// cron). It never touches a turn in flight: the selection applies from the
// next turn (POLICY "Order, pins, chain, selection source"). A pin on
// another provider is cleared (seed 000: "no longer matches the selected
// provider").
func SelectModel(s SessionState, session string, m ModelRef, source SelectionSource, origin *ModelRef) ([]events.Payload, error) {
	switch source {
	case SourceUser, SourceDefault, SourceAuto, SourceLegacy, SourceCron:
	default:
		return nil, fmt.Errorf("%w: %q", ErrBadSource, source)
	}
	out := []events.Payload{events.SessionModelSelected{Session: session, Model: m, Source: string(source), Origin: origin}}
	if s.Pin != "" && s.PinProvider != m.Provider {
		out = append(out, events.SessionAuthUnpinned{Session: session, ProfileID: s.Pin, Source: string(s.PinSource), Cause: UnpinProviderMismatch})
	}
	return out, nil
}

// SelectionUnchanged reports whether a selection of m with source (and
// origin, and the user pin profile when not "") would change nothing on
// session state s: s already holds exactly that selection (same model,
// source and origin, no fallbacks override, no pin of another provider
// to clear) and, with a profile, that profile as its user pin. Such a `/model` (OpenClaw's `/model` of the
// current model) is no change of the session: it records nothing and
// marks no live switch (seed 000: only explicit user-driven model
// *changes* mark one; like a `/model default` that clears no override).
// The engine asks it before deciding a selection ([SelectModel] itself
// still decides the selection, so a repeated selection stored by an
// earlier build re-decides as it was).
func SelectionUnchanged(s SessionState, m ModelRef, source SelectionSource, origin *ModelRef, profile string) bool {
	o := ModelRef{}
	if origin != nil {
		o = *origin
	}
	if s.Model != m || s.Source != source || s.Origin != o || s.HasFallbacks || len(s.Fallbacks) > 0 ||
		(s.Pin != "" && s.PinProvider != m.Provider) {
		return false
	}
	return profile == "" || (s.Pin == profile && s.PinSource == PinUser)
}

// PinProfile decides a user pin (`/model …@<profileId> -s`): it replaces
// any other pin. It fails with ErrUnknownProfile, or ErrPinProvider when the
// session has a selected model of another provider.
func (c Config) PinProfile(s SessionState, session, profileID string) ([]events.Payload, error) {
	p, ok := c.Profile(profileID)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownProfile, profileID)
	}
	if s.Model.Provider != "" && s.Model.Provider != p.Provider {
		return nil, fmt.Errorf("%w: %q is %s, selected %s", ErrPinProvider, profileID, p.Provider, s.Model)
	}
	var out []events.Payload
	if s.Pin != "" && (s.Pin != profileID || s.PinSource != PinUser) {
		out = append(out, events.SessionAuthUnpinned{Session: session, ProfileID: s.Pin, Source: string(s.PinSource), Cause: UnpinReplaced})
	}
	if s.Pin == profileID && s.PinSource == PinUser {
		return nil, nil
	}
	return append(out, events.SessionAuthPinned{Session: session, ProfileID: profileID, Provider: p.Provider, Source: string(PinUser)}), nil
}

// ClearModel decides `/model default -s`: the model override is cleared, a
// pin compatible with the default primary's provider is kept, an
// incompatible one cleared (seed 000 "Session stickiness").
func (c Config) ClearModel(s SessionState, session, agent string) []events.Payload {
	var out []events.Payload
	if s.Model != (ModelRef{}) {
		out = append(out, events.SessionModelCleared{Session: session, Previous: s.Model, PreviousSource: string(s.Source), Cause: "default_command"})
	}
	primary := c.configuredPrimary(agent)
	if s.Pin != "" && s.PinProvider != primary.Provider {
		out = append(out, events.SessionAuthUnpinned{Session: session, ProfileID: s.Pin, Source: string(s.PinSource), Cause: UnpinDefaultCommand})
	}
	return out
}

// ResetSession decides /new or /reset (kind "new" | "reset"; also
// sessions.reset): a stored auto override is cleared (seed 000 "Selection
// source policy") and an automatic pin is cleared; a user pin and a user
// selection survive (seed 000 "Session stickiness").
func ResetSession(s SessionState, session, kind string) []events.Payload {
	out := []events.Payload{events.SessionReset{Session: session, Kind: kind}}
	if s.Source == SourceAuto && s.Model != (ModelRef{}) {
		out = append(out, events.SessionModelCleared{Session: session, Previous: s.Model, PreviousSource: string(s.Source), Cause: "reset"})
	}
	if s.Pin != "" && s.PinSource == PinAuto {
		out = append(out, events.SessionAuthUnpinned{Session: session, ProfileID: s.Pin, Source: string(s.PinSource), Cause: UnpinReset})
	}
	return out
}

// CompleteCompaction decides a completed compaction: the count increments
// and an automatic pin is cleared (seed 000 "Session stickiness"), unless
// AutoPinSurvivesCompaction (OpenClaw 2026.9.6). A user pin survives.
func (p Params) CompleteCompaction(s SessionState, session string) []events.Payload {
	out := []events.Payload{events.CompactionCompleted{Session: session, CompactionCount: s.CompactionCount + 1}}
	if s.Pin != "" && s.PinSource == PinAuto && !p.AutoPinSurvivesCompaction {
		out = append(out, events.SessionAuthUnpinned{Session: session, ProfileID: s.Pin, Source: string(s.PinSource), Cause: UnpinCompaction})
	}
	return out
}

// ReconcilePin clears a pin whose profile disappeared from the config or
// moved to another provider (seed 000 "Session stickiness"). Called at turn
// start.
func (c Config) ReconcilePin(s SessionState, session string) []events.Payload {
	if s.Pin == "" {
		return nil
	}
	p, ok := c.Profile(s.Pin)
	if !ok || p.Provider != s.PinProvider {
		return []events.Payload{events.SessionAuthUnpinned{Session: session, ProfileID: s.Pin, Source: string(s.PinSource), Cause: UnpinProfileRemoved}}
	}
	return nil
}
