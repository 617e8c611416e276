package events

// Placeholders of the new Store methods on the JetStream store, replaced
// by their implementations in the same change.

import (
	"context"
	"errors"
	"iter"
)

var errPending = errors.New("events: not implemented yet")

func (s *store) Follow(ctx context.Context, opts FollowOptions) iter.Seq2[StoredCommit, error] {
	return func(yield func(StoredCommit, error) bool) { yield(StoredCommit{}, errPending) }
}

func (s *store) Cursor(ctx context.Context, opts CursorOptions) (Cursor, error) {
	return nil, errPending
}

func (s *store) Ledger(ctx context.Context) (Ledger, error) { return Ledger{}, errPending }
