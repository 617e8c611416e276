package projections

import (
	"slices"
	"testing"

	"github.com/fledger/fledger/events"
)

// unhandled returns the types of catalog that no table folds and
// [ignoredEvents] does not list.
func unhandled(catalog []events.Payload) []string {
	var out []string
	for _, p := range catalog {
		if !known(p.EventType()) {
			out = append(out, p.EventType())
		}
	}
	return out
}

// frobbed is an event type no table folds.
type frobbed struct{}

func (frobbed) EventType() string                { return "ProfileFrobbed" }
func (frobbed) EventAggregate() events.Aggregate { return events.AggProfile }

func TestEventTypes_EveryCatalogTypeIsHandled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		catalog []events.Payload
		want    []string
	}{
		{"the catalog", events.Catalog(), nil},
		{"a type added to the catalog and to no table", append(events.Catalog(), frobbed{}), []string{"ProfileFrobbed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unhandled(tc.catalog); !slices.Equal(got, tc.want) {
				t.Fatalf("unhandled %v, want %v: each catalog event type is folded by a table (its folds) or listed in ignoredEvents with a reason", got, tc.want)
			}
		})
	}
}

func TestEventTypes_FoldedOrIgnoredTypesAreTheCatalogs(t *testing.T) {
	catalog := map[string]events.Aggregate{}
	for _, p := range events.Catalog() {
		catalog[p.EventType()] = p.EventAggregate()
	}
	ignored := map[string]bool{}
	for _, ig := range ignoredEvents {
		typ := ig.event.EventType()
		if _, ok := catalog[typ]; !ok {
			t.Errorf("ignored %s is not a catalog type", typ)
		}
		if ig.why == "" {
			t.Errorf("ignored %s has no reason", typ)
		}
		ignored[typ] = true
	}
	for _, tb := range tables {
		aggs := map[events.Aggregate]bool{}
		for _, p := range tb.folds {
			typ := p.EventType()
			if _, ok := catalog[typ]; !ok {
				t.Errorf("%s folds %s, not a catalog type", tb.name, typ)
			}
			if ignored[typ] {
				t.Errorf("%s folds %s, which ignoredEvents lists as ignored", tb.name, typ)
			}
			aggs[p.EventAggregate()] = true
		}
		if tb.rows.loads && len(aggs) != 1 {
			t.Errorf("%s is keyed by (agent, aggregate key) but folds events of %d aggregates", tb.name, len(aggs))
		}
		if len(tb.folds) > 0 || tb.foldsAll {
			if tb.rows.newRows == nil {
				t.Errorf("%s folds events but has no cache", tb.name)
			} else if _, ok := tb.rows.newRows(prepared{t: tb}).(folder); !ok {
				t.Errorf("%s folds events but its cache is not a folder", tb.name)
			}
		}
	}
}
