package events

import (
	"context"
	"fmt"
)

// StreamSize is what the stream holds: its messages and JetStream's stored
// bytes (subject, headers, payload and the per-message record of each
// message, as `nats stream info` shows them), for sizing and growth
// figures (docs/operations.md, "Archiving and long history"). A store
// without a stream (the in-memory one) is an error wrapping
// [ErrNoConnection].
func StreamSize(ctx context.Context, st Store) (msgs, bytes uint64, err error) {
	s, ok := st.(*store)
	if !ok {
		return 0, 0, fmt.Errorf("events: stream size: %w", ErrNoConnection)
	}
	if s.isClosed() {
		return 0, 0, ErrClosed
	}
	err = s.retrying(ctx, "stream size", "", func(ctx context.Context) error {
		info, err := s.stream.Info(ctx)
		if err != nil {
			return fmt.Errorf("events: stream size: %w", err)
		}
		msgs, bytes = info.State.Msgs, info.State.Bytes
		return nil
	})
	return msgs, bytes, err
}
