package serve_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// faultStore answers every commit append with fail's error while fail
// returns one.
type faultStore struct {
	events.Store
	fail atomic.Pointer[func(events.AppendRequest) error]
}

func (f *faultStore) AppendCommit(ctx context.Context, req events.AppendRequest) (events.AppendResult, error) {
	if fail := f.fail.Load(); fail != nil {
		if err := (*fail)(req); err != nil {
			return events.AppendResult{}, err
		}
	}
	return f.Store.AppendCommit(ctx, req)
}

// The store's refusals a begin can meet are answered as the error table
// says, and (through startServer) keep the contract: a conflict on every
// try is 503 contention, an outage 503 unavailable with recorded, an
// error of no class 500 internal.
func TestHTTP_StoreFaultAnswers(t *testing.T) {
	fs := &faultStore{Store: testutil.Store(t)}
	srv := startServer(t, fs, serve.Config{Config: loadConfig(t), EngineOptions: []engine.Option{engine.WithConflictRetries(1)}})
	cases := []struct {
		name       string
		err        func(events.AppendRequest) error
		status     int
		retryAfter string
		code       string
		recorded   string
	}{
		{"conflict on every try", func(r events.AppendRequest) error {
			return &events.ConflictError{Subject: r.Subject, Guard: r.Subject, ActualKnown: true}
		}, 503, "1", serve.CodeContention, ""},
		{"store outage", func(events.AppendRequest) error {
			return &events.UnavailableError{Op: "append", Outcome: events.NotStored, Err: errors.New("no responders")}
		}, 503, "2", serve.CodeUnavailable, serve.RecordedNo},
		{"an error of no class", func(events.AppendRequest) error { return errors.New("disk on fire") }, 500, "", serve.CodeInternal, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs.fail.Store(&tc.err)
			defer fs.fail.Store(nil)
			req, err := http.NewRequestWithContext(testutil.Context(t), "POST", srv.url+"/v1/turns", strings.NewReader(`{"session":"s"}`))
			testutil.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			testutil.NoError(t, err)
			defer resp.Body.Close()
			var eb serve.ErrorBody
			testutil.NoError(t, jsonDecode(resp, &eb))
			if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter || eb.Error != tc.code || eb.Recorded != tc.recorded {
				t.Errorf("%d Retry-After %q %+v, want %d Retry-After %q %s recorded %q", resp.StatusCode, resp.Header.Get("Retry-After"), eb, tc.status, tc.retryAfter, tc.code, tc.recorded)
			}
		})
	}
}

// Refusals of the HTTP layer itself, each on the wire as documented: a
// body that is not JSON (415), a method the path does not take (405 with
// Allow), and a GET's query parameter it does not take or given twice
// (400 naming the ones it takes).
func TestHTTP_GuardAnswers(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	cases := []struct {
		method, path, contentType, body string
		status                          int
		allow                           string
		want                            serve.ErrorBody
	}{
		{"POST", "/v1/turns", "text/plain", `{"session":"s"}`, 415, "",
			serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `Content-Type "text/plain" is not application/json`}},
		{"POST", "/v1/sessions/main/s/compaction", "application/x-www-form-urlencoded", `a=b`, 415, "",
			serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `Content-Type "application/x-www-form-urlencoded" is not application/json`}},
		{"GET", "/v1/turns", "", ``, 405, "POST",
			serve.ErrorBody{Error: serve.CodeMethodNotAllowed, Detail: `GET is not allowed on /v1/turns (use POST)`}},
		{"DELETE", "/v1/profiles", "", ``, 405, "GET, HEAD",
			serve.ErrorBody{Error: serve.CodeMethodNotAllowed, Detail: `DELETE is not allowed on /v1/profiles (use GET or HEAD)`}},
		{"PUT", "/v1/turns/t1", "", ``, 405, "GET, HEAD",
			serve.ErrorBody{Error: serve.CodeMethodNotAllowed, Detail: `PUT is not allowed on /v1/turns/t1 (use GET or HEAD)`}},
		{"GET", "/v1/profiles?agent=main&agnt=x", "", ``, 400, "",
			serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `unknown query parameter "agnt": GET /v1/profiles takes only agent, each at most once`}},
		{"GET", "/v1/turns/t1?agent=main&agent=coder", "", ``, 400, "",
			serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `query parameter "agent" is given 2 times: GET /v1/turns/{turn_id} takes only agent, each at most once`}},
		{"GET", "/v1/sessions/main/s?agent=main", "", ``, 400, "",
			serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `unknown query parameter "agent": GET /v1/sessions/{agent}/{session} takes no query parameters`}},
		{"GET", "/healthz?verbose=1", "", ``, 400, "",
			serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `unknown query parameter "verbose": GET /healthz takes no query parameters`}},
		{"GET", "/metrics?name[]=x", "", ``, 400, "",
			serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `unknown query parameter "name[]": GET /metrics takes no query parameters`}},
	}
	for _, tc := range cases {
		req, err := http.NewRequestWithContext(testutil.Context(t), tc.method, srv.url+tc.path, strings.NewReader(tc.body))
		testutil.NoError(t, err)
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		testutil.NoError(t, err)
		var eb serve.ErrorBody
		err = jsonDecode(resp, &eb)
		resp.Body.Close()
		testutil.NoError(t, err)
		if resp.StatusCode != tc.status || resp.Header.Get("Allow") != tc.allow || eb != tc.want {
			t.Errorf("%s %s: %d Allow %q %+v\nwant %d Allow %q %+v", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), eb, tc.status, tc.allow, tc.want)
		}
	}
}
