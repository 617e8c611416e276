package engine

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// DefaultConflictRetries bounds reload-and-decide-again after an append
// conflict (another writer appended to the guarded subject first).
const DefaultConflictRetries = 8

// Option configures an [Engine].
type Option func(*options) error

type options struct {
	clock    Clock
	seeds    func(turnID string) uint64
	retries  int
	registry *events.Registry
	// rules is the rule revision new turns start under (WithRules).
	rules policy.Rules
	// appendObserver: see WithAppendObserver (append_observer.go).
	appendObserver func(time.Duration)
	// keepFinished, snapshotEvery, logger: see WithFinishedTurns,
	// WithSnapshotEvery, WithLogger.
	keepFinished  int
	snapshotEvery uint64
	logger        *slog.Logger
	// snapshotsReadOnly: see WithSnapshotsReadOnly.
	snapshotsReadOnly bool
}

// DefaultFinishedTurns is how many finished turns an engine keeps in
// memory (the newest; [WithFinishedTurns]).
const DefaultFinishedTurns = 1024

// DefaultSnapshotEvery is how many stream sequences an engine folds
// between two snapshots ([WithSnapshotEvery]).
const DefaultSnapshotEvery = 16384

// WithFinishedTurns keeps the last k finished turns in memory (default
// [DefaultFinishedTurns], at least 1); older ones are evicted in stream
// order, the same on every engine and in [Fold], and looked up in the
// store when asked for. Every engine of an agent should use the same k: a
// snapshot taken with another is not loaded.
func WithFinishedTurns(k int) Option {
	return func(o *options) error {
		if k < 1 {
			return fmt.Errorf("%w: finished turns kept %d < 1", ErrBadRequest, k)
		}
		o.keepFinished = k
		return nil
	}
}

// WithSnapshotEvery takes a snapshot of the engine's state every n folded
// stream sequences, in the background, and one on Close (default
// [DefaultSnapshotEvery]; 0 = never take one, and start from sequence 1).
// Snapshots are kept by stores that implement [events.Snapshots].
func WithSnapshotEvery(n uint64) Option {
	return func(o *options) error {
		o.snapshotEvery = n
		return nil
	}
}

// WithSnapshotsReadOnly makes the engine start from its agent's stored
// snapshot as usual but never save one (`fledger view`, a reader: it
// records nothing, and a reader's credentials may not write).
func WithSnapshotsReadOnly() Option {
	return func(o *options) error {
		o.snapshotsReadOnly = true
		return nil
	}
}

// WithLogger sets the logger the engine reports snapshot loads, discards
// and saves to (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrBadRequest)
		}
		o.logger = l
		return nil
	}
}

func defaultOptions() options {
	return options{clock: RealClock{}, seeds: randomSeed, retries: DefaultConflictRetries, rules: policy.CurrentRules,
		keepFinished: DefaultFinishedTurns, snapshotEvery: DefaultSnapshotEvery, logger: slog.Default()}
}

// WithClock sets the clock (default [RealClock]).
func WithClock(c Clock) Option {
	return func(o *options) error {
		if c == nil {
			return fmt.Errorf("%w: nil clock", ErrBadRequest)
		}
		o.clock = c
		return nil
	}
}

// WithSeeds sets how a turn's jitter seed is drawn when the TurnRequest
// gives none (default: crypto/rand). The seed is recorded in
// TurnStarted.Seed, so replay is exact whatever the source; scenarios use
// a derived seed so their output is reproducible.
func WithSeeds(f func(turnID string) uint64) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: nil seed source", ErrBadRequest)
		}
		o.seeds = f
		return nil
	}
}

// WithRules starts new turns under rule revision r instead of
// [policy.CurrentRules] (recorded in TurnStarted.Rules; a turn keeps its
// revision for all its decisions). For a rolling upgrade, where every
// engine of an agent should start turns alike until all run the new
// build, and for tests of history written by earlier builds.
func WithRules(r policy.Rules) Option {
	return func(o *options) error {
		if r < policy.RulesV1 || r > policy.CurrentRules {
			return fmt.Errorf("%w: rule revision %d (this build decides %d to %d)", ErrBadRequest, r, policy.RulesV1, policy.CurrentRules)
		}
		o.rules = r
		return nil
	}
}

// WithConflictRetries bounds the reloads after append conflicts (default
// [DefaultConflictRetries]; at least 1).
func WithConflictRetries(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("%w: conflict retries %d < 1", ErrBadRequest, n)
		}
		o.retries = n
		return nil
	}
}

// WithRegistry names the registry the stream is decoded with. The engine
// follows the stream through the store, which decodes with the registry it
// was opened with ([events.WithRegistry]); r must be that one. Kept so
// callers that pass it need not change.
func WithRegistry(r *events.Registry) Option {
	return func(o *options) error {
		o.registry = r
		return nil
	}
}

func randomSeed(string) uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return binary.LittleEndian.Uint64(b[:])
}
