package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
)

// filterLine is what the filter tests read of an `events --json` line.
type filterLine struct {
	Seq           uint64          `json:"seq"`
	Agent         string          `json:"agent"`
	Type          string          `json:"type"`
	Aggregate     string          `json:"aggregate"`
	Key           string          `json:"key"`
	CorrelationID string          `json:"correlation_id"`
	Payload       json.RawMessage `json:"payload"`
}

func parseLines(t *testing.T, out string) []filterLine {
	t.Helper()
	var ls []filterLine
	for _, l := range lines(out) {
		var fl filterLine
		if err := json.Unmarshal([]byte(l), &fl); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		ls = append(ls, fl)
	}
	return ls
}

// ofTurn is the oracle: the lines of the commits (by seq) of agent one of
// whose events has the turn as its correlation id or is the turn's own
// event.
func ofTurn(all []filterLine, agent, turn string) []filterLine {
	seqs := map[uint64]bool{}
	for _, l := range all {
		if l.Agent == agent && (l.CorrelationID == turn || l.Aggregate == "turn" && l.Key == turn) {
			seqs[l.Seq] = true
		}
	}
	var out []filterLine
	for _, l := range all {
		if seqs[l.Seq] {
			out = append(out, l)
		}
	}
	return out
}

// `fledger events --turn ID` lists exactly the turn's commits — on its
// turn subject and under its profiles — and `--session KEY` those of the
// session and its turns, decided by the events, so that a ledger written
// before commits carried headers lists the same.
func TestEventsCmd_TurnAndSessionFilters(t *testing.T) {
	fresh := t.TempDir()
	if out, err := runFledger(t, "--data", fresh, "run", filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml")); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	old := t.TempDir()
	loadLedgerInto(t, old, "first-release")
	for name, data := range map[string]string{"fresh run": fresh, "first-release ledger": old} {
		t.Run(name, func(t *testing.T) {
			out, _, err := runFledger2(t, "--data", data, "events", "--json")
			if err != nil {
				t.Fatal(err)
			}
			all := parseLines(t, out)
			type agentTurn struct{ agent, turn string }
			sessions := map[agentTurn]string{} // session of each turn
			for _, l := range all {
				if l.Type == "TurnStarted" {
					var p struct {
						TurnID  string `json:"turn_id"`
						Session string `json:"session"`
					}
					_ = json.Unmarshal(l.Payload, &p)
					sessions[agentTurn{l.Agent, p.TurnID}] = p.Session
				}
			}
			if len(sessions) < 2 {
				t.Fatalf("%d turns", len(sessions))
			}
			withProfile := 0
			for at, sess := range sessions {
				out, errOut, err := runFledger2(t, "--data", data, "events", "--json", "--agent", at.agent, "--turn", at.turn)
				if err != nil {
					t.Fatalf("--turn %s: %v\n%s", at.turn, err, errOut)
				}
				got, want := parseLines(t, out), ofTurn(all, at.agent, at.turn)
				if len(want) == 0 || !slices.EqualFunc(got, want, func(a, b filterLine) bool { return a.Seq == b.Seq && a.Type == b.Type && a.Key == b.Key }) {
					t.Fatalf("--turn %s listed %d events, want %d:\n%s", at.turn, len(got), len(want), out)
				}
				if slices.ContainsFunc(got, func(l filterLine) bool { return l.Aggregate == "profile" }) {
					withProfile++
				}
				// A session: its own commits and every commit of its turns.
				out, _, err = runFledger2(t, "--data", data, "events", "--json", "--agent", at.agent, "--session", sess)
				if err != nil {
					t.Fatal(err)
				}
				seqs := map[uint64]bool{}
				for at2, s := range sessions {
					if s == sess && at2.agent == at.agent {
						for _, l := range ofTurn(all, at.agent, at2.turn) {
							seqs[l.Seq] = true
						}
					}
				}
				for _, l := range all {
					if l.Agent == at.agent && l.Aggregate == "session" && l.Key == sess {
						seqs[l.Seq] = true
					}
				}
				var wantSeqs, gotSeqs []uint64
				for _, l := range all {
					if seqs[l.Seq] {
						wantSeqs = append(wantSeqs, l.Seq)
					}
				}
				for _, l := range parseLines(t, out) {
					gotSeqs = append(gotSeqs, l.Seq)
				}
				if !slices.Equal(gotSeqs, wantSeqs) {
					t.Fatalf("--session %s listed seqs %v, want %v", sess, gotSeqs, wantSeqs)
				}
			}
			if withProfile == 0 {
				t.Fatal("no turn listed a commit stored under a profile")
			}
			// An unknown turn lists nothing; the table says so.
			tab, errOut, err := runFledger2(t, "--data", data, "events", "--turn", "no-such-turn")
			if err != nil || len(lines(tab)) != 1 || !strings.Contains(errOut, "no events") {
				t.Fatalf("unknown turn: %v\n%s%s", err, tab, errOut)
			}
		})
	}
}

// `--turn --follow` prints a turn's commits as they are stored, whole,
// without waiting for a later commit.
func TestEventsCmd_TurnFollow(t *testing.T) {
	data := t.TempDir()
	if out, err := runFledger(t, "--data", data, "run", filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml")); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	out, _, err := runFledger2(t, "--data", data, "events", "--json")
	if err != nil {
		t.Fatal(err)
	}
	all := parseLines(t, out)
	last := all[len(all)-1]
	turn := last.CorrelationID
	if turn == "" {
		t.Skip("the last commit names no turn")
	}
	want := ofTurn(all, last.Agent, turn)
	root := newRootCmd()
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	root.SetOut(pw)
	root.SetErr(pw)
	root.SetArgs([]string{"--data", data, "events", "--json", "--follow", "--turn", turn})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 4<<20)
	timer := time.AfterFunc(30*time.Second, cancel)
	defer timer.Stop()
	for i := range want {
		if !sc.Scan() {
			t.Fatalf("follow ended after %d of %d lines", i, len(want))
		}
	}
	cancel()
	<-done
}

// loadLedgerInto publishes fixtures/ledgers/NAME.jsonl byte for byte into
// a fresh stream in data (as replay/history_test.go does): a ledger
// without fledger's metadata headers.
func loadLedgerInto(t *testing.T, data, name string) {
	t.Helper()
	st, err := events.Open(context.Background(), events.WithDataDir(data), events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	js, err := jetstream.New(natstest.DialWriter(t, st))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("..", "..", "fixtures", "ledgers", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	for sc.Scan() {
		var m struct {
			Subject string          `json:"subject"`
			MsgID   string          `json:"msg_id"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		msg := &nats.Msg{Subject: m.Subject, Data: m.Data, Header: nats.Header{jetstream.MsgIDHeader: []string{m.MsgID}}}
		if _, err := js.PublishMsg(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// A turn id two agents both have (two scenarios on one stream) lists
// both agents' turns, with a note naming them; --agent picks one.
func TestEventsCmd_TurnOfSeveralAgentsIsNoted(t *testing.T) {
	data := t.TempDir()
	loadLedgerInto(t, data, "first-release")
	out, errOut, err := runFledger2(t, "--data", data, "events", "--json", "--turn", "storm")
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]bool{}
	for _, l := range parseLines(t, out) {
		agents[l.Agent] = true
	}
	if len(agents) != 2 || !strings.Contains(errOut, "note: agents scn-incident-day-edce8949, scn-rate-limit-storm-201d66d2 each have commits") {
		t.Fatalf("agents %v, stderr %q", agents, errOut)
	}
	_, errOut, err = runFledger2(t, "--data", data, "events", "--agent", "scn-incident-day-edce8949", "--turn", "storm")
	if err != nil || strings.Contains(errOut, "note:") {
		t.Fatalf("--agent: %v %q", err, errOut)
	}
}
