package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestBoundedList(t *testing.T) {
	cases := []struct {
		items         []string
		maxItems, max int
		want          string
	}{
		{nil, 4, 100, ""},
		{[]string{"a"}, 4, 100, "a"},
		{[]string{"a", "b", "c"}, 4, 100, "a,b,c"},
		{[]string{"a", "b", "c", "d", "e"}, 2, 100, "a,b,+3 more"},
		{[]string{"aaaa", "bbbb", "cccc"}, 9, 13, "aaaa,+2 more"},
		{[]string{"aaaa", "bbbb", "cccc", "dddd"}, 9, 18, "aaaa,bbbb,+2 more"},
		{[]string{strings.Repeat("x", 50)}, 9, 16, "+1 more"},
		{[]string{"aaaa", "bbbb"}, 9, 9, "aaaa,bbbb"},
	}
	for _, tc := range cases {
		got := boundedList(tc.items, tc.maxItems, tc.max)
		if got != tc.want || len(got) > tc.max {
			t.Errorf("boundedList(%q, %d, %d) = %q, want %q", tc.items, tc.maxItems, tc.max, got, tc.want)
		}
	}
}

// maxCommit is a commit exactly at s's size limit with the longest
// headers fledger writes: an agent and a profile key at their length
// limits with every byte escaped in the subject, guarded by the
// profile's wildcard guard, with a message id, and as many events as a
// commit may hold, each of another long turn and session.
func maxCommit(t *testing.T, s *store, n int) AppendRequest {
	t.Helper()
	agent := strings.Repeat("é", MaxAgentLen/2)
	key := fmt.Sprintf("%03d", n) + strings.Repeat(".", MaxKeyLen-3)
	g, err := ProfileGuardsOf(agent, key)
	if err != nil {
		t.Fatal(err)
	}
	req := AppendRequest{Subject: g.Failures, Guard: g.AnyOf, Expected: 0, MsgID: "step-" + strings.Repeat("0", 64) + fmt.Sprint(n)}
	for i := range s.cfg.maxEvents {
		turn := fmt.Sprintf("%d-%03d-", n, i) + strings.Repeat(",", MaxKeyLen-8)
		req.Events = append(req.Events, New(agent, turn, groupT0,
			NoticeSent{TurnID: turn, Session: turn + "s", Kind: "fallback", Text: "x"}, WithCorrelation(turn)))
		if bodySize(t, s, req) > s.cfg.maxCommitBytes-4<<10 {
			break
		}
	}
	// Pad the last event's text to bring the body to the limit exactly.
	last := &req.Events[len(req.Events)-1]
	ns := last.Data.(NoticeSent)
	ns.Text += strings.Repeat("x", s.cfg.maxCommitBytes-bodySize(t, s, req))
	last.Data = ns
	if b := bodySize(t, s, req); b != s.cfg.maxCommitBytes {
		t.Fatalf("commit is %d bytes, want %d", b, s.cfg.maxCommitBytes)
	}
	return req
}

// bodySize is the size of req's body, whatever the limit.
func bodySize(t *testing.T, s *store, req AppendRequest) int {
	t.Helper()
	envs, err := s.reg.encodeEnvelopes(req.Events)
	if err != nil {
		t.Fatal(err)
	}
	body, err := marshalCommit(envs, req.Basis)
	if err != nil {
		t.Fatal(err)
	}
	return len(body)
}

// A commit at the size limit with the longest headers still appends,
// alone and in an atomic batch: the metadata headers stay inside the room
// the limit leaves for headers, cut (never refused) when it runs short.
func TestAppend_CommitAtSizeLimitWithMetaHeaders(t *testing.T) {
	t.Run("default limit, alone", func(t *testing.T) {
		s := openGroupStore(t)
		for i, urgent := range []bool{false, true} {
			req := maxCommit(t, s, i)
			req.Urgent = urgent
			msg, _, err := s.commitMsg(req)
			if err != nil {
				t.Fatal(err)
			}
			if msg.Header.Get(HeaderSchema) != CommitSchema || msg.Header.Get(HeaderEvents) == "" || len(msg.Data) != s.cfg.maxCommitBytes {
				t.Fatalf("headers %v, body %d bytes", msg.Header, len(msg.Data))
			}
			if n := headerLen(msg.Header); n > headerRoom-headerSlack {
				t.Fatalf("headers are %d bytes, over %d", n, headerRoom-headerSlack)
			}
			res, err := s.AppendCommit(context.Background(), req)
			if err != nil {
				t.Fatalf("urgent %v: %v", urgent, err)
			}
			m, err := s.stream.GetMsg(context.Background(), res.Seq)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(m.Header.Get(HeaderTurn), " more") || m.Header.Get(HeaderAgent) != EncodeToken(req.Events[0].Agent) {
				t.Fatalf("stored headers %v", m.Header)
			}
		}
	})
	t.Run("atomic batch", func(t *testing.T) {
		st, err := Open(context.Background(), WithDataDir(t.TempDir()), WithMaxCommitBytes(64<<10))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		s := st.(*store)
		c := s.group
		c.close()
		s.group = nil
		var group []*pendingPub
		for i := range groupBatchMin {
			msg, _, err := s.commitMsg(maxCommit(t, s, i))
			if err != nil {
				t.Fatal(err)
			}
			group = append(group, newPending(msg))
		}
		c.queue = append([]*pendingPub(nil), group...)
		c.flush(c.take())
		for i, p := range group {
			if r := <-p.done; r.err != nil {
				t.Fatalf("member %d: %v", i, r.err)
			}
		}
		if st := c.stats(); st.Batches != 1 {
			t.Fatalf("stats %+v, want one batch", st)
		}
	})
}
