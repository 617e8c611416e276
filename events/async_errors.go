package events

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/nats-io/nats.go"
)

// asyncErrors is the connection's handler of the errors the server sends
// outside any request (nats.ErrorHandler). Without one, nats.go prints
// them raw on stderr ("nats: permissions violation: …") in the middle of
// a command's output. They go to logger instead (slog.Default() when the
// store has none), as one warning naming the subscription. A denied
// consumer delete is logged at debug: on a server whose permissions
// predate the reader's grant to delete consumers (fledger's own grant it,
// internal/natsserver and deploy/nats-cluster), the reader's ordered
// consumer meets it after every reconnect, deleting its old consumer,
// and nothing is wrong (the server drops that one when it has been idle
// for its inactive threshold). It is told by the denied subject, not by
// the user: a reader connected with a creds file has no user name here.
// A permission violation also goes to refused (nil = none): the
// operations running that send the subject refused fail with it.
func asyncErrors(logger *slog.Logger, refused *refusals) nats.ErrHandler {
	return func(_ *nats.Conn, sub *nats.Subscription, err error) {
		refused.record(err)
		l := logger
		if l == nil {
			l = slog.Default()
		}
		level := slog.LevelWarn
		if readerMayNot(err) {
			level = slog.LevelDebug
		}
		attrs := []any{"err", err.Error()}
		if sub != nil {
			attrs = append(attrs, "subscription", sub.Subject)
		}
		l.Log(context.Background(), level, "events: the NATS server reported an error outside a request", attrs...)
	}
}

// readerMayNot reports whether err is a permissions violation for an
// action the read-only user is not granted and fledger's readers attempt
// in passing: deleting or creating a consumer's leftovers.
func readerMayNot(err error) bool {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return false
	}
	return strings.Contains(err.Error(), "$JS.API.CONSUMER.DELETE.")
}

// readerMayNotSubject is readerMayNot for a subject refused.
func readerMayNotSubject(subject string) bool {
	return strings.HasPrefix(subject, "$JS.API.CONSUMER.DELETE.")
}
