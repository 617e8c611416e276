package engine

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
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
}

func defaultOptions() options {
	return options{clock: RealClock{}, seeds: randomSeed, retries: DefaultConflictRetries, rules: policy.CurrentRules}
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
