package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// An object is its chunks (messages on $O.<bucket>.C.<nuid>) and its
// meta, written last. Replacing an object purges the chunks of the one it
// read before writing, so two saves of one agent racing (two instances
// cross the same save boundary together) leave the chunks of the one
// that lost, which no object names; so does a save killed before its meta.
// Nothing else would ever remove them: the bucket would grow by a whole
// snapshot per race. After each save the store purges such chunks, once
// their last message is older than snapshotOrphanAge: younger ones may be
// a save still writing (its meta not yet stored).

// snapshotOrphanAge is how old the last chunk of an object no meta names
// must be before it is purged: far longer than any save takes.
var snapshotOrphanAge = 10 * time.Minute

// chunkCollectEvery is how often, at most, a store looks for such chunks
// after its saves.
var chunkCollectEvery = time.Minute

// chunkPrefix is the subject prefix of the snapshot objects' chunks.
const chunkPrefix = "$O." + SnapshotBucket + ".C."

// purgeOrphanChunks purges the chunk subjects of the snapshot object
// store that no stored object names and whose last message is older than
// snapshotOrphanAge, and returns how many it purged. Ages are taken on
// the server's clock, not this host's (which may be ahead): against the
// latest meta the bucket holds, the one the save before this call wrote.
func (s *store) purgeOrphanChunks(ctx context.Context, obs jetstream.ObjectStore) (int, error) {
	str, err := s.js.Stream(ctx, "OBJ_"+SnapshotBucket)
	if err != nil {
		return 0, fmt.Errorf("stream info: %w", err)
	}
	info, err := str.Info(ctx, jetstream.WithSubjectFilter(chunkPrefix+">"))
	if err != nil {
		return 0, fmt.Errorf("stream info: %w", err)
	}
	objs, err := obs.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, fmt.Errorf("list objects: %w", err)
	}
	live := make(map[string]bool, len(objs))
	var now time.Time // the server's time of the latest meta stored
	for _, o := range objs {
		live[chunkPrefix+o.NUID] = true
		if o.ModTime.After(now) {
			now = o.ModTime
		}
	}
	if now.IsZero() {
		return 0, nil // no object: nothing tells the server's time
	}
	var orphans []string
	for subj := range info.State.Subjects {
		if strings.HasPrefix(subj, chunkPrefix) && !live[subj] {
			orphans = append(orphans, subj)
		}
	}
	slices.Sort(orphans)
	purged := 0
	for _, subj := range orphans {
		m, err := str.GetLastMsgForSubject(ctx, subj)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // purged meanwhile (by another instance)
		}
		if err != nil {
			return purged, fmt.Errorf("last chunk of %s: %w", subj, err)
		}
		if now.Sub(m.Time) < snapshotOrphanAge {
			continue
		}
		if err := str.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
			return purged, fmt.Errorf("purge %s: %w", subj, err)
		}
		purged++
	}
	return purged, nil
}

// collectOrphanChunks is purgeOrphanChunks after a save: what it purged
// is logged, and a failure too, without failing the save (the snapshot
// is stored; the next save tries again).
func (s *store) collectOrphanChunks(ctx context.Context, obs jetstream.ObjectStore) {
	// At most once per chunkCollectEvery per store (saves of many agents
	// come together), each bounded by the store's timeout: a background
	// save has no deadline of its own, and a stalled list must not hold
	// the agent's next saves.
	now := time.Now().UnixNano()
	if last := s.chunkCollected.Load(); last != 0 && now-last < int64(chunkCollectEvery) || !s.chunkCollected.CompareAndSwap(last, now) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	n, err := s.purgeOrphanChunks(ctx, obs)
	if s.cfg.logger == nil {
		return
	}
	if n > 0 {
		s.cfg.logger.Info("events: removed snapshot chunks no object names (left by racing or interrupted saves)",
			"bucket", SnapshotBucket, "objects", n)
	}
	if err != nil && ctx.Err() == nil {
		s.cfg.logger.Warn("events: could not remove snapshot chunks no object names; the next save tries again",
			"bucket", SnapshotBucket, "err", err)
	}
}
