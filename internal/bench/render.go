package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// num formats v with thousands separators (no decimals from 100 up, one
// decimal below).
func num(v float64) string {
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// RatioText renders a row's ratio: a percentage of the limit for rates,
// a multiple of the limit for latencies.
func (r Row) RatioText() string {
	if r.Limit == nil || r.Ratio == 0 {
		return "—"
	}
	if strings.HasSuffix(r.Figure.Unit, "/s") {
		return fmt.Sprintf("%.0f%%", 100*r.Ratio)
	}
	return fmt.Sprintf("%.2f×", r.Ratio)
}

// WriteText prints the report as aligned tables.
func WriteText(w io.Writer, rep *Report) error {
	mode := "full"
	if rep.Quick {
		mode = "quick"
	}
	if rep.ConcurrencyOnly {
		mode += ", concurrency sweep only"
	}
	fmt.Fprintf(w, "fledger bench (%s) %s, %s, %d CPUs, load avg %s before / %s after, %.1f s\n\n",
		mode, rep.Started.UTC().Format("2006-01-02 15:04 UTC"), rep.Go, rep.CPUs, rep.LoadBefore, rep.LoadAfter, rep.Elapsed.Seconds())
	if len(rep.Limits) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LIMIT (raw, this run)\tvalue\tunit\tdetail")
		for _, m := range rep.Limits {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, num(m.Value), m.Unit, m.Detail)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FLEDGER\tvalue\tunit\tlimit\tratio\tbar\tstatus")
	for _, r := range rep.Rows {
		limit := "—"
		if r.Limit != nil {
			limit = fmt.Sprintf("%s %s (%s)", num(r.Limit.Value), r.Limit.Unit, r.Limit.Name)
		}
		bar := r.Bar
		if bar == "" {
			bar = "—"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Figure.Name, num(r.Figure.Value), r.Figure.Unit, limit, r.RatioText(), bar, r.Status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if rep.Concurrency != nil {
		if err := writeSweep(w, rep.Concurrency); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, r := range rep.Rows {
		if r.Figure.Detail != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.Figure.Name, r.Figure.Detail)
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	misses := 0
	for _, r := range rep.Rows {
		if r.Status == "MISS" {
			misses++
			fmt.Fprintf(w, "MISS: %s = %s %s, bar %s\n", r.Figure.Name, num(r.Figure.Value), r.Figure.Unit, r.Bar)
		}
	}
	if misses == 0 {
		fmt.Fprintln(w, "all bars met")
	}
	return nil
}

// writeSweep prints the concurrency sweep: the raw publish rates per
// concurrency, then one line per path and level.
func writeSweep(w io.Writer, sw *Sweep) error {
	fmt.Fprintf(w, "CONCURRENCY SWEEP (fsync always, %s of new turns per level, %d%% of calls a 429)\n", sw.LevelTime, sw.FailPct)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "raw js publish, concurrent\tsync msg/s\tsync p50 µs\tsync p99 µs\tasync msg/s (N in flight)\t")
	for _, r := range sw.Raw {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t\n", r.Concurrency, num(r.SyncPerSec), num(r.SyncP50us), num(r.SyncP99us), num(r.AsyncPerSec))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\tconcurrent\tturns/s\tp50 ms\tp99 ms\tturns\tanswered\tcommits/turn\tcommits/s\t÷ raw sync\tconflicts\tconflicts/commit\tcontention\terrors\t")
	for _, l := range sw.Levels {
		cpt, cps, ratio := "—", "—", "—"
		if l.Turns > 0 {
			cpt = fmt.Sprintf("%.2f", float64(l.Commits)/float64(l.Turns))
		}
		if l.Elapsed > 0 {
			c := float64(l.Commits) / l.Elapsed.Seconds()
			cps = num(c)
			if r := sw.rawFor(l.Concurrency); r != nil && r.SyncPerSec > 0 {
				ratio = fmt.Sprintf("%.0f%%", 100*c/r.SyncPerSec)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.2f\t%.2f\t%d\t%d\t%s\t%s\t%s\t%d\t%.1f%%\t%d\t%d\t\n", l.Path, l.Concurrency, num(l.TurnsPerSec),
			l.P50us/1000, l.P99us/1000, l.Turns, l.Answered, cpt, cps, ratio, l.Conflicts, 100*l.ConflictsPerCommit, l.Contention, l.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range sw.Levels {
		if l.FirstError != "" {
			fmt.Fprintf(w, "  %s, %d concurrent: %d errors, first: %s\n", l.Path, l.Concurrency, l.Errors, l.FirstError)
		}
	}
	return nil
}

// WriteJSON prints the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(rep)
}
