package serve

import (
	"sync"

	"github.com/fledger/fledger/replay"
)

// timelineCacheSize bounds the answers [timelineCache] keeps.
const timelineCacheSize = 8

// timelineKey is what a timeline answer depends on besides the stream.
type timelineKey struct {
	agent, since, until string
	limit               int
}

// timelineCache keeps the last few timeline answers with the stream
// sequence each was folded to: asked again while the stream has not
// grown (an offline ledger under `fledger view` never does), the answer
// is the same, and the stream is not read again. Safe for concurrent use.
type timelineCache struct {
	mu      sync.Mutex
	entries []timelineEntry // most recent last
}

type timelineEntry struct {
	key timelineKey
	tl  *replay.RangeTimeline
}

// get is the answer for k folded to exactly lastSeq (nil: none).
func (c *timelineCache) get(k timelineKey, lastSeq uint64) *replay.RangeTimeline {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key == k && e.tl.LastSeq == lastSeq {
			return e.tl
		}
	}
	return nil
}

// put keeps tl for k, dropping the oldest answer beyond the bound.
func (c *timelineCache) put(k timelineKey, tl *replay.RangeTimeline) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, e := range c.entries {
		if e.key != k {
			kept = append(kept, e)
		}
	}
	c.entries = append(kept, timelineEntry{k, tl})
	if n := len(c.entries); n > timelineCacheSize {
		c.entries = append(c.entries[:0:0], c.entries[n-timelineCacheSize:]...)
	}
}
