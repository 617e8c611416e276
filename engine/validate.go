package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/termtext"
)

// Ids that become aggregate keys (session keys, turn ids, profile ids) are
// checked before anything is decided or appended, with the events
// package's own limits, so a request that could never be stored is refused
// up front instead of breaking a later decision of a turn already started.

// keyCheckAgent is a valid agent id used only to ask [events.Subject]
// whether a key is acceptable (the agent does not affect the key check).
const keyCheckAgent = "a"

// ValidateKey reports why key cannot be the key of a new aggregate of kind
// agg (nil = it can): what [ValidateStoredKey] refuses, and a key that is
// only white space (a client that filled in nothing: every such request
// would share one session no one meant) or holds a control character (a
// line break or an escape in an id would rewrite the lines of every
// table, log and explanation that prints it). The error reads after a
// field name: "session is 600 bytes; the limit is 512". It is for ids a
// request creates (a new turn id, a session's first command or turn):
// ids already stored are looked up with [ValidateStoredKey], so a turn or
// session an earlier build stored before a rule was added can still be
// read, continued and finished.
func ValidateKey(agg events.Aggregate, key string) error {
	if err := ValidateText(key, events.MaxKeyLen); err != nil {
		return err
	}
	if _, err := events.Subject(keyCheckAgent, agg, key); err != nil {
		return fmt.Errorf("cannot be stored: %v", err)
	}
	return nil
}

// ValidateStoredKey reports why key cannot be the key of an aggregate of
// kind agg any fledger build stored (nil = it can): empty, longer than
// [events.MaxKeyLen] bytes, not valid UTF-8 (the JSON envelope could not
// carry it unchanged), or refused by [events.Subject]. The error reads
// after a field name, as [ValidateKey]'s.
func ValidateStoredKey(agg events.Aggregate, key string) error {
	if err := validateBytes(key, events.MaxKeyLen); err != nil {
		return err
	}
	if _, err := events.Subject(keyCheckAgent, agg, key); err != nil {
		return fmt.Errorf("cannot be stored: %v", err)
	}
	return nil
}

// ValidateText reports why s cannot be stored as a one-line text of at
// most max bytes (nil = it can): empty, longer than max, not valid UTF-8,
// only white space, or holding a control character or a character that
// reorders or breaks the line around it ([termtext.Reorders]). It is the rule of
// [ValidateKey] without the subject check, for text a request stores for
// good that is not a key (an auth order's by). The error reads after a
// field name.
func ValidateText(s string, max int) error {
	if err := validateBytes(s, max); err != nil {
		return err
	}
	if strings.TrimFunc(s, unicode.IsSpace) == "" {
		return fmt.Errorf("%q is only white space", s)
	}
	if strings.TrimFunc(s, invisible) == "" {
		return fmt.Errorf("%q is only invisible characters (white space and format characters such as U+200B, U+FEFF)", s)
	}
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Errorf("holds the control character %U at byte %d", r, i)
	}
	if i := strings.IndexFunc(s, termtext.Reorders); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Errorf("holds the bidirectional or line-separating character %U at byte %d", r, i)
	}
	return nil
}

// invisible reports white space and format characters (zero-width
// spaces and joiners, the BOM, soft hyphens): an id made only of them
// prints as nothing.
func invisible(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }

// MaxByLen is the longest `by` of an auth order (who set it: an operator
// name, "cli", "api"), in bytes. It is stored in the AuthOrderSet for
// good and printed by explain and auth order get.
const MaxByLen = 128

// CheckBy refuses the `by` of a command that [ValidateText] refuses
// (at most [MaxByLen] bytes), as an [ErrBadRequest]: "engine: bad
// request: by holds the control character U+000A at byte 1".
func CheckBy(by string) error {
	if err := ValidateText(by, MaxByLen); err != nil {
		return fmt.Errorf("%w: by %v", ErrBadRequest, err)
	}
	return nil
}

