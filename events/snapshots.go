package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SnapshotBucket is the JetStream object store that keeps engine
// snapshots, next to the FLEDGER stream (one object per agent).
const SnapshotBucket = "FLEDGER_SNAPSHOTS"

// ErrNoSnapshot: no snapshot is stored for the agent.
var ErrNoSnapshot = errors.New("events: no snapshot stored")

// ErrBadSnapshot is wrapped by a LoadSnapshot error for a stored object
// that is not a snapshot fledger wrote (its metadata does not say at
// which sequence it was taken): an engine discards it, and replay
// --verify reports it as a failed check.
var ErrBadSnapshot = errors.New("events: stored snapshot unreadable")

// Snapshots keeps one engine snapshot per agent where it survives
// restarts: the JetStream store in the object store [SnapshotBucket] on
// the same server (created on the first save, replicated like the
// stream), the in-memory store in memory. A snapshot is opaque bytes to
// the store; seq is the stream sequence it was taken at. Both stores
// returned by [Open] and [OpenMemory] implement it; a Store wrapper that
// does not simply has no snapshots.
type Snapshots interface {
	// LoadSnapshot returns agent's stored snapshot and its seq, or an
	// error wrapping ErrNoSnapshot.
	LoadSnapshot(ctx context.Context, agent string) ([]byte, uint64, error)
	// SaveSnapshot stores data, taken at seq, as agent's snapshot unless
	// the stored one is at seq or later (saved false): several engines
	// of one agent save without coordinating, and an older snapshot never
	// replaces a newer one once seen.
	SaveSnapshot(ctx context.Context, agent string, seq uint64, data []byte) (saved bool, err error)
	// SnapshotAgents lists the agents with a stored snapshot, sorted.
	SnapshotAgents(ctx context.Context) ([]string, error)
}

// SnapshotDeleter is a store whose stored snapshots can be removed (both
// stores [Open] and [OpenMemory] return are): the way out of a snapshot
// `replay --verify` found wrong, after which the next engine of the agent
// folds from the stream's first sequence.
type SnapshotDeleter interface {
	// DeleteSnapshot removes agent's stored snapshot and returns its seq;
	// an agent without one gives an error wrapping ErrNoSnapshot.
	DeleteSnapshot(ctx context.Context, agent string) (seq uint64, err error)
}

// SnapshotStat is a store that tells what snapshot it holds for an agent
// without reading it (both stores [Open] and [OpenMemory] return are).
type SnapshotStat interface {
	// StatSnapshot returns the sequence and size of agent's stored
	// snapshot: an error wrapping ErrNoSnapshot when there is none, one
	// wrapping ErrBadSnapshot (size still given) when its metadata does
	// not read.
	StatSnapshot(ctx context.Context, agent string) (seq, size uint64, err error)
}

// snapshotSeqMeta is the object metadata key holding a snapshot's seq;
// snapshotStreamMeta the creation time of the stream it was taken on.
const (
	snapshotSeqMeta    = "seq"
	snapshotStreamMeta = "stream_created"
)

// snapshotBucket opens the snapshot object store, creating it when create
// is set (replicas and storage as the stream's). Without create a missing
// bucket is ErrNoSnapshot.
func (s *store) snapshotBucket(ctx context.Context, create bool) (jetstream.ObjectStore, error) {
	obs, err := s.js.ObjectStore(ctx, SnapshotBucket)
	if err == nil {
		return obs, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("events: open object store %s: %w", SnapshotBucket, err)
	}
	if !create {
		return nil, fmt.Errorf("%w: object store %s does not exist", ErrNoSnapshot, SnapshotBucket)
	}
	// Created, never updated: the writer needs $JS.API.STREAM.CREATE of
	// the bucket's stream only. Another writer creating it at the same
	// time is no error: its bucket is opened.
	info := s.stream.CachedInfo().Config
	obs, err = s.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: SnapshotBucket,
		Description: "fledger engine snapshots (one per agent)", Replicas: max(info.Replicas, 1), Storage: info.Storage})
	if errors.Is(err, jetstream.ErrBucketExists) {
		obs, err = s.js.ObjectStore(ctx, SnapshotBucket)
	}
	if err != nil {
		return nil, fmt.Errorf("events: create object store %s: %w", SnapshotBucket, err)
	}
	return obs, nil
}

