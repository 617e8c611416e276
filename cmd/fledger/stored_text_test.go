package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

// appendStored appends p for agent as one commit straight to the store of
// data, as a ledger written before a rule (or by another writer) may hold
// it: no engine check runs.
func appendStored(t *testing.T, data, agent, key string, p events.Payload) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := events.Open(ctx, events.WithDataDir(data))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	subject, err := events.Subject(agent, p.EventAggregate(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, subject, events.AnySeq, events.New(agent, key, time.Now(), p)); err != nil {
		t.Fatal(err)
	}
}

// Stored text holding a line break or a terminal escape prints escaped,
// on its own line: a by of "x\nFAKE LINE" forges no line of explain.
func TestExplain_StoredControlCharactersPrintOnOneLine(t *testing.T) {
	data := twoAgentLedger(t)
	appendStored(t, data, "alpha", "openai", events.AuthOrderSet{Provider: "openai", ProfileIDs: []string{"openai:x\x1b[2J"}, By: "x\nFAKE LINE"})
	out, _, err := runFledger2(t, "--data", data, "explain", "--session", "slack-dm-bob", "--agent", "alpha")
	if err != nil {
		t.Fatal(err)
	}
	var ctxLines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "FAKE LINE") {
			t.Errorf("a stored line break printed a line of its own: %q", l)
		}
		if strings.Contains(l, "context (agent alpha") {
			ctxLines = append(ctxLines, l[strings.Index(l, "context"):])
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("a stored escape reached the output raw")
	}
	want := `context (agent alpha, seq 47, agent-wide): stored auth order of openai → openai:x\x1b[2J (by x\nFAKE LINE)`
	if len(ctxLines) == 0 || ctxLines[len(ctxLines)-1] != want {
		t.Errorf("context lines %q\nwant last %q", ctxLines, want)
	}
}
