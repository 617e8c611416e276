package schemas_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/schemas"
)

var t0 = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

// encoded returns the payload JSON of p exactly as the store writes it.
func encoded(t testing.TB, p events.Payload) []byte {
	t.Helper()
	body, err := events.NewCatalogRegistry().EncodeCommit([]events.Event{events.New("main", "k", t0, p)})
	if err != nil {
		t.Fatal(err)
	}
	var c events.Commit
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c.Events[0].Payload
}

func TestSchemas_EveryRegisteredVersionHasAFile(t *testing.T) {
	reg := events.NewCatalogRegistry()
	for _, typ := range reg.Types() {
		cur, _ := reg.Version(typ)
		vs := schemas.Versions(typ)
		if len(vs) != cur {
			t.Fatalf("%s: schema versions %v, want 1..%d", typ, vs, cur)
		}
		for i, v := range vs {
			if v != i+1 {
				t.Fatalf("%s: schema versions %v, want 1..%d", typ, vs, cur)
			}
		}
	}
}

func TestSchemas_EveryCatalogEventValidates(t *testing.T) {
	v := schemas.NewValidator()
	reg := events.NewCatalogRegistry()
	for _, p := range events.Examples() {
		cur, _ := reg.Version(p.EventType())
		if err := v.ValidatePayload(p.EventType(), cur, encoded(t, p)); err != nil {
			t.Errorf("%s: %v", p.EventType(), err)
		}
	}
}

func TestSchemas_ZeroValuesFailOnlyOnEnums(t *testing.T) {
	v := schemas.NewValidator()
	reg := events.NewCatalogRegistry()
	for _, p := range events.Catalog() {
		cur, _ := reg.Version(p.EventType())
		err := v.ValidatePayload(p.EventType(), cur, encoded(t, p))
		var fe *schemas.FieldError
		if p.EventType() == "ConfigApplied" && err != nil && strings.Contains(err.Error(), "field config") {
			continue // a nil config is null, and config must be an object
		}
		if err != nil && (!errors.As(err, &fe) || !strings.Contains(fe.Reason, "value must be")) {
			t.Errorf("%s zero value: %v", p.EventType(), err)
		}
	}
}

func TestSchemas_BadFieldsAreNamed(t *testing.T) {
	v := schemas.NewValidator()
	turn := string(encoded(t, events.Examples()[11])) // TurnStarted
	if !strings.Contains(turn, `"route_origin":"configured-fallback"`) {
		t.Fatalf("unexpected example: %s", turn)
	}
	cases := []struct {
		typ, payload, field string
	}{
		{"ProfileCleared", `{"profile_id":42}`, "profile_id"},
		{"ProfileCleared", `{"by":"cli"}`, "profile_id"},
		{"ProfileCleared", `{"profile_id":"p","colour":"red"}`, "colour"},
		{"AttemptFailed", strings.Replace(string(encoded(t, events.Examples()[13])), `"reason":"rate_limit"`, `"reason":"ratelimit"`, 1), "reason"},
		{"TurnStarted", strings.Replace(turn, `"route_origin":"configured-fallback"`, `"route_origin":"sideways"`, 1), "chain/1/route_origin"},
		{"TurnStarted", strings.Replace(turn, `"attempt_limit":40`, `"attempt_limit":"40"`, 1), "attempt_limit"},
	}
	reg := events.NewCatalogRegistry()
	for _, c := range cases {
		cur, _ := reg.Version(c.typ)
		err := v.ValidatePayload(c.typ, cur, []byte(c.payload))
		var fe *schemas.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, events.ErrInvalidPayload) {
			t.Errorf("%s %s: error %v, want one naming %s", c.typ, c.payload, err, c.field)
			continue
		}
		if !strings.Contains(err.Error(), c.typ) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("message %q does not name type and field", err)
		}
	}
	if err := v.ValidatePayload("Martian", 1, []byte(`{}`)); !errors.Is(err, events.ErrUnknownType) {
		t.Errorf("unknown type: %v", err)
	}
}

func TestStore_WithValidatorRefusesOutOfSchemaValues(t *testing.T) {
	ctx := context.Background()
	s, err := events.Open(ctx, events.WithDataDir(t.TempDir()), events.WithValidator(schemas.NewValidator()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := events.Examples()[11].(events.TurnStarted)
	ts.Chain = append([]events.Candidate(nil), ts.Chain...)
	ts.Chain[1].RouteOrigin = "sideways"
	ev := events.New("main", ts.TurnID, t0, ts)
	subj, _ := ev.Subject()
	_, err = s.Append(ctx, subj, 0, ev)
	var ee *events.EventError
	if !errors.As(err, &ee) || ee.Type != "TurnStarted" || ee.Field != "chain/1/route_origin" || !errors.Is(err, events.ErrInvalidPayload) {
		t.Fatalf("error %v, want an EventError naming TurnStarted chain/1/route_origin", err)
	}
	for _, p := range events.Examples() {
		ev := events.New("main", "k", t0, p)
		subj, _ := ev.Subject()
		if _, err := s.Append(ctx, subj, events.AnySeq, ev); err != nil {
			t.Fatalf("%s: %v", p.EventType(), err)
		}
	}
}

func BenchmarkValidatePayload(b *testing.B) {
	v := schemas.NewValidator()
	p := encoded(b, events.Examples()[13]) // AttemptFailed, ~600 B
	b.ReportAllocs()
	for b.Loop() {
		if err := v.ValidatePayload("AttemptFailed", 1, p); err != nil {
			b.Fatal(err)
		}
	}
}
