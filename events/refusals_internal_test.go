package events

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// readerOverListener opens a writer on an embedded server with a
// listener and a reader through it whose operations are retried for
// total, each attempt waiting at most attempt; the reader's store log
// (the server's errors outside requests, debug level included) is
// returned.
func readerOverListener(t *testing.T, total, attempt time.Duration) (writer, reader *store, log *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	w, err := Open(ctx, WithDataDir(dir), WithListen(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	log = &syncBuffer{}
	r, err := Open(ctx, WithURL(w.ClientURL()), WithListenerCredentials(dir, ReadOnly), WithRetryUnknown(total, attempt),
		WithLogger(slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return w.(*store), r.(*store), log
}

// refuse publishes subject, which the reader may not, and waits until the
// store's error handler has logged the server's refusal (so it has been
// recorded too: record runs first).
func refuse(t *testing.T, s *store, log *syncBuffer, subject string) {
	t.Helper()
	if err := s.nc.Publish(subject, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), subject); {
		if time.Now().After(deadline) {
			t.Fatalf("no refusal of %s logged:\n%s", subject, log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A permission refusal fails an operation only when the server refused a
// subject the operation sends while it ran. An earlier refusal — even
// one still the connection's last error, as it stays until a reconnect —
// or a refusal of another stream's subject leaves a request the stream
// does not answer (an election) what it is: retried, then unavailable,
// nothing stored. A refusal of the stream's own API during the operation
// ends it at once, before its attempt's deadline.
func TestRefusals_OnlyTheOperationsOwn(t *testing.T) {
	for _, tc := range []struct {
		name           string
		before, during string // subjects refused before and while the operation runs ("" = none)
		wantSubject    string // the PermissionError's subject; "" = unavailable
	}{
		{"an earlier refusal of the snapshot store (F1)", "$JS.API.STREAM.CREATE.OBJ_" + SnapshotBucket, "", ""},
		{"an earlier refused consumer delete", "$JS.API.CONSUMER.DELETE.OTHER.c1", "", ""},
		{"an earlier refusal of the stream's own API", "$JS.API.STREAM.PURGE." + StreamName, "", ""},
		{"a refused consumer delete during it", "", "$JS.API.CONSUMER.DELETE.OTHER.c2", ""},
		{"a refusal of another stream during it", "", "$JS.API.STREAM.CREATE.OBJ_" + SnapshotBucket, ""},
		{"a refusal of the stream's API during it", "", "$JS.API.STREAM.PURGE." + StreamName, "$JS.API.STREAM.PURGE." + StreamName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attempt := 100 * time.Millisecond
			if tc.wantSubject != "" {
				attempt = time.Minute // only the refusal ends it
			}
			_, r, log := readerOverListener(t, 250*time.Millisecond, attempt)
			if tc.before != "" {
				refuse(t, r, log, tc.before)
				if le := r.nc.LastError(); !errors.Is(le, nats.ErrPermissionViolation) {
					t.Fatalf("the connection's last error is %v, want the earlier refusal", le)
				}
			}
			var causes []error
			err := r.retrying(context.Background(), "last sequence", "", func(ctx context.Context) error {
				if tc.during != "" && len(causes) == 0 {
					refuse(t, r, log, tc.during)
				}
				<-ctx.Done() // the stream never answers
				causes = append(causes, context.Cause(ctx))
				return ctx.Err()
			})
			var perm *PermissionError
			var un *UnavailableError
			switch {
			case tc.wantSubject == "":
				if !errors.As(err, &un) || un.Op != "last sequence" || un.Outcome != NotStored || un.Attempts < 2 || errors.As(err, &perm) {
					t.Fatalf("err %v, want unavailable after retries, no permission error", err)
				}
			case !errors.As(err, &perm) || perm.Subject != tc.wantSubject || perm.Op != "last sequence" || perm.Action != "publish" ||
				!errors.Is(err, nats.ErrPermissionViolation) || len(causes) != 1 || !errors.As(causes[0], &perm):
				t.Fatalf("err %v (attempt ended by %v), want the refusal of %s, ending the first attempt", err, causes, tc.wantSubject)
			}
		})
	}
}

// The reader may read the engine snapshots through the listener but not
// save one: the save fails at once with the refusal named (the object
// store's subject), not a timeout.
func TestRefusals_SnapshotStoreNamesTheRefusal(t *testing.T) {
	ctx := context.Background()
	w, r, _ := readerOverListener(t, time.Second, 500*time.Millisecond)
	if _, _, err := r.LoadSnapshot(ctx, "main"); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("reader, no bucket: %v, want no snapshot", err)
	}
	if _, err := w.SaveSnapshot(ctx, "main", 7, []byte("state")); err != nil {
		t.Fatal(err)
	}
	data, seq, err := r.LoadSnapshot(ctx, "main")
	if err != nil || seq != 7 || string(data) != "state" {
		t.Fatalf("reader load: %q at %d, %v", data, seq, err)
	}
	if agents, err := r.SnapshotAgents(ctx); err != nil || len(agents) != 1 || agents[0] != "main" {
		t.Fatalf("reader list: %v, %v", agents, err)
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute) // only the refusal ends it
	defer cancel()
	_, err = r.SaveSnapshot(sctx, "main", 8, []byte("newer"))
	var perm *PermissionError
	want := `events: save the snapshot of agent "main" in object store FLEDGER_SNAPSHOTS: permission refused: the NATS server does not let this user publish to "$O.FLEDGER_SNAPSHOTS.C.`
	if !errors.As(err, &perm) || !strings.HasPrefix(err.Error(), want) || sctx.Err() != nil {
		t.Fatalf("reader save: %v, want %s…", err, want)
	}
	if _, seq, err := w.LoadSnapshot(ctx, "main"); err != nil || seq != 7 {
		t.Fatalf("after the reader's save: seq %d, %v, want 7", seq, err)
	}
}

// Which refused subjects an operation counts as its own: the stream's
// API, its consumers' acks and flow control, the account's API, and the
// subjects it publishes; not another stream's, not a consumer delete.
func TestJSConcerns(t *testing.T) {
	ledger := jsConcerns(StreamName, SubjectPrefix+".>")
	snaps := snapshotConcerns
	for _, tc := range []struct {
		subject       string
		ledger, snaps bool
	}{
		{"$JS.API.INFO", true, true},
		{"$JS.API.STREAM.NAMES", true, true},
		{"$JS.API.STREAM.INFO.FLEDGER", true, false},
		{"$JS.API.STREAM.MSG.GET.FLEDGER", true, false},
		{"$JS.API.DIRECT.GET.FLEDGER.fledger.main.turn.t1", true, false},
		{"$JS.API.CONSUMER.CREATE.FLEDGER.c1.fledger.>", true, false},
		{"$JS.API.CONSUMER.DURABLE.CREATE.FLEDGER.export", true, false},
		{"$JS.API.CONSUMER.MSG.NEXT.FLEDGER.c1", true, false},
		{"$JS.ACK.FLEDGER.c1.1.2.3.4.5", true, false},
		{"$JS.FC.FLEDGER.c1.x", true, false},
		{"$JS.API.CONSUMER.DELETE.FLEDGER.c1", false, false},
		{"fledger.main.turn.t1", true, false},
		{"$JS.API.STREAM.INFO.OBJ_FLEDGER_SNAPSHOTS", false, true},
		{"$JS.API.STREAM.CREATE.OBJ_FLEDGER_SNAPSHOTS", false, true},
		{"$JS.API.DIRECT.GET.OBJ_FLEDGER_SNAPSHOTS.$O.FLEDGER_SNAPSHOTS.M.bWFpbg==", false, true},
		{"$JS.API.CONSUMER.DELETE.OBJ_FLEDGER_SNAPSHOTS.c2", false, false},
		{"$O.FLEDGER_SNAPSHOTS.C.nuid", false, true},
		{"$JS.API.STREAM.INFO.OTHER", false, false},
		{"fledgerapi.v1.turns.begin", false, false},
	} {
		if got := ledger(tc.subject); got != tc.ledger {
			t.Errorf("the ledger's operations count %s: %v, want %v", tc.subject, got, tc.ledger)
		}
		if got := snaps(tc.subject); got != tc.snaps {
			t.Errorf("the snapshot store's operations count %s: %v, want %v", tc.subject, got, tc.snaps)
		}
	}
}
