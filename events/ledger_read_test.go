package events_test

import (
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// Ledger names the stream by its creation time and first commit's id:
// empty, it has no first id yet; after the first commit it has that
// commit's id and is the same ledger as before; reopened it is unchanged;
// another data directory is another ledger.
func TestLedger_Fingerprint(t *testing.T) {
	st, dir := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	empty, err := st.Ledger(ctx)
	testutil.NoError(t, err)
	if empty.Stream != events.StreamName || empty.Created.IsZero() || empty.FirstID != "" || empty.LastSeq != 0 {
		t.Fatalf("empty ledger %+v", empty)
	}
	evs := failure("turn-1", 1)
	_, err = st.Append(ctx, profileSubj, 0, evs...)
	testutil.NoError(t, err)
	full, err := st.Ledger(ctx)
	testutil.NoError(t, err)
	if full.FirstID != evs[0].ID || full.LastSeq != 1 || !full.Same(empty) || !full.Created.Equal(empty.Created) {
		t.Fatalf("ledger after the first commit %+v (empty %+v)", full, empty)
	}
	testutil.NoError(t, st.Close())

	st2, err := events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	defer st2.Close()
	again, err := st2.Ledger(ctx)
	testutil.NoError(t, err)
	if again != full {
		t.Fatalf("reopened ledger %+v, want %+v", again, full)
	}
	other, _ := testutil.OpenStore(t)
	_, err = other.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	ol, err := other.Ledger(ctx)
	testutil.NoError(t, err)
	if ol.Same(full) {
		t.Fatalf("two data directories are one ledger: %v and %v", ol, full)
	}
	testutil.NoError(t, st2.Close())
	_, err = st2.Ledger(ctx)
	testutil.ErrorIs(t, err, events.ErrClosed)
}
