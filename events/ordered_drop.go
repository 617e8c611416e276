package events

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// dropOrdered deletes, in the background, the server's consumer behind an
// ordered consumer whose reader has stopped. The client's Stop leaves it
// to the server, which deletes it after its inactivity threshold (five
// minutes), and a stream holds at most 1,000 consumers unless the server
// is configured otherwise: a gateway reading finished turns back a few
// times a second would otherwise reach that limit within minutes, after
// which every new read, follow and engine start fails until the leftovers
// expire. A consumer not created yet, or one the client is recreating,
// has nothing to delete or is deleted by the client itself. Failures are
// ignored: the threshold remains the backstop (a process killed mid-read
// leaves its consumers to it). Close waits for the deletes in flight.
func (s *store) dropOrdered(cons jetstream.Consumer) { s.stopAndDrop(nil, cons) }

// stopAndDrop runs stop (the client's Stop of an ordered consumer's
// iteration, which may wait while the client recreates the consumer), then
// dropOrdered's delete, on a goroutine Close waits for (a bounded time).
func (s *store) stopAndDrop(stop func(), cons jetstream.Consumer) {
	s.drops.mu.Lock()
	s.drops.n++
	s.drops.mu.Unlock()
	go func() {
		defer func() {
			s.drops.mu.Lock()
			s.drops.n--
			s.drops.mu.Unlock()
		}()
		if stop != nil {
			stop()
		}
		info := cons.CachedInfo()
		if info == nil || info.Name == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
		defer cancel()
		_ = s.stream.DeleteConsumer(ctx, info.Name)
	}()
}

// pendingDrops counts the consumer deletes in flight (stopAndDrop).
type pendingDrops struct {
	mu sync.Mutex
	n  int
}

// waitDrops waits until no consumer delete is in flight, or for d: Close
// lets the deletes reach the server before it closes the connection (a
// clean stop then leaves no consumer behind), without hanging on a server
// that does not answer.
func (s *store) waitDrops(d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s.drops.mu.Lock()
		n := s.drops.n
		s.drops.mu.Unlock()
		if n == 0 {
			return
		}
	}
}
