package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/nats-io/nats.go/micro"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// MicroName is the NATS micro service name; MicroPrefix the subject
// prefix of its endpoints (outside the stream's fledger.> subjects, so a
// request is never stored as an event).
const (
	MicroName    = "fledger"
	MicroVersion = "1.0.0"
	MicroPrefix  = "fledgerapi.v1"
)

// MicroEndpoints maps each micro endpoint (subject MicroPrefix + "." +
// name) to the HTTP route with the same operation. Requests are the HTTP
// bodies with the path fields (turn_id, agent, session) added; answers are
// the same JSON; errors carry Nats-Service-Error-Code = the HTTP status,
// Nats-Service-Error = the detail, and the [ErrorBody] as data.
var MicroEndpoints = map[string]Route{
	"turns.begin":    {"POST", "/v1/turns"},
	"turns.get":      {"GET", "/v1/turns/{turn_id}"},
	"turns.outcome":  {"POST", "/v1/turns/{turn_id}/outcomes"},
	"turns.resume":   {"POST", "/v1/turns/{turn_id}/resume"},
	"sessions.get":   {"GET", "/v1/sessions/{agent}/{session}"},
	"sessions.model": {"POST", "/v1/sessions/{agent}/{session}/model"},
	"sessions.reset": {"POST", "/v1/sessions/{agent}/{session}/reset"},
	"sessions.pin":   {"POST", "/v1/sessions/{agent}/{session}/pin"},
	"profiles.list":  {"GET", "/v1/profiles"},
	"decisions.list": {"GET", "/v1/decisions"},
	"health":         {"GET", "/healthz"},
}

// StartMicro registers the micro service "fledger" on the NATS connection
// of st ([events.AddService]) with an endpoint per operation
// ([MicroEndpoints]). Stop it (micro.Service.Stop) before closing the
// service; requests in flight finish first. A store without NATS gives an
// error wrapping [events.ErrNoConnection].
func (s *Service) StartMicro(st events.Store) (micro.Service, error) {
	if s.cfg.ReadOnly {
		// Its operations record (begin, outcome, session commands): a
		// read-only server (fledger view) serves HTTP reads only.
		return nil, errors.New("serve: a read-only server does not start the NATS micro service")
	}
	svc, err := events.AddService(st, micro.Config{Name: MicroName, Version: MicroVersion,
		Description: "fledger failover ledger: the step protocol, session commands and reads (same operations as the HTTP API)"})
	if err != nil {
		return nil, err
	}
	g := svc.AddGroup(MicroPrefix)
	handlers := map[string]micro.Handler{
		"turns.begin":         microOp(s, s.Begin),
		"turns.get":           microOp(s, s.Turn),
		"turns.outcome":       microOp(s, s.Outcome),
		"turns.resume":        microOp(s, s.Resume),
		"sessions.get":        microOp(s, s.Session),
		"sessions.model":      microOp(s, s.SelectModel),
		"sessions.reset":      microOp(s, s.Reset),
		"sessions.pin":        microOp(s, s.Pin),
		"sessions.compaction": microOp(s, s.Compaction),
		"profiles.list":       microOp(s, s.Profiles),
		"decisions.list":      microOp(s, s.decisionsOverMicro),
		"health": micro.HandlerFunc(func(r micro.Request) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			h, _ := s.Health(ctx)
			b, _ := encodeJSON(h)
			_ = r.Respond(b)
		}),
	}
	for name, h := range handlers {
		h = s.counted(name, h)
		if err := g.AddEndpoint(strings.ReplaceAll(name, ".", "_"), h, micro.WithEndpointSubject(name), micro.WithEndpointMetadata(map[string]string{"http": MicroEndpoints[name].Method + " " + MicroEndpoints[name].Path})); err != nil {
			_ = svc.Stop()
			return nil, err
		}
	}
	// Returned means reachable: the endpoints' subscriptions are on the
	// server before a client on another connection asks (a request right
	// after start answered "no responders" under load).
	ctx, cancel := context.WithTimeout(context.Background(), microFlushTimeout)
	defer cancel()
	if err := events.FlushService(ctx, st); err != nil {
		_ = svc.Stop()
		return nil, err
	}
	return svc, nil
}