// snapshotConcerns accepts the subjects the snapshot store sends: the
// API of its stream, and its objects' subjects.
var snapshotConcerns = jsConcerns("OBJ_"+SnapshotBucket, "$O."+SnapshotBucket+".>")

// snapshotOp runs one operation of the snapshot store as the stream's
// are run: an object store that does not answer (an election, a bucket
// created a moment ago whose direct gets have no responders yet) is asked
// again within the retry time, each attempt bounded by ctx only (a large
// snapshot's chunks take their time), then the error is an
// *[UnavailableError]; a subject of the object store the server refuses
// this user fails it at once with a *[PermissionError].
func (s *store) snapshotOp(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	return s.retryingConcerning(ctx, op, "OBJ_"+SnapshotBucket, 0, snapshotConcerns, fn)
}

// LoadSnapshot implements [Snapshots] (snapshotOp).
func (s *store) LoadSnapshot(ctx context.Context, agent string) (data []byte, seq uint64, err error) {
	err = s.snapshotOp(ctx, fmt.Sprintf("load the snapshot of agent %q from object store %s", agent, SnapshotBucket),
		func(ctx context.Context) error {
			data, seq, err = s.loadSnapshot(ctx, agent)
			return err
		})
	return data, seq, err
}

func (s *store) loadSnapshot(ctx context.Context, agent string) ([]byte, uint64, error) {
	obs, err := s.snapshotBucket(ctx, false)
	if err != nil {
		return nil, 0, err
	}
	name := EncodeToken(agent)
	res, err := obs.Get(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, 0, fmt.Errorf("%w: agent %q", ErrNoSnapshot, agent)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("events: get snapshot of agent %q: %w", agent, err)
	}
	defer res.Close()
	info, err := res.Info()
	if err != nil {
		return nil, 0, fmt.Errorf("events: get snapshot of agent %q: %w", agent, err)
	}
	seq, err := strconv.ParseUint(info.Metadata[snapshotSeqMeta], 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: snapshot of agent %q: metadata seq %q: %v", ErrBadSnapshot, agent, info.Metadata[snapshotSeqMeta], err)
	}
	data, err := io.ReadAll(res)
	if err != nil {
		return nil, 0, fmt.Errorf("events: read snapshot of agent %q: %w", agent, err)
	}
	return data, seq, nil
}

// SaveSnapshot implements [Snapshots]. The object store has no
// compare-and-set: the stored seq is read first, so two engines saving at
// once may both write, the later write winning; either is a whole,
// valid snapshot (an object is replaced as one). Run by snapshotOp: a
// save re-sent after an unanswered attempt writes the same object again.
func (s *store) SaveSnapshot(ctx context.Context, agent string, seq uint64, data []byte) (saved bool, err error) {
	err = s.snapshotOp(ctx, fmt.Sprintf("save the snapshot of agent %q in object store %s", agent, SnapshotBucket),
		func(ctx context.Context) error {
			saved, err = s.saveSnapshot(ctx, agent, seq, data)
			return err
		})
	return saved, err
}

