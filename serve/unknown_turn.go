package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// turnOpError is the answer of a turn op on agent's engine that failed
// with err: an unknown turn (engine.ErrUnknownTurn, after the engine's
// own sync) is [Service.unknownTurn]'s 404 naming agent; any other error
// is err.
func (s *Service) turnOpError(ctx context.Context, agent, id string, err error) error {
	if errors.Is(err, engine.ErrUnknownTurn) {
		return s.unknownTurn(ctx, agent, id)
	}
	return err
}

// unknownTurn is the 404 unknown_turn of a turn op, or of the
// explanation, for turn id that agent does not have ("" = none of the
// served agents has it), naming the agents searched: `agent main has no
// turn "c2"`, or `no served agent has turn "c2" (served: main, coder)`.
// When another served agent has the turn (a request naming the wrong
// agent), it says which: `agent main has no turn "c2" (agent coder has
// it)`. Looking there syncs every served agent; when that fails, the
// answer is the 404 without the hint.
func (s *Service) unknownTurn(ctx context.Context, agent, id string) error {
	searched := []string{agent}
	if agent == "" {
		searched = s.cfg.Agents
	}
	detail := fmt.Sprintf("no served agent has turn %q (served: %s)", id, strings.Join(searched, ", "))
	if len(searched) == 1 {
		detail = fmt.Sprintf("agent %s has no turn %q", searched[0], id)
	}
	notFound := func() error {
		// On a stream continuing an archived one, an older turn is in the
		// archive (asked within a second: a 404 must not wait out an
		// outage for a hint).
		hctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if hint := events.ArchivedHint(hctx, s.cfg.Store); hint != "" {
			detail += "; " + hint
		}
		return apiErr(http.StatusNotFound, CodeUnknownTurn, "%s", detail)
	}
	if agent == "" || len(s.cfg.Agents) < 2 || s.syncAll(ctx) != nil {
		return notFound()
	}
	var has []string
	for _, a := range s.cfg.Agents {
		if a == agent {
			continue
		}
		if ok, err := s.hasTurn(ctx, a, id); err == nil && ok {
			has = append(has, a)
		}
	}
	switch len(has) {
	case 0:
		return notFound()
	case 1:
		detail += fmt.Sprintf(" (agent %s has it)", has[0])
	default:
		detail += fmt.Sprintf(" (agents %s have it)", strings.Join(has, ", "))
	}
	return apiErr(http.StatusNotFound, CodeUnknownTurn, "%s", detail)
}
