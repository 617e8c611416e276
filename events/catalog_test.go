package events_test

import (
	"reflect"
	"testing"

	"github.com/fledger/fledger/events"
)

// Every catalog type declares its key field once, by its EventKey method,
// and the key it names is one of its own string fields (so KeyOf, New and
// every fold agree on it without a list of types).
func TestCatalog_EveryTypeNamesItsKey(t *testing.T) {
	for _, p := range events.Examples() {
		t.Run(p.EventType(), func(t *testing.T) {
			k, ok := p.(events.Keyed)
			if !ok {
				t.Fatalf("%T has no EventKey method", p)
			}
			key := k.EventKey()
			if key == "" || key != events.KeyOf(p) {
				t.Fatalf("EventKey %q, KeyOf %q", key, events.KeyOf(p))
			}
			v := reflect.ValueOf(p)
			for i := 0; i < v.NumField(); i++ {
				if f := v.Field(i); f.Kind() == reflect.String && f.String() == key {
					return
				}
			}
			t.Fatalf("key %q is none of %T's string fields", key, p)
		})
	}
}
