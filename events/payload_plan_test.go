package events

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// planDecode decodes raw with e's plan as decodeFast does; ok is false
// when the plan does not take raw whole.
func planDecode(e *typeEntry, raw []byte, shared bool) (Payload, bool) {
	if e.plan == nil {
		return nil, false
	}
	v := reflect.New(e.goType)
	d := planDecoder{b: raw, shared: shared}
	if !d.object(v.UnsafePointer(), e.plan) || d.i != len(raw) {
		return nil, false
	}
	return e.box(v), true
}

// samePlanDecode fails t when the plan takes raw and decodes it otherwise
// than go-json, or takes what go-json refuses.
func samePlanDecode(t *testing.T, e *typeEntry, raw string) bool {
	t.Helper()
	want, werr := e.decode([]byte(raw))
	taken := false
	for _, shared := range []bool{false, true} {
		got, ok := planDecode(e, []byte(raw), shared)
		if !ok {
			continue
		}
		taken = true
		if werr != nil {
			t.Fatalf("%s %s: the plan takes what go-json refuses (%v)", e.name, raw, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %s:\n plan:    %#v\n go-json: %#v", e.name, raw, got, want)
		}
	}
	return taken
}

// Every catalog type but ConfigApplied (a json.RawMessage, which the plan
// does not read) has a plan, which takes its example as json.Marshal
// writes it, with its keys in another order, and with each field left
// out in turn.
func TestPayloadPlan_CatalogExamples(t *testing.T) {
	r := NewCatalogRegistry()
	for _, name := range r.Types() {
		if e := r.lookup(name); (e.plan == nil) != (name == "ConfigApplied") {
			t.Fatalf("%s: plan %v", name, e.plan != nil)
		}
	}
	for _, p := range Examples() {
		e := r.lookup(p.EventType())
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if !samePlanDecode(t, e, string(raw)) && e.plan != nil {
			t.Fatalf("%s %s: not taken by its plan", e.name, raw)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatal(err)
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range fields {
				if !yield(k) {
					return
				}
			}
		})
		slices.Reverse(keys)
		object := func(keys []string) string {
			var b strings.Builder
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%q:%s", k, fields[k])
			}
			b.WriteByte('}')
			return b.String()
		}
		if !samePlanDecode(t, e, object(keys)) && e.plan != nil {
			t.Fatalf("%s %s: reordered, not taken by its plan", e.name, object(keys))
		}
		for i := range keys {
			samePlanDecode(t, e, object(slices.Delete(slices.Clone(keys), i, i+1)))
		}
	}
}

// completed is raw, an edge case that names a few fields, with the
// type's other fields (from its example) written before them: a payload
// without a required field is refused whatever its values (required.go),
// so the case's values are tried in a payload that has every field too.
// raw not an object is returned as it is.
func completed(t testing.TB, e *typeEntry, raw string) string {
	t.Helper()
	if !strings.HasPrefix(raw, "{") {
		return raw
	}
	var example Payload
	for _, p := range Examples() {
		if p.EventType() == e.name {
			example = p
		}
	}
	b, err := json.Marshal(example)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	out.WriteByte('{')
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if strings.Contains(strings.ToLower(raw), `"`+strings.ToLower(k)+`"`) {
			continue
		}
		fmt.Fprintf(&out, "%q:%s,", k, fields[k])
	}
	if strings.HasPrefix(raw, "{}") || out.Len() == 1 {
		return strings.TrimSuffix(out.String(), ",") + raw[1:]
	}
	return out.String() + raw[1:]
}

// Values near what the plan takes: each is taken and decoded as go-json
// does, or left to go-json; alone (a payload that lacks required fields,
// which the plan never takes) and completed with the type's other fields.
func TestPayloadPlan_EdgeCases(t *testing.T) {
	r := NewCatalogRegistry()
	for name, raws := range planEdgeCases() {
		e := r.lookup(name)
		taken := 0
		for _, raw := range raws {
			if samePlanDecode(t, e, raw) {
				taken++
			}
			if samePlanDecode(t, e, completed(t, e, raw)) {
				taken++
			}
		}
		if taken == 0 {
			t.Fatalf("%s: no case taken by the plan", name)
		}
	}
	for _, p := range Examples() {
		e := r.lookup(p.EventType())
		raw, _ := json.Marshal(p)
		for _, s := range []string{`[]`, `[""]`, `["a","b"]`, `[1,-2]`, `{}`, `{"k":3}`, `null`, `[null]`} {
			// Every field given each of these values in turn.
			var fields map[string]json.RawMessage
			_ = json.Unmarshal(raw, &fields)
			for k := range fields {
				samePlanDecode(t, e, fmt.Sprintf(`{%q:%s}`, k, s))
				samePlanDecode(t, e, completed(t, e, fmt.Sprintf(`{%q:%s}`, k, s)))
			}
		}
	}
}

// FuzzPayloadPlan compares a type's plan with go-json on any payload (see
// samePlanDecode); typ picks the catalog type.
func FuzzPayloadPlan(f *testing.F) {
	r := NewCatalogRegistry()
	types := r.Types()
	index := func(name string) uint8 { return uint8(slices.Index(types, name)) }
	for _, p := range Examples() {
		raw, _ := json.Marshal(p)
		f.Add(index(p.EventType()), raw)
	}
	for name, raws := range planEdgeCases() {
		for _, raw := range raws {
			f.Add(index(name), []byte(raw))
			f.Add(index(name), []byte(completed(f, r.lookup(name), raw)))
		}
	}
	f.Fuzz(func(t *testing.T, typ uint8, raw []byte) {
		samePlanDecode(t, r.lookup(types[int(typ)%len(types)]), string(raw))
	})
}

