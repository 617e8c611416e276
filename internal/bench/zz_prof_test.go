package bench

import (
	"iter"
	"database/sql"
	_ "modernc.org/sqlite"
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

func TestZZProf(t *testing.T) {
	nstr := os.Getenv("ZZPROF")
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
	t.Logf("fill %d events %d commits %v", fr.Events, fr.Commits, fr.Elapsed)
	evc := float64(fr.Events) / float64(fr.Commits)
	for range 2 {
		rr, _, err := rawRead(ctx, st, fr.LastSeq)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("raw read %.0f events/s", rr*evc)
		start := time.Now()
		reg := events.NewCatalogRegistry()
		it, _ := events.NewRawReader(ctx, st)
		ne := 0
		for s := uint64(0); s < fr.LastSeq; {
			seq, subj, data, err := it.NextMsg()
			if err != nil {
				t.Fatal(err)
			}
			s = seq
			evs, err := reg.DecodeCommit(data, seq, subj)
			if err != nil {
				t.Fatal(err)
			}
			ne += len(evs)
		}
		it.Stop()
		t.Logf("raw read+decode %.0f events/s (%d)", rate(ne, time.Since(start)), ne)
		start = time.Now()
		ne = 0
		for _, err := range st.Read(ctx, 1) {
			if err != nil {
				t.Fatal(err)
			}
			ne++
		}
		t.Logf("store.Read %.0f events/s (%d)", rate(ne, time.Since(start)), ne)
		start = time.Now()
		ne = 0
		for _, err := range st.(interface{ ReadRange(context.Context, uint64, uint64) iter.Seq2[events.Event, error] }).ReadRange(ctx, 1, 0) {
			if err != nil {
				t.Fatal(err)
			}
			ne++
		}
		t.Logf("store.ReadRange %.0f events/s (%d)", rate(ne, time.Since(start)), ne)
	}
	if p := os.Getenv("ZZCPU"); p != "" {
		f, _ := os.Create(p)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(live)
	t.Logf("before: live %.1f MiB objects %.1f MiB", float64(live[0].Value.Uint64())/(1<<20), float64(live[1].Value.Uint64())/(1<<20))
	var peak, peakObj uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(5 * time.Millisecond)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			peakObj = max(peakObj, s[1].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	hstop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-hstop:
				return
			case <-time.After(2 * time.Second):
			}
			f, _ := os.Create("/tmp/rbh-" + strconv.Itoa(i) + ".heap")
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}()
	r, err := rebuild(ctx, st, dir, fr.LastSeq)
	close(hstop)
	db, _ := sql.Open("sqlite", dir+"/rebuild.sqlite")
	rows, _ := db.Query("SELECT outcome, count(*) FROM turns GROUP BY outcome")
	for rows.Next() {
		var o string
		var c int
		rows.Scan(&o, &c)
		t.Logf("turns %s %d", o, c)
	}
	rows.Close()
	for _, tb := range []string{"usage_stats", "session_selection", "fallback_decisions", "attempts"} {
		var c int
		db.QueryRow("SELECT count(*) FROM " + tb).Scan(&c)
		t.Logf("%s %d", tb, c)
	}
	db.Close()
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rebuild %.0f events/s (%d in %v); peak live %.1f MiB, peak objects %.1f MiB", r.PerSecond, r.Events, r.Elapsed, float64(peak)/(1<<20), float64(peakObj)/(1<<20))
	if p := os.Getenv("ZZHEAP"); p != "" {
		f, _ := os.Create(p)
		pprof.WriteHeapProfile(f)
		f.Close()
	}
}
