// Package prometheus_test checks the alert rules fledger ships with
// Prometheus's own rule-file parser (the one promtool check rules uses):
// groups, rule fields, durations, templates and every expression as
// PromQL.
package prometheus_test

import (
	"log/slog"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

func TestRules_ParseWithPrometheusRuleParser(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	rgs, errs := rulefmt.ParseFile("fledger-rules.yaml", false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Error(err)
	}
	if rgs == nil || len(rgs.Groups) == 0 {
		t.Fatal("no rule groups")
	}
	n := 0
	for _, g := range rgs.Groups {
		for _, r := range g.Rules {
			if _, err := p.ParseExpr(r.Expr); err != nil {
				t.Errorf("%s: %s: %v", g.Name, r.Alert, err)
			}
			n++
		}
	}
	t.Logf("%d rules in %d groups parse", n, len(rgs.Groups))
}
