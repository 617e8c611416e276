package events

import (
	"time"

	"github.com/nats-io/nats.go"
)

// ConnOf is the NATS connection of a JetStream store, for the tests that
// look at the stream beside the store (the store itself exposes none);
// nil for any other store.
func ConnOf(s Store) *nats.Conn {
	if js, ok := s.(*store); ok {
		return js.nc
	}
	return nil
}

// CheckFastDecode compares the fast decode path with go-json's on one
// stored message (see checkFastDecode); taken reports whether the fast
// path took it.
func CheckFastDecode(r *Registry, data []byte, seq uint64, subject string) (taken bool, err error) {
	return checkFastDecode(r, data, seq, subject)
}

// StallFirstMessage makes every ordered read give up waiting for its
// first message at once and go on with direct gets (scanOrdered's way
// past a stalled consumer), until the test ends.
func StallFirstMessage(t interface{ Cleanup(func()) }) {
	was := firstMsgWait
	firstMsgWait = time.Nanosecond
	t.Cleanup(func() { firstMsgWait = was })
}

// PurgeOrphanSnapshotChunksAtOnce makes every snapshot save purge the
// chunks no object names however young they are, until the test ends.
func PurgeOrphanSnapshotChunksAtOnce(t interface{ Cleanup(func()) }) {
	was := snapshotOrphanAge
	snapshotOrphanAge = 0
	t.Cleanup(func() { snapshotOrphanAge = was })
	CollectSnapshotChunksEverySave(t)
}

// CollectSnapshotChunksEverySave makes every snapshot save look for
// chunks no object names (not once a minute), until the test ends.
func CollectSnapshotChunksEverySave(t interface{ Cleanup(func()) }) {
	was := chunkCollectEvery
	chunkCollectEvery = 0
	t.Cleanup(func() { chunkCollectEvery = was })
}

// CheckIdleCursorsAtOnce makes a cursor's quiet fetches ask whether its
// consumer is still there every time (after the first), until the test
// ends.
func CheckIdleCursorsAtOnce(t interface{ Cleanup(func()) }) {
	was := cursorIdleCheck
	cursorIdleCheck = 0
	t.Cleanup(func() { cursorIdleCheck = was })
}

// SpaceReadStallLines spaces the store's stalled-read log lines by d
// instead of 10 s until the test ends.
func SpaceReadStallLines(t interface{ Cleanup(func()) }, d time.Duration) {
	was := readStallLogEvery
	readStallLogEvery = d
	t.Cleanup(func() { readStallLogEvery = was })
}
