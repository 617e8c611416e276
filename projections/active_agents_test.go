package projections_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// ActiveAgents puts the agent of the stream's last commit first, whatever
// the events' times: "scn" recorded last on a virtual clock a year back
// comes before "main", whose events are timed later; then by name.
func TestActiveAgents_StreamOrderFirst(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		agent string
		at    time.Time
	}{
		{"main", now},
		{"zeta", now.Add(-time.Hour)},
		{"scn", now.AddDate(-1, 0, 0)},
	} {
		ev := events.New(c.agent, "s1", c.at, events.SessionReset{Session: "s1", Kind: "new"})
		subj, err := ev.Subject()
		testutil.NoError(t, err)
		_, err = st.Append(ctx, subj, events.AnySeq, ev)
		testutil.NoError(t, err)
	}
	db := openDB(t, "")
	catchUp(t, db, st, 0)
	got, err := db.ActiveAgents(ctx)
	testutil.NoError(t, err)
	if want := []string{"scn", "zeta", "main"}; !slices.Equal(got, want) {
		t.Fatalf("ActiveAgents = %v, want %v", got, want)
	}
}
