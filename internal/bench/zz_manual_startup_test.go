package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/fledger/fledger/events"
)

func TestManualStartup(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SNAP_EVENTS"))
	dir := os.Getenv("SNAP_DIR")
	if n == 0 || dir == "" {
		t.Skip()
	}
	ctx := context.Background()
	st, err := events.Open(ctx, events.WithDataDir(dir), events.WithSyncAlways(false, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	last, _ := st.LastSeq(ctx, "")
	if last == 0 {
		fr, err := fill(ctx, st, n)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("filled %d events, %d commits in %s\n", fr.Events, fr.Commits, fr.Elapsed)
	}
	r, err := startup(ctx, st, n)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("RESULT %+v\n", r)
}
