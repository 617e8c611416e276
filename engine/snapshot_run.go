package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fledger/fledger/events"
)

// snapshotSaveTimeout bounds the snapshot Close saves.
const snapshotSaveTimeout = 5 * time.Second

// closeSaveSkipped is how many sequences of other agents' commits folded
// since the last snapshot make Close save one (stopSnapshots): reading
// that many again to skip them takes a few milliseconds.
const closeSaveSkipped = 1024

// startState is the state an engine starts from: its agent's stored
// snapshot when there is one this engine can use (snapshot.go check),
// otherwise an empty state that folds from sequence 1. A snapshot that
// cannot be used is discarded with one log line saying why.
func (e *Engine) startState(ctx context.Context) *state {
	fresh := newState(e.agent)
	fresh.keep = e.opt.keepFinished
	ss, ok := e.store.(events.Snapshots)
	if !ok {
		return fresh
	}
	if e.opt.snapshotEvery == 0 {
		e.opt.logger.Info("engine: snapshots off (snapshot every 0 sequences): folding from sequence 1, none saved", "agent", e.agent)
		return fresh
	}
	data, storedSeq, err := ss.LoadSnapshot(ctx, e.agent)
	if errors.Is(err, events.ErrNoSnapshot) {
		return fresh
	}
	discard := func(seq uint64, why error) *state {
		if ctx.Err() != nil {
			return fresh // interrupted while loading it (a start cancelled): nothing was discarded
		}
		attrs := []any{"agent", e.agent}
		if seq > 0 { // 0: the snapshot did not read as far as its sequence
			attrs = append(attrs, "seq", seq)
		}
		e.opt.logger.Warn("engine: snapshot discarded, folding from sequence 1", append(attrs, "reason", why.Error())...)
		return fresh
	}
	if err != nil {
		return discard(0, err)
	}
	sn, err := DecodeSnapshot(data)
	if err != nil {
		seq := uint64(0)
		if sn != nil {
			seq = sn.Seq
		}
		return discard(seq, err)
	}
	if sn.Seq != storedSeq {
		// What replay --verify reports as a problem: the object's
		// metadata and its content disagree.
		return discard(sn.Seq, fmt.Errorf("stored at seq %d, the snapshot says %d", storedSeq, sn.Seq))
	}
	l, err := e.store.Ledger(ctx)
	if err != nil {
		return discard(sn.Seq, err)
	}
	if err := sn.check(e.agent, e.opt.keepFinished, l); err != nil {
		return discard(sn.Seq, err)
	}
	st, err := restoreState(e.agent, e.opt.keepFinished, sn)
	if err != nil {
		return discard(sn.Seq, err)
	}
	e.opt.logger.Info("engine: started from snapshot", "agent", e.agent, "seq", sn.Seq, "bytes", len(data))
	e.snapSeq.Store(sn.Seq)
	e.startedFrom = sn.Seq
	return st
}

