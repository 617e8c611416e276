package projections_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// voidLedger is a stream of prunes racing turns, with the sequence and
// the envelope time of its commits by name:
//
//   - select-a, select-b, select-c, select-r: a /model of s-a, s-b, s-c
//     and s-r.
//   - start-a, wait-a: turn t-a of s-a starts and waits for a retry
//     (open); start-b: t-b of s-b starts (open); start-r, stop-r,
//     restart-r: t-r of s-r starts, stops and is started again (open);
//     stop-b: t-b stops.
//   - 31 days later prune-a (void: t-a waits), prune-b (deletes: t-b
//     stopped), prune-r (void: t-r runs again), prune-c (deletes: s-c had
//     no turn).
//   - start-c: t-c of s-c starts after s-c's prune; back-c: a /model of
//     s-c makes a new row; prune-c-open: void (t-c runs), the new row
//     stays; stop-c, prune-c-again: t-c stops, the prune deletes.
func voidLedger(t *testing.T) (events.Store, map[string]uint64, map[string]int64) {
	t.Helper()
	st, _ := openStore(t)
	g := newGen(t, st)
	seqs, ats := map[string]uint64{}, map[string]int64{}
	note := func(name string) {
		seqs[name], ats[name] = g.lastSeq, g.now
		g.now += 1_000
	}
	sel := func(name, s string, r policy.ModelRef) {
		t.Helper()
		ps, err := policy.SelectModel(g.sessions[s], s, r, policy.SourceUser, nil)
		g.session(ps, err)
		note(name)
	}
	start := func(name, turn, s string) {
		t.Helper()
		g.turn(turn, s, nil, 0) // started, its first call never made
		note(name)
	}
	turnEvent := func(name, turn string, p events.Payload) {
		t.Helper()
		g.commit(turn, []events.Payload{p})
		note(name)
	}
	stop := func(name, turn string) {
		turnEvent(name, turn, events.TurnStopped{TurnID: turn, Disposition: "abort", Reason: policy.ReasonTimeout, DurationMs: 500})
	}
	prune := func(name, s string) {
		t.Helper()
		g.session(policy.PruneStale(s, t0, false, g.now, pruneAfterMs), nil)
		note(name)
	}
	sel("select-a", "s-a", ref("openai", "gpt-5"))
	sel("select-b", "s-b", ref("openai", "gpt-5"))
	sel("select-c", "s-c", ref("openai", "gpt-5"))
	sel("select-r", "s-r", ref("openai", "gpt-5"))
	start("start-a", "t-a", "s-a")
	turnEvent("wait-a", "t-a", events.RetryScheduled{TurnID: "t-a", Attempt: 1, Retry: 1, Budget: 2, BaseMs: 1_000, DelayMs: 1_000, ResumeAt: g.now + 1_000})
	start("start-b", "t-b", "s-b")
	start("start-r", "t-r", "s-r")
	stop("stop-r", "t-r")
	start("restart-r", "t-r", "s-r")
	stop("stop-b", "t-b")
	g.now += pruneAfterMs + 24*3600*1000
	prune("prune-a", "s-a")
	prune("prune-b", "s-b")
	prune("prune-r", "s-r")
	prune("prune-c", "s-c")
	start("start-c", "t-c", "s-c")
	sel("back-c", "s-c", ref("google", "gemini"))
	prune("prune-c-open", "s-c")
	stop("stop-c", "t-c")
	prune("prune-c-again", "s-c")
	return st, seqs, ats
}

// voidRowsAt are the session_selection rows after the commit of
// voidLedger named after (nil for a point not listed): a void prune
// leaves its session's row as it was.
func voidRowsAt(seqs map[string]uint64, ats map[string]int64, after string) []projections.SessionSelection {
	row := func(s, provider, model, commit string) projections.SessionSelection {
		return projections.SessionSelection{Agent: agent, SessionKey: s, ProviderOverride: provider, ModelOverride: model,
			ModelOverrideSource: "user", UpdatedAt: projections.UnixMillis(ats[commit]), LastSeq: seqs[commit]}
	}
	a, b, c, r := row("s-a", "openai", "gpt-5", "select-a"), row("s-b", "openai", "gpt-5", "select-b"),
		row("s-c", "openai", "gpt-5", "select-c"), row("s-r", "openai", "gpt-5", "select-r")
	back := row("s-c", "google", "gemini", "back-c")
	switch after {
	case "start-r", "stop-b", "prune-a":
		return []projections.SessionSelection{a, b, c, r}
	case "prune-b", "prune-r":
		return []projections.SessionSelection{a, c, r}
	case "prune-c", "start-c":
		return []projections.SessionSelection{a, r}
	case "back-c", "prune-c-open", "stop-c":
		return []projections.SessionSelection{a, back, r}
	case "prune-c-again":
		return []projections.SessionSelection{a, r}
	}
	return nil
}