func (s *store) saveSnapshot(ctx context.Context, agent string, seq uint64, data []byte) (bool, error) {
	obs, err := s.snapshotBucket(ctx, true)
	if err != nil {
		return false, err
	}
	name := EncodeToken(agent)
	// The stream this store opened, not CachedInfo's: that is refreshed
	// by every stream info, a replaced stream's too.
	created := s.openedNow().Created.UTC().Format(time.RFC3339Nano)
	info, err := obs.GetInfo(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
	case err != nil:
		return false, fmt.Errorf("events: snapshot info of agent %q: %w", agent, err)
	default:
		// Only a snapshot of this very stream at seq or later stands: one
		// left by another incarnation of the stream (a backup restored in
		// its place, a stream removed and created again) is replaced,
		// whatever its seq, or it would keep every engine folding from
		// sequence 1.
		have, perr := strconv.ParseUint(info.Metadata[snapshotSeqMeta], 10, 64)
		if perr == nil && have >= seq && info.Metadata[snapshotStreamMeta] == created {
			return false, nil
		}
	}
	meta := jetstream.ObjectMeta{Name: name, Description: "engine snapshot of agent " + agent,
		Metadata: map[string]string{snapshotSeqMeta: strconv.FormatUint(seq, 10), snapshotStreamMeta: created}}
	if _, err := obs.Put(ctx, meta, bytes.NewReader(data)); err != nil {
		return false, fmt.Errorf("events: put snapshot of agent %q: %w", agent, err)
	}
	s.collectOrphanChunks(ctx, obs)
	return true, nil
}

// DeleteSnapshot implements [SnapshotDeleter] (snapshotOp): the object
// is marked deleted and its chunks purged, so no engine loads it and
// SnapshotAgents no longer lists it. It needs the writer's credentials.
func (s *store) DeleteSnapshot(ctx context.Context, agent string) (seq uint64, err error) {
	var sent struct {
		ok  bool
		seq uint64
	}
	err = s.snapshotOp(ctx, fmt.Sprintf("delete the snapshot of agent %q from object store %s", agent, SnapshotBucket),
		func(ctx context.Context) error {
			seq, err = s.deleteSnapshot(ctx, agent, &sent)
			return err
		})
	return seq, err
}

// deleteSnapshot deletes agent's object. sent records, across the
// attempts of one DeleteSnapshot, that a delete was sent and the seq its
// object had: an attempt re-sent after one left unanswered finds the
// object gone and reports that removal, not ErrNoSnapshot.
func (s *store) deleteSnapshot(ctx context.Context, agent string, sent *struct {
	ok  bool
	seq uint64
}) (uint64, error) {
	obs, err := s.snapshotBucket(ctx, false)
	if err != nil {
		return 0, err // no bucket: ErrNoSnapshot
	}
	name := EncodeToken(agent)
	info, err := obs.GetInfo(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		if sent.ok {
			return sent.seq, nil
		}
		return 0, fmt.Errorf("%w: agent %q", ErrNoSnapshot, agent)
	}
	if err != nil {
		return 0, fmt.Errorf("events: snapshot info of agent %q: %w", agent, err)
	}
	seq, _ := strconv.ParseUint(info.Metadata[snapshotSeqMeta], 10, 64) // 0: not fledger's metadata
	sent.ok, sent.seq = true, seq
	if err := obs.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return 0, fmt.Errorf("events: delete snapshot of agent %q: %w", agent, err)
	}
	return seq, nil
}

// StatSnapshot implements [SnapshotStat] (snapshotOp): the object's info,
// not its chunks.
func (s *store) StatSnapshot(ctx context.Context, agent string) (seq, size uint64, err error) {
	err = s.snapshotOp(ctx, fmt.Sprintf("look up the snapshot of agent %q in object store %s", agent, SnapshotBucket),
		func(ctx context.Context) error {
			obs, err := s.snapshotBucket(ctx, false)
			if err != nil {
				return err // no bucket: ErrNoSnapshot
			}
			info, err := obs.GetInfo(ctx, EncodeToken(agent))
			if errors.Is(err, jetstream.ErrObjectNotFound) {
				return fmt.Errorf("%w: agent %q", ErrNoSnapshot, agent)
			}
			if err != nil {
				return fmt.Errorf("events: snapshot info of agent %q: %w", agent, err)
			}
			size = info.Size
			seq, err = strconv.ParseUint(info.Metadata[snapshotSeqMeta], 10, 64)
			if err != nil {
				return fmt.Errorf("%w: snapshot of agent %q: metadata seq %q: %v", ErrBadSnapshot, agent, info.Metadata[snapshotSeqMeta], err)
			}
			return nil
		})
	return seq, size, err
}

