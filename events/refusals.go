package events

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
)

// PermissionError is an operation the NATS server refused: the
// connection's user may not publish to (or subscribe to) Subject, one the
// operation sends. The server drops such a request and says so outside it
// (-ERR "Permissions Violation for Publish to …"); the request itself
// would only time out. It is final: retrying cannot help, the account's
// permissions must grant the subject (docs/operations.md, "Accounts and credentials").
// errors.Is(err, nats.ErrPermissionViolation) is true.
type PermissionError struct {
	// Op is the operation refused ("open", "last sequence", "load the
	// snapshot of agent \"main\"", …).
	Op string
	// Action is "publish" or "subscribe"; Subject the subject refused.
	Action, Subject string
	// Err is the server's violation as nats.go reports it.
	Err error
}

// Error names the operation, the subject refused and where to grant it.
func (e *PermissionError) Error() string {
	return fmt.Sprintf("events: %s: permission refused: the NATS server does not let this user %s to %q (grant it in the account's permissions, docs/operations.md \"Accounts and credentials\"): %v",
		e.Op, e.Action, e.Subject, e.Err)
}

// Unwrap returns the server's violation (nats.ErrPermissionViolation).
func (e *PermissionError) Unwrap() error { return e.Err }

// violationRe takes the action and subject out of a violation's text.
var violationRe = regexp.MustCompile(`(?i)Permissions Violation for (Publish|Subscription) to "?([^"\s]+)"?`)

// refusals hands the permission violations the server reports on the
// store's connection to the operations running when each arrives, and
// only to those whose subjects it names. nc.LastError() is not used: it
// keeps a violation until the connection reconnects, so one old, unrelated
// refusal (a snapshot store the user may not open, a consumer delete)
// would make every later timeout of every operation — a leader election —
// look like a refusal, final and never retried.
type refusals struct {
	mu      sync.Mutex
	running map[*refusalWatch]struct{}
}

// refusalWatch is one running operation.
type refusalWatch struct {
	op       string
	concerns func(subject string) bool
	cancel   context.CancelCauseFunc
	got      *PermissionError // the first refusal concerning it; under refusals.mu
}

// record passes a violation to every running operation it concerns,
// ending that operation's context. Other errors are ignored.
func (r *refusals) record(err error) {
	if r == nil || !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	m := violationRe.FindStringSubmatch(err.Error())
	if m == nil {
		return
	}
	action := "publish"
	if strings.EqualFold(m[1], "Subscription") {
		action = "subscribe"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for w := range r.running {
		if w.got == nil && w.concerns(m[2]) {
			w.got = &PermissionError{Op: w.op, Action: action, Subject: m[2], Err: err}
			w.cancel(w.got)
		}
	}
}

// during runs fn with a context that ends as soon as the server refuses
// a subject concerns accepts while fn runs; fn's failure is then that
// refusal (what fn returns is its consequence: a cancelled request).
// Refusals reported before fn started, or of subjects concerns rejects,
// never count.
func (r *refusals) during(ctx context.Context, op string, concerns func(string) bool, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &refusalWatch{op: op, concerns: concerns, cancel: cancel}
	r.mu.Lock()
	if r.running == nil {
		r.running = map[*refusalWatch]struct{}{}
	}
	r.running[w] = struct{}{}
	r.mu.Unlock()
	err := fn(ctx)
	r.mu.Lock()
	delete(r.running, w)
	got := w.got
	r.mu.Unlock()
	if err != nil && got != nil {
		return got
	}
	return err
}

// jsConcerns accepts the JetStream subjects a request on stream sends:
// its API ($JS.API.<verb…>.<stream>[.…], and the account's $JS.API.INFO
// and stream lookups), the acks and
// flow control of its consumers ($JS.ACK.<stream>.…, $JS.FC.<stream>.…),
// and the subjects matching publish ("" = none: a read). A consumer
// delete is not one: nats.go sends it when a consumer is done or reset
// and waits for no answer, so a refused delete fails nothing (the
// reader's on servers that predate its grant, see asyncErrors).
func jsConcerns(stream, publish string) func(subject string) bool {
	return func(subject string) bool {
		if publish != "" && subjectMatches(publish, subject) {
			return true
		}
		switch subject {
		case "$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST": // the account's, not a stream's
			return true
		}
		tok := strings.Split(subject, ".")
		if len(tok) < 3 || tok[0] != "$JS" || readerMayNotSubject(subject) {
			return false
		}
		// The stream is the first token after the API's verbs: at most
		// three ($JS.API.CONSUMER.DURABLE.CREATE.<stream>).
		for _, t := range tok[2:min(len(tok), 6)] {
			if t == stream {
				return true
			}
		}
		return false
	}
}
