package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// TestErrorTable_EachRowAnswersItsStatusAndBody walks errorTable: every row
// has a case here, its sample error is answered by that row (no earlier
// row shadows it), and the answer on the wire — status, Retry-After and
// body, byte for byte — is the row's.
func TestErrorTable_EachRowAnswersItsStatusAndBody(t *testing.T) {
	cases := map[string]struct {
		err        error
		status     int
		retryAfter string // Retry-After header ("" = none)
		body       string
	}{
		"*engine.NoModelError": {fmt.Errorf("engine: start turn: %w", &engine.NoModelError{Agent: "main"}), 503, "",
			`{"error":"no_config","detail":"no model configured for agent main: set agents.defaults.model.primary (or select a model for the session with /model)"}`},
		"*engine.WaitNotOverError": {&engine.WaitNotOverError{TurnID: "t1", ResumeAt: 1700000001500, RemainingMs: 1500}, 425, "2",
			`{"error":"wait_not_over","detail":"the turn waits 1500 ms more (resume_at 1700000001500); resume after that"}`},
		"*engine.AttemptError + engine.ErrAttemptNotPlanned": {&engine.AttemptError{Err: engine.ErrAttemptNotPlanned, TurnID: "t1", Attempt: 3, Planned: 2}, 409, "",
			`{"error":"attempt_not_planned","detail":"turn t1 has started 2 attempt(s); attempt 3 was never planned: report the attempt of the last call action"}`},
		"*engine.AttemptError + engine.ErrOutcomeMismatch": {&engine.AttemptError{Err: engine.ErrOutcomeMismatch, TurnID: "t1", Attempt: 1, Planned: 1}, 409, "",
			`{"error":"outcome_mismatch","detail":"attempt 1 of turn t1 was already reported with another result (ok against an error, or another provider error): the recorded one stands"}`},
		"*engine.BeginMismatchError": {fmt.Errorf("begin: %w", &engine.BeginMismatchError{TurnID: "t1", Field: "model", Recorded: `"openai/gpt-5"`, Requested: `"groq/llama"`}), 409, "",
			`{"error":"begin_mismatch","detail":"turn t1 was begun with model \"openai/gpt-5\"; this begin asks \"groq/llama\": a re-sent begin must repeat the original request (a new turn needs a new turn_id)"}`},
		"*engine.NoNextStepError": {&engine.NoNextStepError{TurnID: "t1", Seq: 7, Phase: "running"}, 500, "",
			`{"error":"internal","detail":"turn t1 has no next step: its TurnStarted holds an empty candidate chain (\"chain\": []; no engine writes one), so there is no model to call (last commit seq 7, phase running)"}`},
		"engine.ErrDecisionPanicked": {fmt.Errorf("%w: turn \"t1\": index out of range", engine.ErrDecisionPanicked), 500, "",
			`{"error":"internal","detail":"the decision of this step failed on the turn's recorded state, which no engine writes (a forged or re-sent commit: fledger replay --verify names it); nothing was recorded, and every other turn is served","recorded":"no"}`},
		"engine.ErrUnknownTurn": {fmt.Errorf("%w: t9", engine.ErrUnknownTurn), 404, "",
			`{"error":"unknown_turn","detail":"unknown turn: t9"}`},
		"engine.ErrTurnExists": {fmt.Errorf("%w: t1", engine.ErrTurnExists), 409, "",
			`{"error":"turn_exists","detail":"turn already exists: t1"}`},
		"engine.ErrNoConfig": {engine.ErrNoConfig, 503, "",
			"{\"error\":\"no_config\",\"detail\":\"no config is applied for this agent: start `fledger serve --config FILE` or run `fledger config apply FILE`\"}"},
		"policy.ErrUnknownProfile": {fmt.Errorf("%w: anthropic:x", policy.ErrUnknownProfile), 422, "",
			`{"error":"unknown_profile","detail":"unknown auth profile: anthropic:x"}`},
		"policy.ErrPinProvider | ErrBadSource | ErrNoModel | ErrBadOrder": {fmt.Errorf("%w: %q", policy.ErrBadSource, "x"), 422, "",
			`{"error":"invalid_request","detail":"unknown selection source: \"x\""}`},
		"engine.ErrBadRequest": {fmt.Errorf("%w: turn_id is required", engine.ErrBadRequest), 400, "",
			`{"error":"invalid_request","detail":"turn_id is required"}`},
		"engine.ErrConflictRetries": {engine.ErrConflictRetries, 503, "1",
			`{"error":"contention","detail":"too many concurrent writers on the same profile or turn; retry"}`},
		"events.ErrUnavailable": {&events.UnavailableError{Op: "append", Outcome: events.OutcomeUnknown, Attempts: 3, Waited: 4400 * time.Millisecond, Err: errors.New("timeout")}, 503, "2",
			`{"error":"unavailable","detail":"the event store did not confirm the write within 4s (no stream leader, the NATS server unreachable, or not storing — its disk full, say; GET /healthz): it may be recorded; re-send the same request — it is idempotent and is recorded once","recorded":"unknown"}`},
		"events.ErrStreamGone": {fmt.Errorf("events: read from sequence 5: %w", events.ErrStreamGone), 503, "",
			`{"error":"unavailable","detail":"the FLEDGER stream is not on the NATS server any more (deleted, or replaced by a rotation while this process ran): restart fledger on the current stream"}`},
		"*projections.DBError": {fmt.Errorf("projections: decisions: %w", &projections.DBError{Path: "/d/projections.sqlite", Detail: "database disk image is malformed (11)", Err: projections.ErrCorrupt}), 503, "",
			`{"error":"unavailable","detail":"the projection database cannot be read (projections: database is corrupt or not a fledger projection database): reads of the projections fail until it is rebuilt from the stream — stop serve, run ` + "`fledger --data /d stats --rebuild`" + `, start it again; turns are not affected"}`},
		"engine.ErrClosed": {engine.ErrClosed, 503, "",
			`{"error":"unavailable","detail":"the server is shutting down"}`},
	}
	if len(cases) != len(errorTable) {
		t.Errorf("%d cases for %d rows", len(cases), len(errorTable))
	}
	for i, row := range errorTable {
		t.Run(row.class, func(t *testing.T) {
			tc, ok := cases[row.class]
			if !ok {
				t.Fatalf("row %d (%s) has no case", i, row.class)
			}
			for j, earlier := range errorTable[:i] {
				if earlier.match(tc.err) {
					t.Fatalf("row %d (%s) answers the sample before row %d", j, earlier.class, i)
				}
			}
			if !row.match(tc.err) {
				t.Fatalf("the sample %v does not match its row", tc.err)
			}
			ae, ok := toAPI(tc.err)
			if !ok || ae.Status != row.Status || ae.Code != row.Code {
				t.Fatalf("toAPI = %+v, %v; want the row's %d %s", ae, ok, row.Status, row.Code)
			}
			rec := httptest.NewRecorder()
			writeError(rec, ae)
			if rec.Code != tc.status || rec.Header().Get("Retry-After") != tc.retryAfter || rec.Body.String() != tc.body+"\n" {
				t.Errorf("answer %d Retry-After %q\n%s\nwant %d Retry-After %q\n%s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String(), tc.status, tc.retryAfter, tc.body)
			}
		})
	}
}

// TestErrorTable_StoreOutageThatStoredNothing: the unavailable row's
// answer when the store says nothing was stored (the refine leaves the
// row's fields).
func TestErrorTable_StoreOutageThatStoredNothing(t *testing.T) {
	rec := httptest.NewRecorder()
	ae, _ := toAPI(fmt.Errorf("engine: append: %w", &events.UnavailableError{Op: "append", Outcome: events.NotStored, Err: errors.New("no responders")}))
	writeError(rec, ae)
	want := `{"error":"unavailable","detail":"the event store did not answer (no stream leader, or the NATS server is unreachable): nothing was recorded; retry the request","recorded":"no"}` + "\n"
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "2" || rec.Body.String() != want {
		t.Errorf("answer %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
}

// A read refused at the stream's consumer limit is a 503 with Retry-After
// that names the limit (the outage text would send an operator looking
// for a lost leader).
func TestErrorTable_ConsumerLimit(t *testing.T) {
	rec := httptest.NewRecorder()
	err := &events.UnavailableError{Op: "read", Attempts: 1, Err: fmt.Errorf("%w: %w", events.ErrConsumerLimit, errors.New("maximum consumers limit reached"))}
	ae, _ := toAPI(fmt.Errorf("engine: look up turn t1: %w", err))
	writeError(rec, ae)
	want := `{"error":"unavailable","detail":"the NATS server refused a read: ` + events.ErrConsumerLimit.Error() + `; nothing was recorded; retry the request","recorded":"no"}` + "\n"
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "2" || rec.Body.String() != want {
		t.Errorf("answer %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
}

// TestErrorTable_APIErrorAndUnknownErrors: an *APIError is answered as it
// is; an error of no row is internal (ok false).
func TestErrorTable_APIErrorAndUnknownErrors(t *testing.T) {
	ae := apiErr(400, CodeInvalidJSON, "bad")
	if got, ok := toAPI(fmt.Errorf("wrapped: %w", ae)); !ok || got != ae {
		t.Errorf("toAPI(*APIError) = %v, %v", got, ok)
	}
	if got, ok := toAPI(errors.New("boom")); ok || got != nil {
		t.Errorf("toAPI(unknown) = %v, %v", got, ok)
	}
}

// TestErrorTable_EverySentinelOfTheRequestRow: each policy refusal of the
// shared 422 row is answered invalid_request with its own words.
func TestErrorTable_EverySentinelOfTheRequestRow(t *testing.T) {
	cases := []struct {
		err    error
		detail string
	}{
		{policy.ErrPinProvider, "profile does not match the selected provider"},
		{policy.ErrBadSource, "unknown selection source"},
		{policy.ErrNoModel, "no model selected and no primary configured"},
		{policy.ErrBadOrder, "invalid auth order"},
	}
	for _, tc := range cases {
		ae, ok := toAPI(fmt.Errorf("engine: %w", tc.err))
		if !ok || ae.Status != 422 || ae.Code != CodeInvalidRequest || ae.Detail != tc.detail {
			t.Errorf("toAPI(%v) = %+v, %v", tc.err, ae, ok)
		}
	}
}

// A request that ran out of time (or was cancelled) is answered like a
// store outage: 503 with Retry-After, recorded "unknown" for a write (it
// may have been stored) and "no" for a read.
func TestAnswerError_TimedOutRequest(t *testing.T) {
	s := &Service{}
	for _, tc := range []struct {
		method, recorded string
	}{{http.MethodPost, RecordedUnknown}, {http.MethodGet, RecordedNo}} {
		rec := httptest.NewRecorder()
		s.answerError(rec, httptest.NewRequest(tc.method, "/v1/turns/t1/outcomes", nil), fmt.Errorf("engine: report: %w", context.DeadlineExceeded))
		var body ErrorBody
		testutil.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		if rec.Code != 503 || rec.Header().Get("Retry-After") != "2" || body.Error != CodeUnavailable || body.Recorded != tc.recorded {
			t.Errorf("%s: %d %q %s", tc.method, rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
		}
	}
}
