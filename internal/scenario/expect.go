package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fledger/fledger/events"
)

// Mismatch is one expectation reality did not meet.
type Mismatch struct {
	// Where names the step or profile, e.g. "script[2] turn t3" or
	// "end of run".
	Where string `json:"where"`
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s: %s\n    want %s\n    got  %s", m.Where, m.Field, m.Want, m.Got)
}

// Check compares the report with the scenario's expectations, stores the
// mismatches in the report and returns them (none = the run is as
// expected). A step the run never reached fails its expectations.
func Check(sc *Scenario, rep *Report) []Mismatch {
	var out []Mismatch
	miss := func(where, field, want, got string) {
		out = append(out, Mismatch{Where: where, Field: field, Want: want, Got: got})
	}
	for i, st := range sc.Script {
		if st.Turn == nil || st.Turn.Expect == nil {
			continue
		}
		where := fmt.Sprintf("script[%d] turn %s (%s)", i, st.Turn.ID, st.At)
		if i >= len(rep.Steps) || rep.Steps[i].Turn == nil {
			miss(where, "turn", "run", "not reached")
			continue
		}
		checkTurn(sc, where, st.Turn.Expect, rep.Steps[i].Turn, miss)
	}
	if sc.Expect != nil {
		got := map[string]ProfileReport{}
		for _, p := range rep.Profiles {
			got[p.ID] = p
		}
		checkProfiles(sc, "end of run", sc.Expect.Profiles, got, miss)
		sessions := map[string]SessionReport{}
		for _, s := range rep.Sessions {
			sessions[s.Session] = s
		}
		for _, k := range sortedKeys(sc.Expect.Sessions) {
			checkSession("end of run", "session "+k, sc.Expect.Sessions[k], sessions[k], miss)
		}
	}
	rep.Mismatches, rep.Checked = out, true
	return out
}

func checkProfiles(sc *Scenario, where string, want map[string]ProfileExpect, got map[string]ProfileReport,
	miss missFunc) {
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		w := want[id]
		g, ok := got[id]
		if !ok {
			miss(where, "profile "+id, "a configured profile", "not in the config")
			continue
		}
		f := func(field string) string { return "profile " + id + " " + field }
		if w.ErrorCount != nil && *w.ErrorCount != g.state.ErrorCount {
			miss(where, f("errorCount"), strconv.Itoa(*w.ErrorCount), strconv.Itoa(g.state.ErrorCount))
		}
		if w.FailureCounts != nil && !sameCounts(w.FailureCounts, g.state.FailureCounts) {
			miss(where, f("failureCounts"), counts(w.FailureCounts), counts(g.state.FailureCounts))
		}
		times := []struct {
			name string
			want *string
			got  int64
		}{{"cooldownUntil", w.CooldownUntil, g.state.CooldownUntil}, {"disabledUntil", w.DisabledUntil, g.state.DisabledUntil},
			{"blockedUntil", w.BlockedUntil, g.state.BlockedUntil}, {"lastUsed", w.LastUsed, g.state.LastUsed}}
		for _, t := range times {
			if t.want == nil {
				continue
			}
			ms, _ := parseExpectTime(*t.want, sc.Start)
			if ms != t.got {
				miss(where, f(t.name), timeText(ms, sc.Start), timeText(t.got, sc.Start))
			}
		}
		strs := []struct {
			name string
			want *string
			got  string
		}{{"cooldownReason", w.CooldownReason, g.state.CooldownReason}, {"cooldownModel", w.CooldownModel, g.state.CooldownModel}, {"disabledReason", w.DisabledReason, g.state.DisabledReason},
			{"blockedReason", w.BlockedReason, g.state.BlockedReason}, {"blockedSource", w.BlockedSource, g.state.BlockedSource},
			{"blockedModel", w.BlockedModel, g.state.BlockedModel}}
		for _, s := range strs {
			if s.want != nil && absent(*s.want) != s.got {
				miss(where, f(s.name), quote(absent(*s.want)), quote(s.got))
			}
		}
	}
}

func timeText(ms int64, start time.Time) string {
	if ms == 0 {
		return "none"
	}
	t := events.FromMillis(ms)
	d := t.Sub(start.UTC())
	return fmt.Sprintf("+%s (%s)", d, t.Format(time.RFC3339Nano))
}

func quote(s string) string {
	if s == "" {
		return "(none)"
	}
	return strconv.Quote(s)
}

func list(s []string) string {
	if len(s) == 0 {
		return "[]"
	}
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sameCounts(a, b map[string]int) bool {
	n := 0
	for k, v := range a {
		if v != 0 {
			n++
			if b[k] != v {
				return false
			}
		}
	}
	m := 0
	for _, v := range b {
		if v != 0 {
			m++
		}
	}
	return n == m
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
