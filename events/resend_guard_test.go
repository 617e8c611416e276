package events_test

import (
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// A commit stored under one subject and guarded by another (a turn's
// start guarded by its session), sent again with the same message id and
// expectation after the guard moved (its first answer lost, a session
// command stored since): the server checks the expectation before the
// id, and the store finds the first send under the commit's own subject —
// the duplicate it is, not a conflict.
func TestAppend_ResendGuardedByAnotherSubject(t *testing.T) {
	for name, open := range map[string]func() events.Store{
		"nats":   func() events.Store { st, _ := testutil.OpenStore(t); return st },
		"memory": func() events.Store { st, err := events.OpenMemory(); testutil.NoError(t, err); return st },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := testutil.Context(t)
			st := open()
			at := time.UnixMilli(1_700_000_000_000)
			sess, _ := events.Subject("main", events.AggSession, "s1")
			turn, _ := events.Subject("main", events.AggTurn, "t1")
			gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
			sel := events.New("main", "s1", at, events.SessionModelSelected{Session: "s1", Model: gpt, Source: "user"})
			if _, err := st.AppendCommit(ctx, events.AppendRequest{Subject: sess, Expected: 0, Events: []events.Event{sel}}); err != nil {
				t.Fatal(err)
			}
			start := events.New("main", "t1", at, events.TurnStarted{TurnID: "t1", Session: "s1", Requested: gpt,
				Chain: []events.Candidate{{Provider: "openai", Model: "gpt-5"}}, ConfigHash: "sha256:x", StartedAt: at.UnixMilli(), SelectionSource: "user", AttemptLimit: 1})
			req := events.AppendRequest{Subject: turn, Guard: sess, Expected: 1, MsgID: "step-x", Events: []events.Event{start}}
			first, err := st.AppendCommit(ctx, req)
			testutil.NoError(t, err)
			sel2 := events.New("main", "s1", at, events.SessionModelSelected{Session: "s1", Model: events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}, Source: "user"})
			if _, err := st.AppendCommit(ctx, events.AppendRequest{Subject: sess, Expected: 1, Events: []events.Event{sel2}}); err != nil {
				t.Fatal(err)
			}
			again, err := st.AppendCommit(ctx, req)
			if err != nil {
				t.Fatalf("re-send of the commit stored at seq %d: %v", first.Seq, err)
			}
			if again.Seq != first.Seq || !again.Duplicate || again.Taken {
				t.Fatalf("re-send: seq %d duplicate %v taken %v; want seq %d, a duplicate of our own", again.Seq, again.Duplicate, again.Taken, first.Seq)
			}
		})
	}
}