// microFlushTimeout bounds StartMicro's wait for the server to hold its
// endpoints.
const microFlushTimeout = 10 * time.Second

// counted wraps a micro handler with fledger_serve_micro_requests_total
// and fledger_serve_micro_request_duration_seconds for endpoint.
func (s *Service) counted(endpoint string, h micro.Handler) micro.Handler {
	return micro.HandlerFunc(func(r micro.Request) {
		start := time.Now()
		cr := &codeRequest{Request: r, code: "200"}
		defer func() { s.metrics.observeMicro(endpoint, cr.code, time.Since(start)) }()
		h.Handle(cr)
	})
}

// codeRequest remembers the error code a handler answered with.
type codeRequest struct {
	micro.Request
	code string
}

func (r *codeRequest) Error(code, description string, data []byte, opts ...micro.RespondOpt) error {
	r.code = code
	return r.Request.Error(code, description, data, opts...)
}

// MicroReadSubjects are the subjects of the read-only endpoints (turns.get,
// sessions.get, profiles.list, decisions.list, health): those the embedded
// listener's read-only user may call (events.WithReaderRequests).
func MicroReadSubjects() []string {
	var subs []string
	for _, ep := range []string{"turns.get", "sessions.get", "profiles.list", "decisions.list", "health"} {
		subs = append(subs, MicroPrefix+"."+ep)
	}
	return subs
}

// microAuthorized checks the request's Authorization header as the HTTP
// API checks it: with Config.Token set, "Bearer <token>" (the scheme
// case-insensitive), compared in constant time. health, like /healthz,
// is open.
func (s *Service) microAuthorized(r micro.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	var auth string
	if v := microHeader(r, "Authorization"); len(v) > 0 {
		auth = v[0]
	}
	got, ok := bearerToken(auth)
	sum, want := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.cfg.Token))
	return ok && subtle.ConstantTimeCompare(sum[:], want[:]) == 1
}

// microHeader is the values of header name in r, its name matched
// without case: NATS headers are case-sensitive, HTTP's are not, and a
// client written for one sends "content-encoding" or "authorization" to
// the other. The keys are sorted, so the values come in one order.
func microHeader(r micro.Request, name string) []string {
	h := r.Headers()
	keys := make([]string, 0, len(h))
	for k := range h {
		if strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, h[k]...)
	}
	return out
}

// microTimeout bounds one micro request.
const microTimeout = 30 * time.Second

func microOp[Req, Resp any](s *Service, op func(context.Context, *Req) (*Resp, error)) micro.Handler {
	return micro.HandlerFunc(func(r micro.Request) {
		if !s.microAuthorized(r) {
			microError(r, apiErr(http.StatusUnauthorized, CodeUnauthorized, "a valid Authorization: Bearer <token> header is required"))
			return
		}
		if ae := contentEncodingProblem(microHeader(r, "Content-Encoding")); ae != nil {
			microError(r, ae)
			return
		}
		q := new(Req)
		data := r.Data()
		if int64(len(data)) > s.cfg.MaxBodyBytes {
			microError(r, apiErr(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "the request is larger than %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		if ae := decodeRequest(data, q, false); ae != nil {
			microError(r, ae)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), microTimeout)
		defer cancel()
		resp, err := op(ctx, q)
		if err != nil {
			ae, ok := toAPI(err)
			if errors.Is(err, engine.ErrInvalidDecision) {
				ae, ok = s.invalidDecision(err, "subject", r.Subject()), true
			}
			if !ok {
				id := uuid.NewString()
				s.cfg.Log.Error("serve: micro request failed", "request", id, "subject", r.Subject(), "err", err)
				ae = apiErr(http.StatusInternalServerError, CodeInternal, "internal error (request %s)", id)
			}
			microError(r, ae)
			return
		}
		b, err := encodeJSON(resp)
		if err != nil {
			microError(r, apiErr(http.StatusInternalServerError, CodeInternal, "response encoding failed"))
			return
		}
		_ = r.Respond(b)
	})
}

func microError(r micro.Request, e *APIError) {
	b, _ := encodeJSON(ErrorBody{Error: e.Code, Detail: clipDetail(e.Detail), Recorded: e.Recorded})
	_ = r.Error(strconv.Itoa(e.Status), e.Detail, b)
}
