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
	fmt.Fprintf(w, "fledger bench (%s) %s, %s, %d CPUs, load avg %s before / %s after, %.1f s\n\n",
		mode, rep.Started.UTC().Format("2006-01-02 15:04 UTC"), rep.Go, rep.CPUs, rep.LoadBefore, rep.LoadAfter, rep.Elapsed.Seconds())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LIMIT (raw, this run)\tvalue\tunit\tdetail")
	for _, m := range rep.Limits {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, num(m.Value), m.Unit, m.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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

// WriteJSON prints the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(rep)
}
