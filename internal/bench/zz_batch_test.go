package bench

import (
	"syscall"
	"time"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

func TestZZBatch(t *testing.T) {
	nstr := os.Getenv("ZZBATCH")
	if nstr == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(nstr)
	ctx := context.Background()
	dir := t.TempDir()
	st, err := events.Open(ctx, events.WithDataDir(dir), events.WithSyncAlways(false, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fr, err := fill(ctx, st, n)
	if err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("ZZCPU"); p != "" {
		f, _ := os.Create(p)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	for round := range 2 {
		for _, b := range []int{8192, 32768, 4096} {
			db, err := projections.Open(ctx, filepath.Join(dir, fmt.Sprintf("b%d-%d.sqlite", b, round)))
			if err != nil {
				t.Fatal(err)
			}
			c0 := cpuNow()
			r, err := projections.NewProjector(db, projections.WithBatchEvents(b)).CatchUp(ctx, st, fr.LastSeq)
			cpu := cpuNow() - c0
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			t.Logf("batch %d: %.0f events/s, cpu %.2f us/event", b, rate(r.Events, r.Elapsed), cpu.Seconds()*1e6/float64(r.Events))
		}
		c0 := cpuNow()
		rr, _, _ := rawRead(ctx, st, fr.LastSeq)
		cpu := cpuNow() - c0
		t.Logf("raw read %.0f cpu %.2f us/event", rr*float64(fr.Events)/float64(fr.Commits), cpu.Seconds()*1e6/float64(fr.Events))
		c0 = cpuNow()
		dr, _, _ := rawDecode(ctx, st, fr.LastSeq)
		cpu = cpuNow() - c0
		t.Logf("raw decode %.0f cpu %.2f us/event", dr, cpu.Seconds()*1e6/float64(fr.Events))
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
