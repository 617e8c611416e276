package engine

import (
	"context"
	"errors"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/events"
)

// ApplyConfig records l as the agent's config in force: one ConfigApplied
// (key: the config hash), unless the agent's latest ConfigApplied already
// has that hash. The append is guarded by the last sequence of all the
// agent's config subjects (fledger.<agent>.config.>), so two concurrent
// applies cannot both believe theirs is the latest; on a conflict it
// reloads and decides again. It returns the stream sequence of the config
// now in force and whether it appended; the engine's state includes it
// when ApplyConfig returns.
func (e *Engine) ApplyConfig(ctx context.Context, source string, l *config.Loaded) (uint64, bool, error) {
	seq, applied, err := ApplyConfig(ctx, e.store, e.agent, source, l, e.opt.clock.Now())
	if err != nil {
		return 0, false, err
	}
	return seq, applied, e.st.waitApplied(ctx, seq)
}

// ApplyConfig is [Engine.ApplyConfig] without an engine (the CLI's
// `config apply`): now is the event's time.
func ApplyConfig(ctx context.Context, st events.Store, agent, source string, l *config.Loaded, now time.Time) (uint64, bool, error) {
	if err := CheckWritableAgent(ctx, st, agent); err != nil {
		return 0, false, err
	}
	filter, err := events.AggregateFilter(agent, events.AggConfig)
	if err != nil {
		return 0, false, err
	}
	subject, err := events.Subject(agent, events.AggConfig, l.Hash)
	if err != nil {
		return 0, false, err
	}
	var last error
	for try := 0; try <= DefaultConflictRetries; try++ {
		evs, seq, err := st.ReadSubject(ctx, filter)
		if err != nil {
			return 0, false, err
		}
		if n := len(evs); n > 0 {
			if cur, ok := evs[n-1].Data.(events.ConfigApplied); ok && l.SameAs(cur.Hash, cur.Config) {
				return seq, false, nil
			}
		}
		ev := events.New(agent, l.Hash, now, events.ConfigApplied{
			Hash:     l.Hash,
			Config:   l.Canonical,
			Source:   source,
			Warnings: warningStrings(l.Warnings),
		})
		res, err := st.AppendGuarded(ctx, subject, filter, seq, ev)
		if errors.Is(err, events.ErrConflict) {
			last = err
			continue
		}
		if err != nil {
			return 0, false, err
		}
		return res.Seq, true, nil
	}
	return 0, false, &ConflictRetriesError{Subject: filter, Tries: DefaultConflictRetries + 1, Last: last}
}

func warningStrings(ps []config.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}