// CheckKey is [ValidateKey] as an [ErrBadRequest] naming field: "engine:
// bad request: session is 600 bytes; the limit is 512".
func CheckKey(field string, agg events.Aggregate, key string) error {
	if err := ValidateKey(agg, key); err != nil {
		return fmt.Errorf("%w: %s %v", ErrBadRequest, field, err)
	}
	return nil
}

// CheckStoredKey is [ValidateStoredKey] as an [ErrBadRequest] naming
// field.
func CheckStoredKey(field string, agg events.Aggregate, key string) error {
	if err := ValidateStoredKey(agg, key); err != nil {
		return fmt.Errorf("%w: %s %v", ErrBadRequest, field, err)
	}
	return nil
}

// checkNewIDs holds the ids of a turn about to be started to the rule of
// new ids ([ValidateKey]): its turn id, which is new, and its session
// unless the fold already holds that session (stored by an earlier build
// under an earlier rule, it goes on).
func (e *Engine) checkNewIDs(req TurnRequest) error {
	if err := CheckKey("turn id", events.AggTurn, req.TurnID); err != nil {
		return err
	}
	return e.checkNewSession(req.Session)
}

// checkNewSession holds session to the rule of new ids unless the fold
// already holds it (knowsSession).
func (e *Engine) checkNewSession(session string) error {
	err := CheckKey("session", events.AggSession, session)
	if err == nil {
		return nil
	}
	e.st.mu.RLock()
	known := e.st.knowsSession(session)
	e.st.mu.RUnlock()
	if known {
		return nil
	}
	return err
}

// knowsSession reports whether the fold holds session: its state, or a
// turn of it (a session that only ever ran turns that wrote nothing to it
// has no state). A session whose only trace is finished turns evicted
// since (WithFinishedTurns) is not known. Call with mu held.
func (s *state) knowsSession(session string) bool {
	if _, ok := s.sessions[session]; ok {
		return true
	}
	for _, t := range s.turns {
		if t.Session == session {
			return true
		}
	}
	return false
}

// validateBytes reports why s cannot be an id of at most max bytes that
// the JSON envelope carries unchanged: empty, longer, not valid UTF-8.
func validateBytes(s string, max int) error {
	switch {
	case s == "":
		return errors.New("is empty")
	case len(s) > max:
		return fmt.Errorf("is %d bytes; the limit is %d", len(s), max)
	case !utf8.ValidString(s):
		return errors.New("is not valid UTF-8")
	}
	return nil
}

// ValidateAgent reports why agent cannot be the id of an agent that is
// written to (nil = it can), after a field name as [ValidateKey]: empty,
// longer than [events.MaxAgentLen], not valid UTF-8, or, in the config's
// words ([config.IDTextProblem]), holding a wildcard, white space or a
// control character: `serve --agent '*'` would write an agent no config
// can name. Agents already in a ledger are read whatever their id.
func ValidateAgent(agent string) error {
	if err := validateBytes(agent, events.MaxAgentLen); err != nil {
		return err
	}
	if p := config.IDTextProblem("agent id", agent); p != "" {
		return errors.New(strings.TrimPrefix(p, "agent id "))
	}
	return nil
}

// CheckAgent is [ValidateAgent] as an [ErrBadRequest]: "engine: bad
// request: agent "*" contains a wildcard (* or >); name one agent id
// exactly". Commands that write an agent's stream run it first
// ([ApplyConfig], `fledger auth order set`).
func CheckAgent(agent string) error {
	if err := ValidateAgent(agent); err != nil {
		return fmt.Errorf("%w: agent %v", ErrBadRequest, err)
	}
	return nil
}

// CheckWritableAgent is [CheckAgent] for an agent about to be written
// to, except that an agent the ledger already holds (an earlier build
// stored it before the rule) goes on whatever its id: its open turns can
// be finished and its config and auth order changed. The ledger is
// looked at ([AgentInLedger]) only when the rule refuses.
func CheckWritableAgent(ctx context.Context, st events.Store, agent string) error {
	err := CheckAgent(agent)
	if err == nil {
		return nil
	}
	if known, kerr := AgentInLedger(ctx, st, agent); kerr != nil || known {
		return kerr
	}
	return err
}