// voidPoints are voidLedger's commits in stream order.
var voidPoints = []string{"select-a", "select-b", "select-c", "select-r", "start-a", "wait-a", "start-b", "start-r", "stop-r",
	"restart-r", "stop-b", "prune-a", "prune-b", "prune-r", "prune-c", "start-c", "back-c", "prune-c-open", "stop-c", "prune-c-again"}

// A SessionPruned folded while a turn of its session is running or
// waiting is void, one folded after the turn finished or before it
// started deletes the row, whatever the batches and the cache bound (a
// finished turn and, with no rows cached, every turn read back or
// started again unread). One projector catches up to start-r, to
// prune-c-open, then to the end: the second catch-up reads the open
// turns at prune-a from the table (t-a, t-b, t-r unfinished) and from its
// cache over them (t-b stopped, t-r started again, not yet written), the
// third keeps them; each ends on the rebuild's rows.
func TestSessionPruned_VoidWhileATurnIsOpen(t *testing.T) {
	st, seqs, ats := voidLedger(t)
	clean := rebuild(t, st)
	for _, tc := range pruneShapes {
		t.Run(tc.String(), func(t *testing.T) {
			db := openDB(t, "")
			p := projections.NewProjector(db, tc.opts()...)
			for _, through := range []string{"start-r", "prune-c-open", "prune-c-again"} {
				_, err := p.CatchUp(context.Background(), st, seqs[through])
				testutil.NoError(t, err)
				checkSessions(t, db, voidRowsAt(seqs, ats, through), through)
			}
			if got := dump(t, db); got != clean {
				t.Fatalf("dump differs from the rebuild's: %s", firstDiff(clean, got))
			}
		})
	}
}

// Catch-ups of one commit each list the rows of each point of the
// stream and end on the rebuild's dump: with a restart between every
// two (the database reopened, a new projector: the open turns are read
// from the turns table at the first prune, among them t-a's, started
// and set waiting several restarts before), and with one projector
// keeping them from one catch-up to the next.
func TestSessionPruned_OpenTurnsAcrossCatchUps(t *testing.T) {
	st, seqs, ats := voidLedger(t)
	clean := rebuild(t, st)
	for _, restart := range []bool{true, false} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "inc.sqlite")
			db, err := projections.Open(context.Background(), path)
			testutil.NoError(t, err)
			p := projections.NewProjector(db, projections.WithCacheRows(0))
			for _, name := range voidPoints {
				if restart {
					testutil.NoError(t, db.Close())
					db, err = projections.Open(context.Background(), path)
					testutil.NoError(t, err)
					p = projections.NewProjector(db, projections.WithCacheRows(0))
				}
				_, err := p.CatchUp(context.Background(), st, seqs[name])
				testutil.NoError(t, err)
				if want := voidRowsAt(seqs, ats, name); want != nil {
					checkSessions(t, db, want, name)
				}
			}
			if got := dump(t, db); got != clean {
				t.Fatalf("incremental dump differs from the rebuild: %s", firstDiff(clean, got))
			}
			testutil.NoError(t, db.Close())
		})
	}
}

// A crash at any row of any batch resumes to the rebuild's rows: the
// resumed catch-up reads the open turns the crashed one left in the
// turns table, not the ones it had folded.
func TestSessionPruned_VoidCrashResumesExactly(t *testing.T) {
	st, _, _ := voidLedger(t)
	for _, tc := range crashShapes {
		t.Run(tc.String(), func(t *testing.T) {
			if crashed := crashAndResume(t, st, 1, 1, tc.opts()...); crashed < 10 {
				t.Fatalf("only %d crash points", crashed)
			}
		})
	}
}

// Readers opening one new file at once (their own handles, as processes)
// each catch it up: a catch-up that finds the checkpoint moved starts
// again from it with the open turns read again, and the file ends as the
// rebuild's.
func TestSessionPruned_VoidWithReadersSharingADatabase(t *testing.T) {
	st, _, _ := voidLedger(t)
	clean := rebuild(t, st)
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "shared.sqlite")
		shareCatchUps(t, st, path, 4)
		if got := dumpFile(t, path); got != clean {
			t.Fatalf("round %d: the shared database differs from a rebuild: %s", round, firstDiff(clean, got))
		}
	}
}
