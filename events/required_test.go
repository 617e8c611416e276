package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// requiredCommit is the commit of example p, stored under agent main,
// with its payload's JSON changed by edit (the whole payload object).
func requiredCommit(t *testing.T, r *Registry, p Payload, edit func(map[string]json.RawMessage)) (body []byte, subject string) {
	t.Helper()
	ev := New("main", "k", time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC), p)
	b, err := r.EncodeCommit([]Event{ev})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Events []map[string]json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var payload map[string]json.RawMessage
	if err := json.Unmarshal(c.Events[0]["payload"], &payload); err != nil {
		t.Fatal(err)
	}
	edit(payload)
	if c.Events[0]["payload"], err = json.Marshal(payload); err != nil {
		t.Fatal(err)
	}
	if body, err = json.Marshal(c); err != nil {
		t.Fatal(err)
	}
	return body, MustSubject("main", ev.Aggregate, "k")
}

// decodeAllPaths decodes body with DecodeCommit (fast path first), go-json
// alone and the read-ahead's owned decode, and wants the same result.
func decodeAllPaths(t *testing.T, r *Registry, body []byte, subject string) error {
	t.Helper()
	_, err := r.DecodeCommit(body, 7, subject)
	_, gerr := r.decodeGoJSON(body, 7, subject)
	_, _, oerr := r.decodeOwned(nil, body, 7, subject)
	if !reflect.DeepEqual(err, gerr) || !reflect.DeepEqual(err, oerr) {
		t.Fatalf("DecodeCommit %v\ngo-json %v\nowned %v", err, gerr, oerr)
	}
	return err
}

// A stored payload without a field every writer writes (one without
// omitempty: schemas/events marks it required) is refused, on every
// decode path, naming the field's JSON path, what it holds and that it is
// missing — for each required field of each catalog type in turn. Decoded,
// it would have folded as a zero value that was never recorded.
func TestDecodeCommit_RequiredFieldMissing(t *testing.T) {
	r := NewCatalogRegistry()
	n := 0
	for _, p := range Examples() {
		s := r.lookup(p.EventType()).req
		for _, f := range s.fields {
			if !f.required {
				continue
			}
			n++
			body, subject := requiredCommit(t, r, p, func(m map[string]json.RawMessage) { delete(m, f.name) })
			err := decodeAllPaths(t, r, body, subject)
			want := fmt.Sprintf("events[0].payload.%s: want %s (every %s payload has it), found no %s field", f.name, wantOf(f.typ, false), p.EventType(), f.name)
			if err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Fatalf("%s without %s: %v\nwant it to end %q", p.EventType(), f.name, err, want)
			}
			var de *DecodeError
			var we *WireError
			if !errors.As(err, &de) || de.Type != p.EventType() || !errors.As(err, &we) || we.Path != "events[0].payload."+f.name {
				t.Fatalf("%s without %s: %#v", p.EventType(), f.name, err)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d required fields checked", n)
	}
}

// Inside a payload too: a model reference without its model, a chain
// entry without its route origin. A key that matches only without case
// is the field (go-json decodes it so); an optional field may be absent;
// a null for a pointer or a slice holds nothing to check.
func TestDecodeCommit_RequiredFieldNested(t *testing.T) {
	r := NewCatalogRegistry()
	var started Payload
	for _, p := range Examples() {
		if p.EventType() == "TurnStarted" {
			started = p
		}
	}
	ts := started.(TurnStarted)
	if len(ts.Chain) < 2 {
		t.Fatalf("the TurnStarted example has a chain of %d", len(ts.Chain))
	}
	for _, c := range []struct {
		name string
		edit func(map[string]json.RawMessage)
		want string // "" = decodes
	}{
		{"requested without model", func(m map[string]json.RawMessage) { m["requested"] = json.RawMessage(`{"provider":"openai"}`) },
			`events[0].payload.requested.model: want a string (every TurnStarted payload has it), found no requested.model field`},
		{"second chain entry without route_origin", func(m map[string]json.RawMessage) {
			var chain []map[string]json.RawMessage
			_ = json.Unmarshal(m["chain"], &chain)
			delete(chain[1], "route_origin")
			m["chain"], _ = json.Marshal(chain)
		}, `events[0].payload.chain[1].route_origin: want a string (every TurnStarted payload has it), found no chain[1].route_origin field`},
		{"a key in another case", func(m map[string]json.RawMessage) { m["Turn_ID"] = m["turn_id"]; delete(m, "turn_id") }, ""},
		{"chain null", func(m map[string]json.RawMessage) { m["chain"] = json.RawMessage(`null`) }, ""},
		{"optional fields absent", func(m map[string]json.RawMessage) {
			for _, k := range slices.Collect(func(yield func(string) bool) {
				for k := range m {
					if !yield(k) {
						return
					}
				}
			}) {
				if !slices.Contains([]string{"turn_id", "session", "chat", "requested", "selection_source", "strict", "chain", "config_hash", "attempt_limit", "seed", "started_at"}, k) {
					delete(m, k)
				}
			}
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, subject := requiredCommit(t, r, started, c.edit)
			err := decodeAllPaths(t, r, body, subject)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.HasSuffix(err.Error(), c.want)):
				t.Fatalf("%v\nwant it to end %q", err, c.want)
			}
		})
	}
}

// The fields the decoder requires are the ones schemas/events marks
// required, for the current version of every catalog type: one rule, from
// the same json tags, read by the schema generator and by the decoder.
func TestRequired_MatchesTheSchemas(t *testing.T) {
	r := NewCatalogRegistry()
	for _, p := range Examples() {
		v, _ := r.Version(p.EventType())
		b, err := os.ReadFile(filepath.Join("..", "schemas", "events", fmt.Sprintf("%s.v%d.json", p.EventType(), v)))
		if err != nil {
			t.Fatal(err)
		}
		var sch struct {
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(b, &sch); err != nil {
			t.Fatal(err)
		}
		var got []string
		if s := r.lookup(p.EventType()).req; s != nil {
			for _, f := range s.fields {
				if f.required {
					got = append(got, f.name)
				}
			}
		}
		if !slices.Equal(got, sch.Required) {
			t.Errorf("%s v%d: the decoder requires %v, the schema %v", p.EventType(), v, got, sch.Required)
		}
	}
}
