package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

var catalogAt = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

// A type added to the catalog fails here until verify has a case for a
// commit it leads: each example, alone in a commit after a config, is
// re-decided, reported unexplained or noted as taken on purpose, never
// taken as an unknown type.
func TestVerify_ChecksEveryCatalogType(t *testing.T) {
	for _, p := range events.Examples() {
		t.Run(p.EventType(), func(t *testing.T) {
			v := &verifier{rep: &VerifyReport{Checked: map[string]int{}}, folds: map[string]*engine.Fold{}, seen: map[string]bool{}}
			cfg := events.Examples()[0]
			f := v.fold("main")
			f.Apply(1, "", []events.Event{events.New("main", events.KeyOf(cfg), catalogAt, cfg)})
			if f.Current() == nil {
				t.Fatal("the example config is not in force")
			}
			v.check(f, &commit{Seq: 2, Events: []events.Event{events.New("main", events.KeyOf(p), catalogAt, p)}})
			for _, n := range v.rep.Notes {
				if strings.Contains(n, "a type verify does not know") {
					t.Fatalf("verify has no case for it: %s", n)
				}
			}
		})
	}
}

// A type added to the catalog fails here until explain's describe has a
// case for it (even one that shows nothing), and a session type until the
// timeline words it.
func TestExplain_DescribesEveryCatalogType(t *testing.T) {
	for _, p := range events.Examples() {
		x := &Explanation{}
		ev := events.New("main", events.KeyOf(p), catalogAt, p)
		if !x.describe(&Step{}, ev, 0) {
			t.Errorf("%s: describe has no case for it", p.EventType())
		}
		if p.EventAggregate() == events.AggSession && sessionWords(ev) == ev.Type {
			t.Errorf("%s: the timeline's sessionWords has no case for it", p.EventType())
		}
	}
}