// SnapshotAgents implements [Snapshots] (snapshotOp).
func (s *store) SnapshotAgents(ctx context.Context) (agents []string, err error) {
	err = s.snapshotOp(ctx, "list the snapshots of object store "+SnapshotBucket,
		func(ctx context.Context) error {
			agents, err = s.snapshotAgents(ctx)
			return err
		})
	return agents, err
}

func (s *store) snapshotAgents(ctx context.Context) ([]string, error) {
	obs, err := s.snapshotBucket(ctx, false)
	if errors.Is(err, ErrNoSnapshot) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	infos, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("events: list snapshots: %w", err)
	}
	out := make([]string, 0, len(infos))
	for _, in := range infos {
		a, err := DecodeToken(in.Name)
		if err != nil {
			return nil, fmt.Errorf("events: snapshot object %q: %w", in.Name, err)
		}
		out = append(out, a)
	}
	sort.Strings(out)
	return out, nil
}

// memSnapshots is the in-memory store's [Snapshots]: kept with the store,
// dropped with it.
type memSnapshots struct {
	mu   sync.Mutex
	byAg map[string]memSnapshot
}

type memSnapshot struct {
	seq  uint64
	data []byte
}

// LoadSnapshot implements [Snapshots].
func (m *memStore) LoadSnapshot(ctx context.Context, agent string) ([]byte, uint64, error) {
	if m.isClosed() {
		return nil, 0, ErrClosed
	}
	m.snaps.mu.Lock()
	defer m.snaps.mu.Unlock()
	s, ok := m.snaps.byAg[agent]
	if !ok {
		return nil, 0, fmt.Errorf("%w: agent %q", ErrNoSnapshot, agent)
	}
	return append([]byte(nil), s.data...), s.seq, nil
}

// SaveSnapshot implements [Snapshots].
func (m *memStore) SaveSnapshot(ctx context.Context, agent string, seq uint64, data []byte) (bool, error) {
	if m.isClosed() {
		return false, ErrClosed
	}
	m.snaps.mu.Lock()
	defer m.snaps.mu.Unlock()
	if s, ok := m.snaps.byAg[agent]; ok && s.seq >= seq {
		return false, nil
	}
	if m.snaps.byAg == nil {
		m.snaps.byAg = map[string]memSnapshot{}
	}
	m.snaps.byAg[agent] = memSnapshot{seq: seq, data: append([]byte(nil), data...)}
	return true, nil
}

// SnapshotAgents implements [Snapshots].
func (m *memStore) SnapshotAgents(ctx context.Context) ([]string, error) {
	if m.isClosed() {
		return nil, ErrClosed
	}
	m.snaps.mu.Lock()
	defer m.snaps.mu.Unlock()
	return slices.Sorted(maps.Keys(m.snaps.byAg)), nil
}

// DeleteSnapshot implements [SnapshotDeleter].
func (m *memStore) DeleteSnapshot(ctx context.Context, agent string) (uint64, error) {
	if m.isClosed() {
		return 0, ErrClosed
	}
	m.snaps.mu.Lock()
	defer m.snaps.mu.Unlock()
	s, ok := m.snaps.byAg[agent]
	if !ok {
		return 0, fmt.Errorf("%w: agent %q", ErrNoSnapshot, agent)
	}
	delete(m.snaps.byAg, agent)
	return s.seq, nil
}

// StatSnapshot implements [SnapshotStat].
func (m *memStore) StatSnapshot(ctx context.Context, agent string) (uint64, uint64, error) {
	if m.isClosed() {
		return 0, 0, ErrClosed
	}
	m.snaps.mu.Lock()
	defer m.snaps.mu.Unlock()
	s, ok := m.snaps.byAg[agent]
	if !ok {
		return 0, 0, fmt.Errorf("%w: agent %q", ErrNoSnapshot, agent)
	}
	return s.seq, uint64(len(s.data)), nil
}
