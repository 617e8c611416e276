package serve

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/fledger/fledger/engine"
)

// DefaultMaintenanceEvery is how often a server runs session maintenance
// when it is on (Config.SessionMaintenance) and no interval is given.
const DefaultMaintenanceEvery = time.Hour

// SessionMaintenance turns on OpenClaw's `session.maintenance` in enforce
// mode for every served agent: every Every (DefaultMaintenanceEvery when
// 0), and once at start, each agent's engine prunes the sessions idle
// for longer than PruneAfter ([engine.Engine.PruneSessions]). Several
// servers on one stream may all run it: each session is pruned once
// (the prune is guarded by the session's subject).
type SessionMaintenance struct {
	PruneAfter time.Duration
	Every      time.Duration
	// Workers is how many prunes run at once per agent (0 = the
	// engine's default).
	Workers int
}

// Check refuses an age under [engine.MinPruneAfter] or a negative
// interval.
func (m SessionMaintenance) Check() error {
	if m.PruneAfter < engine.MinPruneAfter {
		return fmt.Errorf("serve: session maintenance: the age to prune after must be at least %s, got %s", engine.MinPruneAfter, m.PruneAfter)
	}
	if m.Every < 0 {
		return fmt.Errorf("serve: session maintenance: interval %s is negative", m.Every)
	}
	return nil
}

// every is the interval between passes.
func (m SessionMaintenance) every() time.Duration {
	if m.Every == 0 {
		return DefaultMaintenanceEvery
	}
	return m.Every
}

// maintainer runs session maintenance in the background until stopped.
type maintainer struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startMaintenance starts the maintenance loop over the service's
// engines (nil when it is off).
func (s *Service) startMaintenance(m *SessionMaintenance) *maintainer {
	if m == nil || s.cfg.ReadOnly {
		return nil
	}
	every := m.every()
	ctx, cancel := context.WithCancel(context.Background())
	mt := &maintainer{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(mt.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.maintain(ctx, *m)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return mt
}

// stop ends the loop, cancelling a run in progress (what it pruned so
// far stays pruned; the next start goes on).
func (mt *maintainer) stop() {
	if mt == nil {
		return
	}
	mt.cancel()
	<-mt.done
}

// maintain runs one maintenance pass over every served agent, logging
// what it pruned and what failed.
func (s *Service) maintain(ctx context.Context, m SessionMaintenance) {
	for _, a := range s.cfg.Agents {
		start := time.Now()
		rep, err := s.engines[a].PruneSessions(ctx, engine.PruneOptions{After: m.PruneAfter, Workers: m.Workers})
		if ctx.Err() != nil {
			if rep != nil && len(rep.Pruned)+rep.Unsettled > 0 {
				s.cfg.Log.Info("session maintenance stopped by the shutdown; the next start goes on", "agent", a,
					"pruned", len(rep.Pruned), "in_flight", rep.Unsettled)
			}
			return
		}
		if err != nil {
			pruned := 0
			if rep != nil {
				pruned = len(rep.Pruned)
			}
			s.cfg.Log.Warn("session maintenance failed; it runs again at the next interval", "agent", a, "pruned_before_failing", pruned, "err", err)
			continue
		}
		if len(rep.Pruned) > 0 || rep.Kept > 0 || rep.Elsewhere > 0 {
			s.cfg.Log.Info("session maintenance", "agent", a, "pruned", len(rep.Pruned), "kept", rep.Kept, "elsewhere", rep.Elsewhere,
				"running", rep.Running, "sessions_before", rep.Sessions, "cutoff", rep.Cutoff, "took", time.Since(start).Round(time.Millisecond))
		}
	}
}

// logMaintenance says at start whether session maintenance is on.
func logMaintenance(log *slog.Logger, m *SessionMaintenance) {
	if m == nil {
		return
	}
	every := m.every()
	log.Info("session maintenance on: sessions idle longer than the age are pruned", "prune_after", m.PruneAfter, "every", every)
}
