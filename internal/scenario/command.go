package scenario

import (
	"context"
	"fmt"
	"strings"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// command runs a command step through the engine entry point `fledger
// serve` uses for it, and reports the events it recorded.
func (r *runner) command(ctx context.Context, c *Command) (*CommandReport, error) {
	cr := &CommandReport{Session: c.Session, Text: commandText(c)}
	var (
		evs   []events.Event
		types []string
		err   error
	)
	eng := r.eng
	switch c.Do {
	case "model":
		m, prof := splitProfile(c.Model)
		var origin *events.ModelRef
		if c.Origin != "" {
			o := modelRef(c.Origin)
			origin = &o
		}
		evs, err = eng.SelectModel(ctx, c.Session, modelRef(m), orDefault(c.Source, string(policy.SourceUser)), origin, prof)
	case "model_default":
		evs, err = eng.ClearModel(ctx, c.Session, c.Agent)
	case "pin":
		evs, err = eng.PinProfile(ctx, c.Session, c.Profile, orDefault(c.Source, string(policy.PinUser)))
	case "new", "reset":
		evs, err = eng.Reset(ctx, c.Session, c.Do)
	case "sessions_reset":
		// The gateway's sessions.reset (POST …/reset without a kind):
		// what /reset records.
		evs, err = eng.Reset(ctx, c.Session, "reset")
	case "compaction":
		evs, err = eng.CompleteCompaction(ctx, c.Session)
	case "auth_order":
		evs, err = eng.SetAuthOrder(ctx, c.Provider, c.Profiles, "scenario")
	case "use":
		types, err = r.use(ctx, c)
	case "remove_profile":
		types, err = r.applyConfig(ctx, c)
	case "restart":
		err = r.restart(ctx)
	}
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	cr.Events = types
	if err != nil {
		cr.Error = err.Error()
	}
	return cr, err
}

// commandText is a command step in words, as the report shows it.
func commandText(c *Command) string {
	switch c.Do {
	case "model":
		if c.Origin != "" {
			return "/model " + c.Model + " (source " + orDefault(c.Source, string(policy.SourceUser)) + ", origin " + c.Origin + ")"
		}
		return "/model " + c.Model + " (source " + orDefault(c.Source, string(policy.SourceUser)) + ")"
	case "model_default":
		return "/model default"
	case "pin":
		return "pin " + c.Profile + " (" + orDefault(c.Source, string(policy.PinUser)) + ")"
	case "new", "reset":
		return "/" + c.Do
	case "sessions_reset":
		return "sessions.reset"
	case "compaction":
		return "compaction completed"
	case "auth_order":
		if len(c.Profiles) == 0 {
			return "auth order clear --provider " + c.Provider
		}
		return "auth order set --provider " + c.Provider + " " + strings.Join(c.Profiles, " ")
	case "use":
		return fmt.Sprintf("use %s on %s (warm-up turn %s)", c.Profile, c.Model, c.turnID)
	case "remove_profile":
		return "config change: profile " + c.Profile + " removed (config " + short(c.config.Hash) + "), gateway restarted"
	case "restart":
		return "gateway restart: a new engine on the same ledger"
	}
	return c.Do
}

// applyConfig applies the config a remove_profile step leaves in force, as
// `fledger serve` does when it is started again with a changed config
// (engine.ApplyConfig, then a new engine: what the engine keeps only in
// its process, the auth skip cache, is gone as after a restart).
func (r *runner) applyConfig(ctx context.Context, c *Command) ([]string, error) {
	_, applied, err := r.eng.ApplyConfig(ctx, ConfigSource(r.sc), c.config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", commandText(c), err)
	}
	if err := r.restart(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", commandText(c), err)
	}
	if !applied {
		return nil, nil
	}
	return []string{"ConfigApplied"}, nil
}

// restart replaces the engine by a new one on the same store and
// namespace, as a gateway restart does: whatever the engine keeps only in
// its process is gone, and the new engine folds its state from the ledger
// before the next step.
func (r *runner) restart(ctx context.Context) error {
	r.eng.Close()
	eng, err := engine.New(ctx, r.st, r.agent, r.opts...)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	r.eng = eng
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