// planEdgeCases are payloads of three types near what their plans take.
func planEdgeCases() map[string][]string {
	return map[string][]string{
		"ProfileCleared": {
			`{}`, `{"profile_id":""}`, `{"profile_id":"a","profile_id":"b"}`, `{"Profile_ID":"a"}`, `{"profile_id":"a","x":1}`,
			`{"profile_id":"\u00e9\u2028\u003c\/\b\f\n\r\t\u0000\"\\"}`, `{"profile_id":"caf` + "\xc3\xa9" + `"}`,
			`{"profile_id":"` + "\xff" + `"}`, `{"profile_id":"\ud83d\ude00"}`, `{"profile_id":"\ud800"}`, `{"profile_id":"\x"}`,
			`{"profile_id":"\u00zz"}`, `{"profile_id":"\u00e"}`, `{"profile_id":"` + "\x01" + `"}`, `{"profile_id":"a` + "\xe2\x80" + `"}`,
			`{"profile_id":"a\n` + "\xff" + `"}`, `{"profile_id":null}`, `{"profile_id":1}`, `{"profile_id":"a"`, `{"profile_id":"a",}`,
			`{"profile_id" :"a"}`, `{ "profile_id":"a"}`, `{"profile_id":"a"} `, `{"profile_id":"a"}}`, `{"profile_id":"a\"}`,
			`{"profile_id":"a","by":"b","note":"n","provider":"p"}`, `{"note":"n","by":"b","provider":"p","profile_id":"a"}`,
			`{"prof\u0069le_id":"a"}`, `{"":"a"}`, `[]`, `"s"`, `{`,
		},
		"TurnStarted": {
			`{"seed":"0"}`, `{"seed":"18446744073709551615"}`, `{"seed":"18446744073709551616"}`, `{"seed":"012"}`,
			`{"seed":"-1"}`, `{"seed":""}`, `{"seed":12}`, `{"seed":" 12"}`, `{"seed":"1e3"}`, `{"seed":null}`,
			`{"strict":true,"auto_origin_probe":false}`, `{"strict":"true"}`, `{"strict":tru}`, `{"strict":truex}`, `{"strict":null}`,
			`{"chain":[]}`, `{"chain":[{}]}`, `{"chain":[{"provider":"p"},{"model":"m","route_origin":"requested"}]}`,
			`{"chain":[{"provider":"p"},"x"]}`, `{"chain":[{"provider":"p"}`, `{"chain":[{"provider":"p"},]}`, `{"chain":null}`,
			`{"chain":[{"provider":"a"},{"provider":"b"},{"provider":"c"},{"provider":"d"},{"provider":"e"},{"provider":"f"},{"provider":"g"},{"provider":"h"},{"provider":"i"}]}`,
			`{"requested":{"provider":"p","model":"m"}}`, `{"requested":{}}`, `{"requested":null}`, `{"requested":[]}`,
			`{"attempt_limit":0}`, `{"attempt_limit":-0}`, `{"attempt_limit":-1}`, `{"attempt_limit":9223372036854775807}`,
			`{"attempt_limit":9223372036854775808}`, `{"attempt_limit":-9223372036854775808}`, `{"attempt_limit":-9223372036854775809}`,
			`{"attempt_limit":1.0}`, `{"attempt_limit":1e2}`, `{"attempt_limit":01}`, `{"attempt_limit":-}`, `{"attempt_limit":"1"}`,
			`{"started_at":1767225600000}`, `{"rules":3,"turn_id":"t"}`,
		},
		"ProfileFailureRecorded": {
			`{"failure_counts":{}}`, `{"failure_counts":{"a":1,"b":2}}`, `{"failure_counts":{"a":1,"a":2}}`,
			`{"failure_counts":{"a":null}}`, `{"failure_counts":{"a":1.5}}`, `{"failure_counts":{"\u00e9":1}}`, `{"failure_counts":{"a":1,}}`,
			`{"failure_counts":null}`, `{"failure_counts":[]}`, `{"reset":{}}`, `{"reset":null}`,
		},
	}
}

// A plan is only made for what it reads exactly.
func TestPayloadPlan_RefusedTypes(t *testing.T) {
	type custom struct{ wireTime }
	type withTime struct {
		At wireTime `json:"at"`
	}
	type withFloat struct {
		F float64 `json:"f"`
	}
	type withFoldedNames struct {
		A string `json:"name"`
		B string `json:"Name"`
	}
	type withStringOpt struct {
		N int `json:"n,string"`
	}
	type withOddName struct {
		N int `json:"a-b"`
	}
	type withUint struct {
		U uint64 `json:"u"`
	}
	type withMap struct {
		M map[string]string `json:"m"`
	}
	for _, v := range []any{custom{}, withTime{}, withFloat{}, withFoldedNames{}, withStringOpt{}, withOddName{}, withUint{}, withMap{}, 0, ""} {
		if p := newPayloadPlan(reflect.TypeOf(v)); p != nil {
			t.Fatalf("%T: has a plan", v)
		}
	}
	type ok struct {
		S    string         `json:"s"`
		skip string         //nolint:unused // unexported: ignored
		Dash string         `json:"-"`
		N    int64          `json:",omitempty"`
		L    []string       `json:"l,omitempty"`
		M    map[string]int `json:"m"`
		P    *Candidate     `json:"p"`
	}
	p := newPayloadPlan(reflect.TypeOf(ok{}))
	if p == nil {
		t.Fatal("no plan")
	}
	var names []string
	for _, f := range p.fields {
		names = append(names, f.name)
	}
	if want := []string{"s", "N", "l", "m", "p"}; !slices.Equal(names, want) {
		t.Fatalf("fields %v, want %v", names, want)
	}
}
