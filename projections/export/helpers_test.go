package export

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
)

// runScenario plays fixtures/scenarios/<name>.yaml into st under agent.
func runScenario(t testing.TB, ctx context.Context, st events.Store, name, agent string) {
	t.Helper()
	sc, err := scenario.LoadFile(filepath.Join("..", "..", "fixtures", "scenarios", name+".yaml"))
	testutil.NoError(t, err)
	_, err = scenario.Run(ctx, st, sc, scenario.Options{Agent: agent})
	testutil.NoError(t, err)
}

// allScenarios are the fixture scenarios with decision records.
var allScenarios = []string{"anthropic-overload", "chain-overload", "group-chat-suppressed", "incident-day",
	"model-scoped-cooldown", "rate-limit-storm", "user-model-strict", "billing-disable-expiry", "context-overflow"}

// runAll plays every scenario of allScenarios into st, each under its own
// name as agent (24 decision records in all).
func runAll(t testing.TB, ctx context.Context, st events.Store) {
	t.Helper()
	for _, n := range allScenarios {
		runScenario(t, ctx, st, n, n)
	}
}

// exportAll returns the JSONL export of the whole stream.
func exportAll(t testing.TB, ctx context.Context, st events.Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	sink := NewJSONL(&buf)
	_, err := Range(ctx, st, 0, sink, 3)
	testutil.NoError(t, err)
	testutil.NoError(t, sink.Close())
	return buf.Bytes()
}

// lines splits JSONL output into its lines (without newlines).
func lines(b []byte) []string {
	var out []string
	for _, l := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		if len(l) > 0 {
			out = append(out, string(l))
		}
	}
	return out
}

// seqOf returns a JSONL line's seq.
func seqOf(t testing.TB, line string) uint64 {
	t.Helper()
	var r struct {
		Seq uint64 `json:"seq"`
	}
	testutil.NoError(t, json.Unmarshal([]byte(line), &r))
	return r.Seq
}

// t0 is a fixed decision time for hand-built events.
func t0() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 250e6, time.UTC) }
