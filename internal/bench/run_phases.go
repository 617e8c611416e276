package bench

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fledger/fledger/events"
)

// publishLimits measures raw JetStream publishes, sync and async, on the
// fsync-always and the fsync-interval server; it returns each server's
// JetStream context by name for the interleaved probes.
func (b *runner) publishLimits(syncSt, ivSt events.Store) (map[string]*events.RawBench, error) {
	jss := map[string]*events.RawBench{}
	for _, c := range []struct {
		name      string
		st        events.Store
		syncN, aN int
	}{{"fsync always", syncSt, b.sz.syncPubFsync, b.sz.asyncPubFsync}, {"fsync interval", ivSt, b.sz.syncPub, b.sz.asyncPub}} {
		b.progress("raw JetStream publish, %s", c.name)
		js, err := rawJS(b.ctx, c.st)
		if err != nil {
			return nil, err
		}
		r, lat, err := publishSync(b.ctx, js, b.bodies, c.syncN)
		if err != nil {
			return nil, err
		}
		s := sortedCopy(lat)
		jss[c.name] = js
		b.addLimit("sync "+c.name, Measure{Name: "js publish sync, " + c.name, Value: r, Unit: "msg/s",
			Detail: fmt.Sprintf("%d msgs of %d B; p50 %.0f µs, p99 %.0f µs", c.syncN, b.avgBody, us(pct(s, 50)), us(pct(s, 99)))})
		r, err = publishAsync(b.ctx, js, b.bodies, c.aN)
		if err != nil {
			return nil, err
		}
		b.addLimit("async "+c.name, Measure{Name: "js publish async, " + c.name, Value: r, Unit: "msg/s",
			Detail: fmt.Sprintf("%d msgs, 4096 in flight", c.aN)})
	}
	return jss, nil
}

// diskLimits measures write + fsync latency and SQLite batched upserts.
func (b *runner) diskLimits() error {
	b.progress("raw fsync")
	fl, err := fsyncLatencies(b.tmp, b.sz.fsyncs)
	if err != nil {
		return err
	}
	fs := sortedCopy(fl)
	b.addLimit("fsync", Measure{Name: "write 512 B + fsync, p99", Value: us(pct(fs, 99)), Unit: "µs",
		Detail: fmt.Sprintf("%d writes; p50 %.0f µs", b.sz.fsyncs, us(pct(fs, 50)))})
	b.progress("raw SQLite upsert")
	up, err := rawUpsert(b.ctx, filepath.Join(b.tmp, "upsert.sqlite"), b.sz.upserts)
	if err != nil {
		return err
	}
	b.addLimit("upsert", Measure{Name: "sqlite upsert, 1000 rows/tx", Value: up, Unit: "rows/s",
		Detail: fmt.Sprintf("%d rows, 15 cols, 1000 keys, prepared, WAL, synchronous=NORMAL", b.sz.upserts)})
	return nil
}

// classifyRows measures the classifier over the fixture vectors.
func (b *runner) classifyRows(fixtures string) error {
	b.progress("classification")
	vs, err := loadVectors(fixtures)
	if err != nil {
		return err
	}
	cr := measureClassify(vs, b.sz.classifyRounds)
	b.rep.Rows = append(b.rep.Rows,
		barRow(Measure{Name: "classify, median per error", Value: us(cr.P50), Unit: "µs",
			Detail: fmt.Sprintf("%d vectors × %d calls, each vector's best of 5 batches; p90 %.1f µs, p99 %.1f µs", cr.Vectors, b.sz.classifyRounds, us(cr.P90), us(cr.P99))},
			nil, "< 10 µs", us(cr.P50) < 10),
		barRow(Measure{Name: "classify, all vectors", Value: cr.PerSecond, Unit: "errors/s",
			Detail: "every call timed, preemption included"}, nil, "", true))
	return nil
}

// decideRows measures decide + append on both servers, each decision
// interleaved with one raw publish (jss) for a same-moment comparison.
func (b *runner) decideRows(jss map[string]*events.RawBench, syncSt, ivSt events.Store) error {
	for _, c := range []struct {
		name string
		st   events.Store
		n    int
		bar  bool
	}{{"fsync always", syncSt, b.sz.attemptsFsync, true}, {"fsync interval", ivSt, b.sz.attempts, false}} {
		b.progress("decide + append, %s", c.name)
		js := jss[c.name]
		probe := func(i int) (time.Duration, error) {
			t := time.Now()
			err := js.Publish(b.ctx, "bench.probe."+strconv.Itoa(i%1000), b.bodies[i%len(b.bodies)])
			return time.Since(t), err
		}
		dr, err := runDecide(b.ctx, c.st, "bench-"+strings.ReplaceAll(c.name, " ", "-"), c.n, probe)
		if err != nil {
			return err
		}
		d, a := sortedCopy(dr.Decision), sortedCopy(dr.Append)
		pl := sortedCopy(dr.Probe)
		rawP50 := Measure{Name: "js publish sync p50 interleaved, " + c.name, Value: us(pct(pl, 50)), Unit: "µs", Detail: "one raw publish after each turn"}
		rawP99 := Measure{Name: "js publish sync p99 interleaved, " + c.name, Value: us(pct(pl, 99)), Unit: "µs", Detail: "one raw publish after each turn"}
		detail := fmt.Sprintf("%d decisions over %d attempts in %d turns; Store.Append alone p50 %.0f µs, p99 %.0f µs",
			dr.Decisions, dr.Attempts, dr.Turns, us(pct(a, 50)), us(pct(a, 99)))
		b.rep.Rows = append(b.rep.Rows, barRow(Measure{Name: "decide+append p50, " + c.name, Value: us(pct(d, 50)), Unit: "µs", Detail: detail}, &rawP50, "", true))
		p99 := Measure{Name: "decide+append p99, " + c.name, Value: us(pct(d, 99)), Unit: "µs"}
		if c.bar {
			p99.Detail = fmt.Sprintf("raw fsync p99 in this run %.0f µs", b.lim["fsync"].Value)
			b.rep.Rows = append(b.rep.Rows, barRow(p99, &rawP99, "< 1000 µs", us(pct(d, 99)) < 1000))
		} else {
			b.rep.Rows = append(b.rep.Rows, barRow(p99, &rawP99, "", true))
		}
		b.rep.Rows = append(b.rep.Rows, barRow(Measure{Name: "attempts/s, " + c.name, Value: rate(dr.Attempts, dr.Elapsed), Unit: "attempts/s",
			Detail: fmt.Sprintf("%.2f decisions per attempt", float64(dr.Decisions)/float64(dr.Attempts))}, b.lim["sync "+c.name], "", true))
	}
	return nil
}

// stepRows measures one step decision with 1, 10 and 100 profiles per
// provider.
func (b *runner) stepRows() error {
	for _, k := range []int{1, 10, 100} {
		b.progress("step decision, %d profiles per provider", k)
		d, err := measureSteps(k, b.sz.stepTime)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("step decision, %d profiles/provider", k)
		if k == 1 {
			name = "step decision, 1 profile/provider"
		}
		b.rep.Rows = append(b.rep.Rows, barRow(Measure{Name: name, Value: us(d), Unit: "µs",
			Detail: "policy.OnOutcome(429) → cooldown + rotation; pure CPU, best of 5 batches"}, nil, "", true))
	}
	return nil
}
