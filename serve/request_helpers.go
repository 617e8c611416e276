package serve

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// bearerToken reads "Authorization: Bearer <token>". The scheme is
// case-insensitive (RFC 7235 §2.1: "bearer", "BEARER" are the same
// scheme) and may be followed by more than one space.
func bearerToken(h string) (string, bool) {
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok := strings.TrimLeft(rest, " ")
	return tok, tok != ""
}

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

// ListenURL is the URL to print for a listener bound to addr (the --http
// flag as given): its host as written — "0.0.0.0" stays "0.0.0.0", not
// the "[::]" the listener reports — with the bound port (so ":0" shows
// the port chosen).
func ListenURL(addr string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + bound.String()
	}
	port := ""
	if ta, ok := bound.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
	} else if _, p, err := net.SplitHostPort(bound.String()); err == nil {
		port = p
	}
	return "http://" + net.JoinHostPort(host, port)
}

// modelSelection parses a request's `/model` argument
// "provider/model[@profile]" with the engine's parser; field names the
// request field in the error (400).
func modelSelection(s, field string) (events.ModelRef, string, error) {
	ref, prof, err := engine.ParseModelSelection(s)
	if err != nil {
		return ref, "", apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q is not provider/model[@profile]", field, s)
	}
	return ref, prof, nil
}

// checkKey refuses an id that could never be stored as an aggregate key
// (400 naming the field and the limit) before anything is recorded.
func checkKey(field string, agg events.Aggregate, key string) error {
	if err := engine.ValidateKey(agg, key); err != nil {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %v", field, err)
	}
	return nil
}
