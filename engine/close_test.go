package engine

import (
	"runtime"
	"testing"
	"weak"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/internal/testutil"
)

// TestClose_StateIsGarbageAtOnce: once Close returns, nothing keeps the
// engine's state — not the store's consumer, whose subscription winds
// down later — so an engine closed is its memory given back (and the
// heap figures of `fledger bench` measure the state).
func TestClose_StateIsGarbageAtOnce(t *testing.T) {
	st := testutil.Store(t)
	ctx := testutil.Context(t)
	e, err := New(ctx, st, "main", WithClock(testutil.NewManualClock(testutil.T0)), WithSnapshotEvery(0))
	testutil.NoError(t, err)
	l, err := config.Parse([]byte(testutil.TwoProviderConfig), "test")
	testutil.NoError(t, err)
	_, _, err = e.ApplyConfig(ctx, "test", l)
	testutil.NoError(t, err)
	_, err = e.RunTurn(ctx, TurnRequest{TurnID: "t1", Session: "s1"}, script{})
	testutil.NoError(t, err)
	w := weak.Make(e.st)
	e.Close()
	e = nil // the engine is garbage too
	runtime.GC()
	runtime.GC()
	if w.Value() != nil {
		t.Fatal("the closed engine's state is still reachable")
	}
}
