package serve_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/template"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections/metrics"
)

// exportedNames is every metric family fledger registers: the metrics
// fold's (fledger export --metrics, and serve's /metrics) and serve's own.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	out := map[string]bool{}
	for _, n := range append(metrics.New().Names(), srv.svc.MetricNames()...) {
		out[n] = true
	}
	return out
}

var (
	quoted     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	fledgerRef = regexp.MustCompile(`\bfledger_[a-zA-Z0-9_]+`)
)

// unknownMetrics returns the fledger_* metric names expr uses that are
// not exported (a histogram may be named by its _bucket, _sum or _count
// series). Label values (quoted strings) are not names.
func unknownMetrics(expr string, known map[string]bool) (used, unknown []string) {
	for _, n := range fledgerRef.FindAllString(quoted.ReplaceAllString(expr, `""`), -1) {
		used = append(used, n)
		base := n
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(n, suf); ok && known[b] {
				base = b
			}
		}
		if !known[base] {
			unknown = append(unknown, n)
		}
	}
	return used, unknown
}

// balanced reports whether (), [] and {} nest properly outside strings.
func balanced(expr string) bool {
	var stack []rune
	pair := map[rune]rune{')': '(', ']': '[', '}': '{'}
	for _, r := range quoted.ReplaceAllString(expr, `""`) {
		switch r {
		case '(', '[', '{':
			stack = append(stack, r)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != pair[r] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0
}

type ruleFile struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Rules    []struct {
			Alert       string            `json:"alert,omitempty"`
			Record      string            `json:"record,omitempty"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

// The shipped alert rules parse (strictly: no unknown field), have the
// fields Prometheus requires, valid durations (Prometheus' own duration
// parser) and annotation templates, and name only exported metrics.
// Prometheus's own rule parser (rulefmt and the PromQL parser, what
// `promtool check rules` runs) checks the same file in deploy/prometheus,
// a test-only package, so the big module compiles only for that test.
func TestDeploy_AlertRulesParseAndNameExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../deploy/prometheus/fledger-rules.yaml")
	testutil.NoError(t, err)
	var rf ruleFile
	testutil.NoError(t, yaml.UnmarshalStrict(b, &rf))
	known := exportedNames(t)
	stub := func(...any) string { return "" }
	funcs := template.FuncMap{"humanize": stub, "humanizeDuration": stub, "humanizePercentage": stub}
	groups, alerts := map[string]bool{}, map[string]bool{}
	if len(rf.Groups) == 0 {
		t.Fatal("no rule groups")
	}
	for _, g := range rf.Groups {
		if g.Name == "" || groups[g.Name] {
			t.Errorf("group name %q empty or repeated", g.Name)
		}
		groups[g.Name] = true
		if len(g.Rules) == 0 {
			t.Errorf("group %s has no rules", g.Name)
		}
		for _, r := range g.Rules {
			if (r.Alert == "") == (r.Record == "") {
				t.Errorf("group %s: a rule needs exactly one of alert and record: %+v", g.Name, r)
				continue
			}
			name := r.Alert + r.Record
			if r.Alert != "" && (alerts[r.Alert] || !regexp.MustCompile(`^Fledger[A-Z][A-Za-z]+$`).MatchString(r.Alert)) {
				t.Errorf("alert %q repeated or not FledgerCamelCase", r.Alert)
			}
			alerts[r.Alert] = true
			if strings.TrimSpace(r.Expr) == "" || !balanced(r.Expr) {
				t.Errorf("%s: expr empty or unbalanced: %s", name, r.Expr)
			}
			used, unknown := unknownMetrics(r.Expr, known)
			if len(used) == 0 || len(unknown) > 0 {
				t.Errorf("%s: expr names no fledger metric or unknown ones %v", name, unknown)
			}
			if r.For != "" {
				if _, err := model.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for: %v", name, err)
				}
			}
			if r.Alert != "" {
				if sev := r.Labels["severity"]; !slices.Contains([]string{"page", "warning", "info"}, sev) {
					t.Errorf("%s: severity %q", name, sev)
				}
				if r.Annotations["summary"] == "" {
					t.Errorf("%s: no summary", name)
				}
			}
			for k, v := range r.Annotations {
				if _, err := template.New(k).Funcs(funcs).Parse("{{$labels := .Labels}}{{$value := .Value}}" + v); err != nil {
					t.Errorf("%s: annotation %s: %v", name, k, err)
				}
			}
		}
	}
	// The stuck-projection alert (no traffic needed) is shipped.
	if !alerts["FledgerProjectionStalled"] {
		t.Error("no FledgerProjectionStalled alert")
	}
}

// Every query of the shipped Grafana dashboard (panel targets and
// template variables) names only exported metrics.
func TestDeploy_DashboardQueriesNameExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../deploy/grafana/fledger-dashboard.json")
	testutil.NoError(t, err)
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	testutil.NoError(t, json.Unmarshal(b, &dash))
	if dash.Title == "" || dash.UID == "" {
		t.Fatalf("dashboard without title or uid")
	}
	known := exportedNames(t)
	seen := map[string]bool{}
	check := func(where, expr string) {
		used, unknown := unknownMetrics(expr, known)
		if len(used) == 0 || len(unknown) > 0 || !balanced(expr) {
			t.Errorf("%s: %q names no fledger metric, unknown ones %v, or is unbalanced", where, expr, unknown)
		}
		for _, n := range used {
			seen[n] = true
		}
	}
	queries := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			check("panel "+p.Title+" "+tg.RefID, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type == "query" {
			check("variable "+v.Name, v.Definition)
		}
	}
	if queries < 10 {
		t.Errorf("only %d queries", queries)
	}
	for _, must := range []string{"fledger_attempts_total", "fledger_provider_call_duration_seconds_bucket", "fledger_projection_stalled_seconds", "fledger_build_info"} {
		if !seen[must] {
			t.Errorf("the dashboard does not chart %s", must)
		}
	}
}

// docs/exporters.md's metric tables list exactly the metrics fledger
// registers.
func TestDeploy_EveryMetricDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/exporters.md")
	testutil.NoError(t, err)
	documented := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `(fledger_[a-z0-9_]+)`")
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		documented[m[1]] = true
	}
	var missing, extra []string
	known := exportedNames(t)
	for n := range known {
		if !documented[n] {
			missing = append(missing, n)
		}
	}
	for n := range documented {
		if !known[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 {
		t.Errorf("docs/exporters.md metric tables: undocumented %v; documented but not exported %v", missing, extra)
	}
}
