package events_test

import (
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
)

// Every commit of every fixture scenario, played into one in-memory store
// (each under its own agent), decodes alike on the fast path and on
// go-json's, and takes the fast path (events.CheckFastDecode).
func TestDecodeFast_FixtureScenarios(t *testing.T) {
	ctx := testutil.Context(t)
	st, err := events.OpenMemory()
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	testutil.NoError(t, scenario.RunFiles(ctx, st, testutil.Scenarios(t)))
	r := events.NewCatalogRegistry()
	n := 0
	for seq := uint64(1); ; seq++ {
		subject, _, data, ok := events.MemoryMessage(st, seq)
		if !ok {
			break
		}
		n++
		taken, err := events.CheckFastDecode(r, data, seq, subject)
		if err != nil {
			t.Fatalf("seq %d (%s): %v", seq, subject, err)
		}
		if !taken {
			t.Fatalf("seq %d (%s): not taken by the fast path: %.300s", seq, subject, data)
		}
	}
	t.Logf("%d commits compared", n)
	if n < 500 {
		t.Fatalf("only %d commits stored", n)
	}
}
