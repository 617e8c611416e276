package events

import (
	"context"
	"time"
)

// StoredCommit is one stored message as a follower sees it: its stream
// sequence, the subject it was stored under and its events.
type StoredCommit struct {
	// Seq is the message's stream sequence (for a gap, the first missing
	// sequence).
	Seq uint64
	// Subject is the subject the commit was stored under ("" for a gap).
	Subject string
	// Events are the decoded events, in order (Seq, Index and Basis set).
	// Nil when the commit's subject was not selected for decoding
	// ([FollowOptions].Decode) or when Err is set.
	Events []Event
	// Err is set when the message cannot be decoded (not a fledger
	// commit: it names the subject, size and cause) or for a run of
	// sequences missing in the stream (Err wraps [ErrGap], Seq..Through).
	// Readers skip such a commit and go on; its sequence still counts.
	Err *DecodeError
}

// FollowOptions tunes [Store].Follow.
type FollowOptions struct {
	// From is the first stream sequence to yield (0 or 1 = the beginning).
	From uint64
	// Decode, when set, selects the subjects whose commits are decoded;
	// the others are yielded with their Seq and Subject and no Events, so
	// a follower still sees every sequence without paying for decoding
	// what it does not fold. Nil decodes every commit.
	Decode func(subject string) bool
	// Skip, when set, is asked before a selected commit is decoded: true
	// yields it without Events, as one not selected, for a follower that
	// already holds it (the engine folds its own commit when it is
	// acknowledged, before the stream delivers it back). It may be called
	// on another goroutine than the caller's, ahead of the yield. Nil
	// skips none.
	Skip func(seq uint64) bool
}

// CursorOptions tunes [Store].Cursor.
type CursorOptions struct {
	// Name is the cursor's durable name: its position survives restarts
	// of the reader and of the server. Required; the characters allowed
	// are those of a JetStream consumer name (letters, digits, - and _).
	Name string
	// Since is the first sequence a new cursor delivers (0 or 1 = the
	// beginning). An existing cursor resumes at its own position.
	Since uint64
	// Batch is the most commits delivered and not yet acknowledged
	// (MaxAckPending); default 256.
	Batch int
	// AckWait is how long a delivered commit may stay unacknowledged
	// before it is delivered again; default 30 s.
	AckWait time.Duration
	// Keep, when set, makes the caller, not the cursor's stored position,
	// decide where an existing cursor delivers from: Cursor calls it with
	// the cursor's state, and unless it returns true the cursor is moved
	// to Since (made again there; its unacknowledged deliveries are
	// dropped). A cursor so placed has one reader: when another reader is
	// at work on it (waiting on it, moving it, or acknowledging the
	// deliveries it holds within their AckWait, which Cursor waits out
	// once), Cursor refuses with an error wrapping [ErrCursorInUse]
	// instead of sharing it or moving it under that reader; a reader it
	// cannot see and moves it under fails its next Fetch with
	// [ErrCursorReplaced]. A new cursor starts at Since without a call.
	Keep func(ctx context.Context, st CursorState) (bool, error)
	// Owned, with Keep, says the caller alone reads this cursor where it
	// runs (a file export holding the file's lock under the file's own
	// name): Keep is asked, and a move made, after one look for a reader
	// parked on it (a waiting fetch: another host's), without the further
	// probes and without waiting out deliveries within their AckWait
	// (cursor_move.go), so a reader restarted after a crash does not wait
	// out the crashed one's AckWait.
	Owned bool
}

// CursorState is an existing cursor's position, as [CursorOptions].Keep
// is shown it.
type CursorState struct {
	// Acked is the sequence up to which every commit is acknowledged (0 =
	// none): the cursor delivers what follows it.
	Acked uint64
	// Pending is how many commits were delivered and not acknowledged (a
	// reader stopped or died with them): they are delivered again, after
	// AckWait, possibly after newer ones.
	Pending int
}

// Cursor is a durable, acknowledged position on the stream: the reader of
// an exporter that delivers every commit at least once and in order. A
// commit is delivered again when it is not acknowledged within AckWait
// (the reader died) or when it is handed back ([Delivery].Nak).
type Cursor interface {
	// Fetch waits up to wait for the next commits and returns up to max
	// of them, in stream order; none (and no error) when wait passed with
	// nothing new. Undecodable messages and gaps come as Deliveries with
	// Err set, to be acknowledged like the others.
	Fetch(ctx context.Context, max int, wait time.Duration) ([]Delivery, error)
	// Close stops reading. The position stays stored under Name.
	Close() error
}

// Delivery is one commit handed out by a [Cursor].
type Delivery struct {
	StoredCommit
	h deliveryHandle
}

// deliveryHandle is what a store implements for each delivered commit.
type deliveryHandle interface {
	ack(ctx context.Context) error
	inProgress() error
	nak() error
}

// Ack acknowledges the commit and waits for the store to confirm it: once
// it returns nil the commit is not delivered again under this cursor.
func (d Delivery) Ack(ctx context.Context) error { return d.h.ack(ctx) }

// InProgress tells the store the commit is still being worked on, so it
// is not delivered again when AckWait passes.
func (d Delivery) InProgress() error { return d.h.inProgress() }

// Nak hands the commit back: it is delivered again, first.
func (d Delivery) Nak() error { return d.h.nak() }
