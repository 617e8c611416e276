package events

import (
	"context"
	"fmt"
)

// Ledger implements [Store]: one stream-info request and, when the stream
// is not empty, one message get of its first sequence (1, or the first_seq
// of a stream continuing an archived one; its Nats-Msg-Id header),
// both answered by the stream leader and retried like every read while
// the stream is unavailable (an election).
func (s *store) Ledger(ctx context.Context) (Ledger, error) {
	if s.isClosed() {
		return Ledger{}, ErrClosed
	}
	var l Ledger
	err := s.retrying(ctx, "read the ledger fingerprint", "", func(ctx context.Context) error {
		info, err := s.stream.Info(ctx)
		if err != nil {
			return fmt.Errorf("events: read the ledger fingerprint: stream %s: %w", StreamName, err)
		}
		if err := s.replaced(ctx, info); err != nil {
			// Not the ledger this process folded: nothing it writes (a
			// snapshot) may be labelled with the new one's fingerprint.
			return fmt.Errorf("events: read the ledger fingerprint: %w", err)
		}
		l = Ledger{Stream: info.Config.Name, Created: info.Created.UTC(), LastSeq: info.State.LastSeq, FirstSeq: s.firstSeq()}
		if info.State.Msgs == 0 { // a first_seq stream reports first_seq-1
			l.LastSeq = 0
			return nil
		}
		m, err := s.leaderGet(ctx, msgGet{Seq: s.firstSeq()})
		if err != nil {
			return fmt.Errorf("events: read the ledger fingerprint: first message of %s: %w", StreamName, err)
		}
		// No message at the first sequence is not expected (the stream denies deletes and
		// purges): the creation time alone identifies the ledger then.
		if m != nil {
			l.FirstID = m.MsgID
		}
		return nil
	})
	return l, err
}
