package events

import (
	"context"
	"fmt"
	"time"
)

// Ledger identifies the event stream (the ledger) a store holds. Created
// and FirstID are the fingerprint: both are fixed for the life of one
// stream (it denies deletes and purges) and differ between ledgers — the
// creation time has nanosecond precision and the first event id is a
// UUIDv7. Projection databases are bound to it, so one is never caught up
// from another ledger.
type Ledger struct {
	// Stream is the stream's name ([StreamName]).
	Stream string
	// Created is the stream's creation time (UTC).
	Created time.Time
	// FirstID is the message id of the stream's first commit (the
	// Nats-Msg-Id at the stream's first sequence, 1 unless it was created
	// continuing an archived stream; "" while the stream is empty).
	FirstID string
	// LastSeq is the stream's last sequence when it was read. It is not
	// part of the fingerprint.
	LastSeq uint64
	// FirstSeq is the stream's first sequence: 1, or the first_seq of a
	// stream created continuing an archived one ([WithFirstSeq]), whose
	// sequences before it are the archive's. It is not part of the
	// fingerprint.
	FirstSeq uint64
}

// String names the ledger for error messages: stream, first event id and
// creation time.
func (l Ledger) String() string {
	first := l.FirstID
	if first == "" {
		first = "none yet"
	}
	return fmt.Sprintf("stream %s, first event %s, created %s", l.Stream, first, l.Created.UTC().Format(time.RFC3339Nano))
}

// Same reports whether l and o are the same ledger: same stream name and
// creation time, and the same first event id when both know one (a
// ledger read while still empty has none).
func (l Ledger) Same(o Ledger) bool {
	if l.Stream != o.Stream || !l.Created.Equal(o.Created) {
		return false
	}
	return l.FirstID == "" || o.FirstID == "" || l.FirstID == o.FirstID
}

// ArchivedHint is what to tell someone who looks for a turn or a session
// st does not hold when st's stream continues an archived one (created
// with a first sequence past 1): that older history is in the archive.
// It is "" for a stream that starts at 1, or when the stream cannot be
// asked.
func ArchivedHint(ctx context.Context, st Store) string {
	l, err := st.Ledger(ctx)
	if err != nil {
		return ""
	}
	return l.ArchivedHint()
}

// ArchivedHint is [ArchivedHint] for a ledger already read.
func (l Ledger) ArchivedHint() string {
	if l.FirstSeq <= 1 {
		return ""
	}
	return fmt.Sprintf("this stream starts at sequence %d, continuing an archived one: what came before is in the archive (mount it: docs/operations.md, \"Mount an archive\")", l.FirstSeq)
}