// snapshotter takes the engine's snapshots in the background: the fold
// kicks it every snapshotEvery sequences (kickSnapshot); it copies the
// state under the read lock (capture) and encodes and writes it outside.
// A fold waiting for the lock meanwhile holds up the decisions that read
// after it, for as long as the copy takes (milliseconds at 10k sessions).
type snapshotter struct {
	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// startSnapshots starts the snapshotter when the engine takes snapshots
// and its store keeps them.
func (e *Engine) startSnapshots() {
	ss, ok := e.store.(events.Snapshots)
	if !ok || e.opt.snapshotEvery == 0 || e.opt.snapshotsReadOnly {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	sn := &snapshotter{kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	e.snaps = sn
	go func() {
		defer close(sn.done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sn.kick:
				e.saveSnapshot(ctx, ss)
			}
		}
	}()
	e.st.afterApply = e.kickSnapshot
}

// kickSnapshot asks for a snapshot once applied is snapshotEvery past the
// last one (never blocks: a kick pending is enough).
func (e *Engine) kickSnapshot(applied uint64) {
	if applied < max(e.snapSeq.Load()+e.opt.snapshotEvery, e.retryAt.Load()) {
		return
	}
	select {
	case e.snaps.kick <- struct{}{}:
	default:
	}
}

// stopSnapshots stops the snapshotter and, with save, saves a last
// snapshot when a commit of the agent's own was folded since the last one,
// or at least closeSaveSkipped sequences of other agents' commits were:
// the next start would read them all again to skip them (on a stream
// shared with busier agents, up to snapshotEvery of them), so the start-up
// of a quiet agent would depend on the others' traffic since its last
// snapshot.
func (e *Engine) stopSnapshots(save bool) {
	if e.snaps == nil {
		return
	}
	e.snaps.cancel()
	<-e.snaps.done
	if !save {
		return
	}
	e.st.mu.RLock()
	last := e.snapSeq.Load()
	// Other agents' commits alone count only for an agent that has a
	// snapshot or commits of its own: an engine of an agent with neither
	// (a misspelt --agent on a command that then failed) saves nothing.
	moved := e.st.lastMine > last || (last > 0 || e.st.lastMine > 0) && e.st.applied >= last+closeSaveSkipped
	e.st.mu.RUnlock()
	if !moved {
		return // nothing of the agent's own, and few others', since the last snapshot
	}
	ctx, cancel := context.WithTimeout(context.Background(), snapshotSaveTimeout)
	defer cancel()
	e.saveSnapshot(ctx, e.store.(events.Snapshots))
}

// saveSnapshot encodes the state and stores it unless it is not past the
// last snapshot (or the state failed). Failures are logged, and the next
// try waits another snapshotEvery sequences (retryAt): a store that
// refuses saves costs one try and one log line per period, not per
// commit. The state is copied under its read lock (the fold waits for
// that: the maps' copy, tens of milliseconds at 100k sessions); the
// encoding and the write run outside it.
func (e *Engine) saveSnapshot(ctx context.Context, ss events.Snapshots) {
	if e.rootRemoved.Load() || e.rootWasRemoved(ctx, ss) {
		return
	}
	l, err := e.store.Ledger(ctx)
	if err != nil {
		e.logSaveError(err)
		return
	}
	e.st.mu.RLock()
	if e.st.failed != nil || e.st.applied <= e.snapSeq.Load() {
		e.st.mu.RUnlock()
		return
	}
	c := e.st.capture()
	e.st.mu.RUnlock()
	data, seq, err := c.snapshot(l)
	if err != nil {
		e.logSaveError(err)
		return
	}
	saved, err := ss.SaveSnapshot(ctx, e.agent, seq, data)
	if err != nil {
		e.logSaveError(err)
		return
	}
	e.snapSeq.Store(seq)
	e.snapshots.Add(1)
	if saved {
		e.opt.logger.Debug("engine: snapshot saved", "agent", e.agent, "seq", seq, "bytes", len(data))
	}
}

// rootWasRemoved reports whether this engine started from a snapshot
// that is no longer stored: removed (`fledger snapshots rm`, after
// `replay --verify` found it wrong), so the state folded on it must not
// be saved again — at shutdown least of all, which is when an operator
// following the removal would stop it. Logged once; the engine goes on
// deciding until it is restarted, and then folds from the stream's first
// sequence. A store that cannot tell, or a look-up that fails, changes
// nothing (the save goes on, as before).
func (e *Engine) rootWasRemoved(ctx context.Context, ss events.Snapshots) bool {
	stat, ok := ss.(events.SnapshotStat)
	if e.startedFrom == 0 || !ok {
		return false
	}
	if _, _, err := stat.StatSnapshot(ctx, e.agent); !errors.Is(err, events.ErrNoSnapshot) {
		return false
	}
	if e.rootRemoved.CompareAndSwap(false, true) {
		e.opt.logger.Warn("engine: the snapshot this engine started from was removed: its state is not saved again; restart the engine to fold from the stream's first sequence",
			"agent", e.agent, "seq", e.startedFrom)
	}
	return true
}

func (e *Engine) logSaveError(err error) {
	if errors.Is(err, events.ErrClosed) || errors.Is(err, context.Canceled) {
		return
	}
	e.st.mu.RLock()
	e.retryAt.Store(e.st.applied + e.opt.snapshotEvery)
	e.st.mu.RUnlock()
	e.opt.logger.Warn("engine: snapshot not saved", "agent", e.agent, "err", err.Error())
}

// SnapshotSeq is the sequence of the last snapshot this engine started
// from or saved (0 = none).
func (e *Engine) SnapshotSeq() uint64 { return e.snapSeq.Load() }

// StartedFrom is the sequence of the snapshot the engine started from (0 =
// it folded from sequence 1).
func (e *Engine) StartedFrom() uint64 { return e.startedFrom }
