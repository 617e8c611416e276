package serve

import (
	"net/http"

	"github.com/google/uuid"
)

// invalidDecision answers engine.ErrInvalidDecision: the store refused a
// step's events, nothing was recorded. It is a server bug, so it is
// logged under a request id and answered 500 without the internal text,
// but the detail says the turn is unchanged.
func (s *Service) invalidDecision(err error, attrs ...any) *APIError {
	id := uuid.NewString()
	s.cfg.Log.Error("serve: the store refused a decision", append([]any{"request", id, "err", err}, attrs...)...)
	return apiErr(http.StatusInternalServerError, CodeInternal,
		"the event store refused the events of this step; nothing was recorded and the turn or session is unchanged (request %s)", id)
}
