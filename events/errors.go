package events

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/internal/natsserver"
)

// ErrAuthorization: the NATS server refused the store's user or password
// when it connected ([Open] wraps it). It is nats.go's own authorization
// error, the same value, so a caller tests for it without importing the
// client.
var ErrAuthorization = nats.ErrAuthorization

// ErrStreamGone: the FLEDGER stream is not on the server any more (deleted,
// or replaced by a rotation under a running process: docs/operations.md
// "Start a fresh stream"), met by a read after [Open] found it. It is
// JetStream's own stream-not-found error, the same value, so every
// wrapped error that carries it matches without importing the client.
var ErrStreamGone = jetstream.ErrStreamNotFound

// Sentinel errors. Every error the package returns wraps one of them (with
// %w), so callers test with [errors.Is]; the typed errors below carry the
// details and are reached with [errors.As].
var (
	// ErrConflict: the append's expectation failed — the guarded subject's
	// last sequence was not the expected one. Reload and decide again. The
	// returned error is a *[ConflictError].
	ErrConflict = errors.New("events: append conflict")
	// ErrUnknownType: an event type the [Registry] does not know, on append
	// or on read. Returned inside an *[EventError] or a *[DecodeError].
	ErrUnknownType = errors.New("events: unknown event type")
	// ErrInvalidPayload: a payload that does not match its type (wrong Go
	// type, unknown or missing field, value outside its schema). Returned
	// inside an *[EventError] naming the type and the field.
	ErrInvalidPayload = errors.New("events: invalid payload")
	// ErrInvalidEnvelope: an envelope field is missing or malformed (id,
	// agent, key, at, aggregate). Returned inside an *[EventError].
	ErrInvalidEnvelope = errors.New("events: invalid envelope")
	// ErrTooLarge: a commit over the size or event-count limit
	// ([WithMaxCommitBytes], [WithMaxEventsPerCommit]). Returned inside an
	// *[EventError] naming the largest event's type and field.
	ErrTooLarge = errors.New("events: commit too large")
	// ErrEmptyCommit: Append was called with no events.
	ErrEmptyCommit = errors.New("events: empty commit")
	// ErrDecode: a stored message that cannot be decoded. The returned error
	// is a *[DecodeError] carrying the stream sequence.
	ErrDecode = errors.New("events: cannot decode stored message")
	// ErrInvalidSubject: an empty or malformed agent, aggregate, key or
	// subject.
	ErrInvalidSubject = errors.New("events: invalid subject")
	// ErrLocked: another process holds the embedded server's data directory
	// (its fledger.lock).
	ErrLocked = natsserver.ErrLocked
	// ErrStreamConfig: the FLEDGER stream exists with a configuration this
	// store cannot safely use; it is never rewritten silently.
	ErrStreamConfig = errors.New("events: incompatible stream config")
	// ErrInvalidOption: an option was given an invalid value.
	ErrInvalidOption = errors.New("events: invalid option")
	// ErrReadOnly: an append on a store connected as the embedded
	// listener's read-only user ([ReaderUser]); the server would refuse
	// the publish without a reply, so the store refuses it at once.
	ErrReadOnly = errors.New("events: connected as the read-only user " + ReaderUser + ": appends are refused (connect with the writer's credentials)")
	// ErrCursorInUse: a cursor opened with [CursorOptions].Keep has
	// another reader (another exporter is running): one waiting on it,
	// moving it, or holding deliveries it has not acknowledged; or it was
	// made again by another process while this one was opening it.
	ErrCursorInUse = errors.New("events: cursor in use by another reader")
	// ErrCursorReplaced: the cursor being read was deleted, or deleted and
	// made again, by another process (another exporter moved it): its
	// deliveries are no longer this reader's, which stops instead of
	// reporting the jump as missing sequences.
	ErrCursorReplaced = errors.New("events: cursor replaced by another reader")
	// ErrClosed: the store was used after Close.
	ErrClosed = errors.New("events: store closed")
	// ErrUpcast: a stored event could not be upcast to its type's current
	// version (missing upcaster, or the upcaster failed).
	ErrUpcast = errors.New("events: cannot upcast event")
	// ErrGap: stream sequences missing inside the stream (the stream
	// denies deletes, so a missing sequence is damage, e.g. a damaged
	// message block). Read and Watch yield it as a *[DecodeError] whose
	// Seq..Through names the missing run.
	ErrGap = errors.New("events: stream sequence missing")
)

// JetStream error codes a conflicting append reports (jetstream's own
// constants, as the int [ConflictError].Code holds).
const (
	// CodeWrongLastSequence (10071) is reported by non-replicated streams,
	// with the actual last sequence in the description.
	CodeWrongLastSequence = int(jetstream.JSErrCodeStreamWrongLastSequence)
	// CodeWrongLastSequenceConstant (10164) is reported by replicated (R>1)
	// streams, without the actual sequence.
	CodeWrongLastSequenceConstant = int(jetstream.JSErrCodeStreamWrongLastSequenceConstant)
)

