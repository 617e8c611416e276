package natstest_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// The 3-node cluster configuration shipped in deploy/nats-cluster (and
// shown in docs/operations.md) parses, and its accounts and users are
// enough for fledger: the writer creates the R3 stream and appends, the
// reader reads and is refused appends, the admin sees the stream. The
// engine snapshots work with these permissions: the writer's engine saves
// one on close (creating the object store) and the next starts from it;
// the reader checks it as replay --verify does.
func TestDeployNATSCluster_ConfigWorksForFledger(t *testing.T) {
	t.Setenv("FLEDGER_WRITER_PASSWORD", "w-secret")
	t.Setenv("FLEDGER_READER_PASSWORD", "r-secret")
	t.Setenv("FLEDGER_ADMIN_PASSWORD", "a-secret")
	t.Setenv("FLEDGER_GATEWAY_PASSWORD", "g-secret")
	t.Setenv("NATS_ADMIN_PASSWORD", "s-secret")
	dir := filepath.Join("..", "..", "deploy", "nats-cluster")
	parsed := make([]*server.Options, 3)
	for i := range parsed {
		o, err := server.ProcessConfigFile(filepath.Join(dir, "n"+string(rune('1'+i))+".conf"))
		if err != nil {
			t.Fatalf("n%d.conf: %v", i+1, err)
		}
		if o.Cluster.Name != "fledger" || len(o.Routes) != 3 || !o.JetStream {
			t.Fatalf("n%d.conf: cluster %q, %d routes, jetstream %v", i+1, o.Cluster.Name, len(o.Routes), o.JetStream)
		}
		parsed[i] = o
	}
	// The harness owns hosts, ports, routes and store directories; the
	// accounts and users are the files'. Each start parses the file again:
	// a server keeps and changes the accounts it is given.
	c := natstest.StartCluster(t, 3, natstest.WithServerOptions(func(i int, o *server.Options) {
		p, err := server.ProcessConfigFile(filepath.Join(dir, "n"+string(rune('1'+i))+".conf"))
		if err != nil {
			panic(err)
		}
		o.Accounts, o.Users, o.SystemAccount = p.Accounts, p.Users, p.SystemAccount
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The stores' and engines' warnings: a refused subject is one.
	var logged testutil.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
	writer, err := events.Open(ctx, events.WithURL(c.URLs()), events.WithUserInfo("fledger", "w-secret"), events.WithReplicas(3),
		events.WithLogger(logger))
	if err != nil {
		t.Fatalf("writer: %v", err)
	}
	defer writer.Close()
	subj := events.MustSubject("main", events.AggTurn, "t1")
	ev := events.New("main", "t1", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		events.TurnStarted{TurnID: "t1", Session: "s", Chat: "direct", Seed: 1}, events.WithCorrelation("t1"))
	if _, err := writer.Append(ctx, subj, 0, ev); err != nil {
		t.Fatalf("writer append: %v", err)
	}
	// The engine's follower: an ordered consumer on the whole stream.
	for _, err := range writer.Watch(ctx, 1) {
		if err != nil {
			t.Fatalf("writer watch: %v", err)
		}
		break
	}
	if s := events.Status(ctx, writer); s.Replicas != 3 || s.Leader == "" {
		t.Fatalf("status %+v", s)
	}

	reader, err := events.Open(ctx, events.WithURL(c.URLs()), events.WithUserInfo("fledger-reader", "r-secret"), events.WithLogger(logger))
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	defer reader.Close()
	// Before any snapshot: the reader finds no object store, which is no
	// snapshot, not an error (it may not create the bucket).
	if checks, err := replay.VerifySnapshots(ctx, reader, ""); err != nil || len(checks) != 0 {
		t.Fatalf("reader, no snapshot yet: checks %+v, %v", checks, err)
	}
	evs, last, err := reader.ReadSubject(ctx, subj)
	if err != nil || len(evs) != 1 || last != 1 {
		t.Fatalf("reader read: %d events up to %d, %v", len(evs), last, err)
	}
	n := 0
	for _, err := range reader.Read(ctx, 1) {
		if err != nil {
			t.Fatalf("reader read: %v", err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("the reader read %d events, want 1", n)
	}
	for _, err := range reader.Watch(ctx, 1) {
		if err != nil {
			t.Fatalf("reader watch: %v", err)
		}
		break
	}
	// The reader may not publish events: the server refuses, so the
	// append is never acknowledged.
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	defer cancelShort()
	ev2 := events.New("main", "t2", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		events.TurnStarted{TurnID: "t2", Session: "s", Chat: "direct", Seed: 1})
	if _, err := reader.Append(short, events.MustSubject("main", events.AggTurn, "t2"), 0, ev2); err == nil {
		t.Fatal("the reader appended")
	}
	if last, err := writer.LastSeq(ctx, ""); err != nil || last != 1 {
		t.Fatalf("stream last seq %d (%v): the reader's append was stored", last, err)
	}

	admin, err := events.Open(ctx, events.WithURL(c.URLs()), events.WithUserInfo("fledger-admin", "a-secret"))
	if err != nil {
		t.Fatalf("admin: %v", err)
	}
	defer admin.Close()
	if _, err := events.Open(ctx, events.WithURL(c.URLs()), events.WithUserInfo("fledger", "wrong")); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("a wrong password: %v", err)
	}

	// The micro service (answered here by a stand-in connected as the
	// writer's user, as `fledger serve` answers it on its store's
	// connection): the gateway user may call every operation, the reader
	// only the reads.
	nc, err := nats.Connect(c.URLs(), nats.UserInfo("fledger", "w-secret"))
	if err != nil {
		t.Fatalf("connect as the writer: %v", err)
	}
	defer nc.Close()
	sub, err := nc.Subscribe("fledgerapi.v1.>", func(m *nats.Msg) { _ = m.Respond([]byte(`{"ok":true}`)) })
	if err != nil {
		t.Fatalf("the writer cannot serve the micro service: %v", err)
	}
	defer sub.Unsubscribe()
	_ = nc.Flush()
	call := func(user, pw, op string) error {
		perm := make(chan error, 1)
		c2, err := nats.Connect(c.URLs(), nats.UserInfo(user, pw), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case perm <- err:
			default:
			}
		}))
		if err != nil {
			return err
		}
		defer c2.Close()
		// The stand-in's interest reaches the other nodes of the cluster
		// a moment after its subscription: until then a request sent
		// through them finds no responders, so that answer is waited out.
		for deadline := time.Now().Add(10 * time.Second); ; {
			_, err = c2.Request("fledgerapi.v1."+op, []byte(`{}`), time.Second)
			select {
			case p := <-perm:
				return p
			default:
			}
			if !errors.Is(err, nats.ErrNoResponders) || time.Now().After(deadline) {
				return err
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, tc := range []struct {
		user, pw, op string
		ok           bool
	}{
		{"fledger-gateway", "g-secret", "turns.begin", true},
		{"fledger-gateway", "g-secret", "sessions.reset", true},
		{"fledger-reader", "r-secret", "turns.get", true},
		{"fledger-reader", "r-secret", "decisions.list", true},
		{"fledger-reader", "r-secret", "turns.begin", false},
		{"fledger-reader", "r-secret", "sessions.reset", false},
	} {
		err := call(tc.user, tc.pw, tc.op)
		if (err == nil) != tc.ok {
			t.Errorf("%s calling %s: %v, want allowed %v", tc.user, tc.op, err, tc.ok)
		}
	}
	logged.Reset()
	snapshotRoundTrip(ctx, t, writer, reader, logger)
	if l := logged.String(); l != "" {
		t.Fatalf("warnings of the stores or engines:\n%s", l)
	}

	// The gateway user cannot touch the stream.
	begin := time.Now()
	_, err = events.Open(ctx, events.WithURL(c.URLs()), events.WithUserInfo("fledger-gateway", "g-secret"))
	if !errors.Is(err, nats.ErrPermissionViolation) || time.Since(begin) > 5*time.Second {
		t.Errorf("the gateway user opening the store: %v after %v, want a permissions violation at once", err, time.Since(begin))
	}
}

// snapshotRoundTrip: the writer's engine saves its snapshot when it
// closes (creating the object store: the first save), a second engine of
// the writer starts from it and, after one more commit of its agent,
// replaces it (the old object's chunks purged), and the reader checks it
// as replay --verify does.
func snapshotRoundTrip(ctx context.Context, t *testing.T, writer, reader events.Store, logger *slog.Logger) {
	t.Helper()
	e, err := engine.New(ctx, writer, "main", engine.WithLogger(logger))
	if err != nil {
		t.Fatalf("writer engine: %v", err)
	}
	e.Close()
	if _, seq, err := writer.(events.Snapshots).LoadSnapshot(ctx, "main"); err != nil || seq != 1 {
		t.Fatalf("the writer's snapshot: seq %d, %v, want seq 1", seq, err)
	}
	e2, err := engine.New(ctx, writer, "main", engine.WithLogger(logger))
	if err != nil {
		t.Fatalf("second writer engine: %v", err)
	}
	if from := e2.StartedFrom(); from != 1 {
		e2.Close()
		t.Fatalf("the second engine started from %d, want the snapshot at 1", from)
	}
	ev := events.New("main", "t1", time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC),
		events.TurnStarted{TurnID: "t1b", Session: "s", Chat: "direct", Seed: 1}, events.WithCorrelation("t1b"))
	if _, err := writer.Append(ctx, events.MustSubject("main", events.AggTurn, "t1b"), 0, ev); err != nil {
		t.Fatalf("writer append: %v", err)
	}
	if err := e2.Sync(ctx); err != nil {
		t.Fatalf("second engine sync: %v", err)
	}
	e2.Close()
	checks, err := replay.VerifySnapshots(ctx, reader, "")
	if err != nil || len(checks) != 1 || !checks[0].OK || checks[0].Agent != "main" || checks[0].Seq != 2 {
		t.Fatalf("the reader's snapshot check: %+v, %v, want one OK for agent main at seq 2", checks, err)
	}
}