// AgentInLedger reports whether st holds a message of agent: one look at
// the last sequence of its subjects. An id that could not be a subject
// token was never stored.
func AgentInLedger(ctx context.Context, st events.Store, agent string) (bool, error) {
	if _, err := events.AggregateFilter(agent, events.AggTurn); err != nil || agent == "" {
		return false, nil
	}
	last, err := st.LastSeq(ctx, events.AgentPrefix(agent)+">")
	return last > 0, err
}

// CheckWritable is [CheckWritableAgent] for the engine's agent.
func (e *Engine) CheckWritable(ctx context.Context) error {
	return CheckWritableAgent(ctx, e.store, e.agent)
}

// checkAgentID checks an OpenClaw agent id given with a request ("" = the
// defaults) with [CheckAgent].
func checkAgentID(agent string) error {
	if agent == "" {
		return nil
	}
	return CheckAgent(agent)
}

// MaxModelRefLen is the longest "provider/model" accepted, in bytes:
// every selection is stored in its session's events for good, and a
// turn's chain carries it in each of its commits.
const MaxModelRefLen = 512

// CheckModelRef refuses a model reference that is not provider/model or
// is longer than [MaxModelRefLen], naming field. Errors wrap
// [ErrBadRequest].
func CheckModelRef(field string, m events.ModelRef) error {
	if m.Provider == "" || m.Model == "" {
		return fmt.Errorf("%w: %s %q is not provider/model", ErrBadRequest, field, m.String())
	}
	if n := len(m.Provider) + 1 + len(m.Model); n > MaxModelRefLen {
		return fmt.Errorf("%w: %s is %d bytes, longer than the %d bytes a provider/model may have", ErrBadRequest, field, n, MaxModelRefLen)
	}
	return checkRefText(field, m.String())
}

// ValidateTurnRequest checks the ids of req that become aggregate keys
// (session, turn id when given), its chat and agent, and its model
// selection, without filling defaults or touching the stream.
// [Engine.BeginTurn] and [Engine.RunTurn] run it first, before recording
// the selection, so a turn that cannot start leaves nothing behind.
// Errors wrap [ErrBadRequest].
func ValidateTurnRequest(req TurnRequest) error {
	if req.Session == "" {
		return fmt.Errorf("%w: empty session", ErrBadRequest)
	}
	// The ids as any build stored them: a re-sent begin of a turn stored
	// before the rule of new ids finds it; a new turn's ids are held to
	// that rule once it is known to be new (checkNewIDs).
	if err := CheckStoredKey("session", events.AggSession, req.Session); err != nil {
		return err
	}
	if req.TurnID != "" {
		if err := CheckStoredKey("turn id", events.AggTurn, req.TurnID); err != nil {
			return err
		}
	}
	switch req.Chat {
	case "", ChatDirect, ChatGroup, ChatChannel:
	default:
		return fmt.Errorf("%w: chat %q is not direct|group|channel", ErrBadRequest, req.Chat)
	}
	if err := checkAgentID(req.Agent); err != nil {
		return err
	}
	return validateSelection(req)
}

// ErrInvalidDecision: the event store refused a decision's events as
// invalid (envelope, payload, subject or size). Nothing was appended: the
// turn or session is exactly as it was before the step. Inputs are
// validated up front, so this is a bug, never a client error.
var ErrInvalidDecision = errors.New("engine: the event store refused the decision; nothing was appended")

// isValidationError reports whether an append error is the store refusing
// the commit's content (it then appended nothing) rather than a conflict,
// a transport or a context error.
func isValidationError(err error) bool {
	return errors.Is(err, events.ErrInvalidEnvelope) || errors.Is(err, events.ErrInvalidPayload) ||
		errors.Is(err, events.ErrInvalidSubject) || errors.Is(err, events.ErrUnknownType) ||
		errors.Is(err, events.ErrTooLarge) || errors.Is(err, events.ErrEmptyCommit)
}