// ConflictError reports a failed optimistic-concurrency expectation.
// errors.Is(err, ErrConflict) is true for it.
type ConflictError struct {
	// Subject is the subject the commit was to be stored under.
	Subject string
	// Guard is the subject or filter whose last sequence was checked (equal
	// to Subject unless AppendGuarded was used).
	Guard string
	// Expected is the last sequence the caller expected (0 = no message).
	Expected uint64
	// Actual is the guard's actual last sequence: as the server reported
	// it (code 10071), or, for 10164 (which does not say it), as the
	// stream leader reports it right after; 0 with ActualKnown false when
	// neither is known.
	Actual      uint64
	ActualKnown bool
	// Code is the JetStream error code: [CodeWrongLastSequence] or
	// [CodeWrongLastSequenceConstant].
	Code int
}

// Error names the guard, the expected and actual sequences and the code.
func (e *ConflictError) Error() string {
	actual := "unknown"
	if e.ActualKnown {
		actual = fmt.Sprint(e.Actual)
	}
	return fmt.Sprintf("events: append conflict on %s: expected last sequence %d, actual %s (jetstream code %d)",
		e.Guard, e.Expected, actual, e.Code)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// EventError names the event an append refused: its position in the
// commit, its type and, when known, the offending field (a JSON pointer
// such as "/chain/1/route_origin", or an envelope field name).
type EventError struct {
	// Index is the event's 0-based position in the commit (-1 when the
	// error concerns the commit as a whole).
	Index int
	// Type is the event type ("" when unknown).
	Type string
	// Field is the offending payload or envelope field, "" when it applies
	// to the whole event.
	Field string
	// Reason explains what is wrong.
	Reason string
	// Err is the sentinel: ErrInvalidPayload, ErrUnknownType,
	// ErrInvalidEnvelope or ErrTooLarge.
	Err error
}

// Error names the sentinel, the event's index, type and field, and why.
func (e *EventError) Error() string {
	s := fmt.Sprintf("%v: event %d", e.Err, e.Index)
	if e.Type != "" {
		s += " type " + e.Type
	}
	if e.Field != "" {
		s += " field " + e.Field
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unwrap returns the sentinel, so errors.Is works.
func (e *EventError) Unwrap() error { return e.Err }

// DecodeError reports a stored message that could not be decoded. Readers
// yield it in place of the message's events and carry on with the next
// message, so nothing is skipped silently. errors.Is(err, ErrDecode) is
// true; Unwrap gives the cause (which may be ErrUnknownType or ErrUpcast).
type DecodeError struct {
	// Seq is the stream sequence of the message.
	Seq uint64
	// Subject is the subject it was stored under.
	Subject string
	// Type is the event type when the envelope could be read.
	Type string
	// Version is the event's stored schema version when the envelope
	// could be read (0 when not).
	Version int
	// Index is the event's position in its commit (-1 for the whole message).
	Index int
	// Size is the message body's size in bytes (0 for a gap).
	Size int
	// Through is, for a gap (errors.Is(err, [ErrGap])), the last missing
	// sequence of the run that starts at Seq; 0 otherwise.
	Through uint64
	Err     error
}

// Gap reports whether e names missing sequences rather than a message.
func (e *DecodeError) Gap() bool { return errors.Is(e.Err, ErrGap) }

// Reason says in words why the message was not decoded: the cause
// without the sequence and subject (for quarantine records).
func (e *DecodeError) Reason() string {
	if e.Gap() {
		return "missing from the stream"
	}
	if e.Type != "" {
		return fmt.Sprintf("event %d type %s%s: %v", e.Index, e.Type, e.versionText(), e.Err)
	}
	return e.Err.Error()
}

// GapText names a run of missing sequences: "sequence 29", "sequences
// 29, 30, 31" or, for long runs, "sequences 29–1028 (1000 sequences)".
func GapText(from, through uint64) string {
	switch n := through - from + 1; {
	case through <= from:
		return fmt.Sprintf("sequence %d", from)
	case n <= 10:
		parts := make([]string, 0, n)
		for s := from; s <= through; s++ {
			parts = append(parts, fmt.Sprint(s))
		}
		return "sequences " + strings.Join(parts, ", ")
	default:
		return fmt.Sprintf("sequences %d–%d (%d sequences)", from, through, n)
	}
}

// Error names the stream sequence, subject and, when known, the event.
func (e *DecodeError) Error() string {
	if e.Gap() {
		return "events: stream " + GapText(e.Seq, e.Through) + " missing (the stream denies deletes: damaged storage?)"
	}
	s := fmt.Sprintf("events: cannot decode stream sequence %d (subject %s", e.Seq, e.Subject)
	if e.Type != "" {
		s += fmt.Sprintf(", event %d type %s%s", e.Index, e.Type, e.versionText())
	}
	return s + "): " + e.Err.Error()
}

// versionText is " version N" when the version is known.
func (e *DecodeError) versionText() string {
	if e.Version == 0 {
		return ""
	}
	return fmt.Sprintf(" version %d", e.Version)
}

// Is makes errors.Is(err, ErrDecode) true.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }
