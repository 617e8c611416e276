package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/replay"
)

// The incident viewer's reads (issue 21): GET /v1/timeline, GET
// /v1/turns/{turn_id}/explanation and POST /v1/what-if. The timeline
// reads the projections (projections.DB.Timeline); the explanation and
// the what-if read the stream through the same replay code as the CLI
// (`explain --json`, `replay --what-if --json`). None writes anything.

// TimelineRequest asks for one agent's timeline: GET /v1/timeline.
type TimelineRequest struct {
	// Agent ("" = the server's default agent).
	Agent string `json:"agent,omitempty"`
	// Since and Until, RFC 3339, bound the range ("" = the last hour of
	// the ledger: Until the agent's last event, Since Until − 1 h).
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
	// Limit bounds the turns (0 = replay.DefaultRangeTurns, at most
	// replay.MaxRangeTurns).
	Limit int `json:"limit,omitempty"`
}

// ExplanationRequest names a turn to explain: GET
// /v1/turns/{turn_id}/explanation.
type ExplanationRequest struct {
	TurnID string `json:"turn_id"`
	// Agent ("" = the server's default agent).
	Agent string `json:"agent,omitempty"`
}

// WhatIfRequest re-decides an agent's recorded turns under another
// config: POST /v1/what-if.
type WhatIfRequest struct {
	// Agent ("" = the server's default agent).
	Agent string `json:"agent,omitempty"`
	// Config is the other config file's text (YAML or JSON).
	Config string `json:"config"`
	// Since and Until, RFC 3339, keep the turns started in that range ("" =
	// unbounded).
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
}

// WhatIfReport is replay.WhatIf's report with only the turns whose
// outcome or answering model changes (or is unknown) in Changed.
type WhatIfReport struct {
	Agent      string `json:"agent"`
	Since      string `json:"since,omitempty"`
	Until      string `json:"until,omitempty"`
	ConfigHash string `json:"config_hash"`
	Turns      int    `json:"turns"`
	Unknown    int    `json:"unknown"`
	// PathChanges counts the turns whose path changes at all (the CLI's
	// changed list).
	PathChanges int            `json:"path_changes"`
	Changed     []WhatIfChange `json:"changed"`
}

// WhatIfChange is one turn whose outcome would change: replay's
// comparison plus the outcomes and answering models side by side.
type WhatIfChange struct {
	Agent           string      `json:"agent"`
	TurnID          string      `json:"turn_id"`
	Session         string      `json:"session"`
	StartedAt       string      `json:"started_at"`
	Recorded        replay.Path `json:"recorded"`
	WhatIf          replay.Path `json:"what_if"`
	RecordedOutcome string      `json:"recorded_outcome"`
	WhatIfOutcome   string      `json:"what_if_outcome"`
	RecordedModel   string      `json:"recorded_model"`
	WhatIfModel     string      `json:"what_if_model"`
	Unknown         bool        `json:"unknown"`
}

// Timeline reads an agent's profile windows and the turns started in a
// range (GET /v1/timeline), from the projections. Every configured
// profile of the agent has a lane, with or without windows.
func (s *Service) Timeline(ctx context.Context, r *TimelineRequest) (*replay.RangeTimeline, error) {
	e, agent, err := s.engine(r.Agent)
	if err != nil {
		return nil, err
	}
	since, until, err := parseRange(r.Since, r.Until)
	if err != nil {
		return nil, err
	}
	if r.Limit < 0 || r.Limit > replay.MaxRangeTurns {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "limit must be in 1..%d", replay.MaxRangeTurns)
	}
	tl, cp, err := s.readRange(ctx, agent, since, until, r.Limit)
	if err != nil {
		return nil, err
	}
	// The lanes of profiles with no window come from the config in force
	// at the position the rows were read at (no second trip to the
	// stream).
	if err := e.SyncTo(ctx, cp); err != nil {
		return nil, err
	}
	if cfg, ok := e.Config(); ok {
		have := map[string]bool{}
		for _, l := range tl.Profiles {
			have[l.ProfileID] = true
		}
		for _, p := range cfg.Profiles {
			if !have[p.ID] {
				tl.Profiles = append(tl.Profiles, replay.ProfileLane{ProfileID: p.ID, Provider: p.Provider, Windows: []replay.ProfileWindow{}})
			}
		}
		sort.Slice(tl.Profiles, func(i, j int) bool {
			a, b := tl.Profiles[i], tl.Profiles[j]
			if a.Provider != b.Provider {
				return a.Provider < b.Provider
			}
			return a.ProfileID < b.ProfileID
		})
	}
	// Lists are arrays even when empty (an empty ledger), as the spec
	// says; a since past the ledger's end alone is an empty range ending
	// there, never one whose until comes before its since (both are
	// written in one fixed-width UTC layout, so they compare as text).
	if tl.Profiles == nil {
		tl.Profiles = []replay.ProfileLane{}
	}
	if tl.Turns == nil {
		tl.Turns = []replay.TurnMark{}
	}
	if tl.Since != "" && tl.Until != "" && tl.Until < tl.Since {
		tl.Until = tl.Since
	}
	return tl, nil
}

// parseRange reads a request's since and until (RFC 3339, "" = none) and
// refuses a since after the until.
func parseRange(sinceText, untilText string) (since, until time.Time, err error) {
	if since, err = parseTime("since", sinceText); err != nil {
		return since, until, err
	}
	if until, err = parseTime("until", untilText); err != nil {
		return since, until, err
	}
	if !since.IsZero() && !until.IsZero() && since.After(until) {
		return since, until, apiErr(http.StatusBadRequest, CodeInvalidRequest, "since %s is after until %s", sinceText, untilText)
	}
	return since, until, nil
}

// readRange is the agent's timeline over [since, until] from the
// projections, caught up with the stream first (profile_windows, turns,
// usage_stats and agent_spans through their indexes: the cost follows the
// range, not the ledger's age; issue 20). Without projections it is
// replay.ReadRange, which reads the whole stream.
func (s *Service) readRange(ctx context.Context, agent string, since, until time.Time, limit int) (*replay.RangeTimeline, uint64, error) {
	opt := replay.RangeOptions{Agent: agent, Since: since, Until: until, Limit: limit}
	if s.proj == nil {
		tl, err := replay.ReadRange(ctx, s.cfg.Store, opt)
		if err != nil {
			return nil, 0, err
		}
		return tl, tl.LastSeq, nil
	}
	cp, err := s.proj.catchUp(ctx)
	if err != nil {
		return nil, 0, err
	}
	tl, err := s.proj.db.Timeline(ctx, opt)
	return tl, cp, err
}

// Explanation is `fledger explain TURN_ID --agent A --json` (GET
// /v1/turns/{turn_id}/explanation).
func (s *Service) Explanation(ctx context.Context, r *ExplanationRequest) (*replay.Explanation, error) {
	if err := checkKey("turn_id", events.AggTurn, r.TurnID); err != nil {
		return nil, err
	}
	_, agent, err := s.engine(r.Agent)
	if err != nil {
		return nil, err
	}
	x, err := replay.Explain(ctx, s.cfg.Store, agent, r.TurnID)
	if errors.Is(err, replay.ErrTurnNotFound) {
		return nil, s.unknownTurn(ctx, agent, r.TurnID)
	}
	return x, err
}

// whatIfSlots bounds the what-if replays a server runs at once: each
// re-decides an agent's turns on the CPU the gateways' decisions need
// (10,000 turns take seconds). Another waits up to whatIfWait (the
// Service's whatIfWait) for its
// turn, then is answered 503 with a Retry-After of whatIfRetryMs,
// nothing recorded.
const (
	whatIfSlots   = 1
	whatIfRetryMs = 2000
	whatIfWait    = 10 * time.Second
)

// WhatIf re-decides the agent's turns started in the range under the
// config of the request (POST /v1/what-if), as `fledger replay --what-if
// CONFIG --json` does; it writes nothing.
func (s *Service) WhatIf(ctx context.Context, r *WhatIfRequest) (*WhatIfReport, error) {
	_, agent, err := s.engine(r.Agent)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.Config) == "" {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "config is required: the config file's text, YAML or JSON")
	}
	since, until, err := parseRange(r.Since, r.Until)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse([]byte(r.Config), "config")
	if err != nil {
		return nil, apiErr(http.StatusUnprocessableEntity, CodeInvalidRequest, "%v", err)
	}
	wait := time.NewTimer(s.whatIfWait)
	defer wait.Stop()
	select {
	case s.whatIfs <- struct{}{}:
		defer func() { <-s.whatIfs }()
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-wait.C:
		return nil, &APIError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfterMs: whatIfRetryMs, Recorded: RecordedNo,
			Detail: fmt.Sprintf("a what-if replay is running on this server already (at most %d at once, so replays cannot starve the gateways' decisions); retry later", whatIfSlots)}
	}
	rep, err := replay.WhatIf(ctx, s.cfg.Store, &cfg.Policy, replay.WhatIfOptions{Agent: agent, Since: since, Until: until})
	if err != nil {
		return nil, err
	}
	out := &WhatIfReport{Agent: agent, ConfigHash: rep.ConfigHash, Turns: rep.Turns, Unknown: rep.Unknown,
		PathChanges: len(rep.Changed), Changed: []WhatIfChange{}}
	if !since.IsZero() {
		out.Since = replay.FormatTime(since)
	}
	if !until.IsZero() {
		out.Until = replay.FormatTime(until)
	}
	for _, c := range rep.Changed {
		unknown := c.WhatIf.Outcome == replay.OutcomeUnknown
		if !unknown && c.Recorded.Class == c.WhatIf.Class && c.Recorded.Model == c.WhatIf.Model {
			continue
		}
		out.Changed = append(out.Changed, WhatIfChange{Agent: c.Agent, TurnID: c.TurnID, Session: c.Session,
			StartedAt: replay.FormatTime(c.StartedAt), Recorded: c.Recorded, WhatIf: c.WhatIf,
			RecordedOutcome: c.Recorded.Class, WhatIfOutcome: c.WhatIf.Class, RecordedModel: c.Recorded.Model,
			WhatIfModel: c.WhatIf.Model, Unknown: unknown})
	}
	return out, nil
}
