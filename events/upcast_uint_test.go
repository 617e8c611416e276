package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// exactSeeds are the seeds that must survive every reader: the edges of
// uint64 and of a float64's exact integers (2^53), and a seed of the
// first-release ledger.
var exactSeeds = []uint64{0, 1, 1<<53 - 1, 1 << 53, 1<<53 + 1, 11029143739690574337, 1<<64 - 1}

func TestUpUint64AsString(t *testing.T) {
	up := upUint64AsString("seed")
	for _, c := range []struct {
		in, want, err string
	}{
		{`{"turn_id":"t","seed":0}`, `{"turn_id":"t","seed":"0"}`, ""},
		{`{"seed":9007199254740993,"x":1}`, `{"seed":"9007199254740993","x":1}`, ""},
		{`{"seed":11029143739690574337}`, `{"seed":"11029143739690574337"}`, ""},
		{`{"seed":18446744073709551615}`, `{"seed":"18446744073709551615"}`, ""},
		// Every other byte is kept as stored, whitespace and escapes included.
		{"{ \"a\" : [1, {\"seed\":2}] ,\n \"seed\" : 12 , \"b\":\"\\u00e9<\"}", "{ \"a\" : [1, {\"seed\":2}] ,\n \"seed\" : \"12\" , \"b\":\"\\u00e9<\"}", ""},
		// Keys match as the decoder matches them; every duplicate converts.
		{`{"Seed":5,"seed":6,"s\u0065ed":7}`, `{"Seed":"5","seed":"6","s\u0065ed":"7"}`, ""},
		// No seed, a null seed (read as 0 before and after) and a payload
		// that is no object are left to the decoder.
		{`{"turn_id":"t"}`, `{"turn_id":"t"}`, ""},
		{`{"seed":null}`, `{"seed":null}`, ""},
		{`null`, `null`, ""},
		{`[1]`, `[1]`, ""},
		{`{"seed":-1}`, "", `field seed: -1 is negative; want an unsigned integer from 0 to 18446744073709551615`},
		{`{"seed":-0}`, "", `field seed: -0 is negative`},
		{`{"seed":1.5}`, "", `field seed: 1.5 is not an integer from 0 to 18446744073709551615`},
		{`{"seed":1.0}`, "", `field seed: 1.0 is not an integer`},
		{`{"seed":1e3}`, "", `field seed: 1e3 is not an integer`},
		{`{"seed":18446744073709551616}`, "", `field seed: 18446744073709551616 is out of range; want an unsigned integer from 0 to 18446744073709551615`},
		{`{"seed":"12"}`, "", `field seed: "12" is a string; this version stored a JSON number`},
		{`{"seed":` + strings.Repeat("9", 100) + `}`, "", `field seed: ` + strings.Repeat("9", 40) + `… is out of range`},
		{`{"seed":true}`, "", `field seed: true is not an integer`},
		{`{"seed":{"a":1}}`, "", `field seed: {"a":1} is not an integer`},
	} {
		got, err := up(json.RawMessage(c.in))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("%s: %s %v, want %s", c.in, got, err, c.want)
		}
	}
}

// jsonInteger is what a uint64 decodes from: a JSON number without sign,
// fraction or exponent.
var jsonInteger = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// refUint64AsString is the reference: the value (JSON whitespace around
// it kept) as an exact integer (math/big, no float64 anywhere), accepted
// when in [0, 2^64−1] and then written as its decimal string.
func refUint64AsString(v string) (string, bool) {
	const ws = " \t\r\n"
	num := strings.Trim(v, ws)
	if !jsonInteger.MatchString(num) {
		return "", false
	}
	n, ok := new(big.Int).SetString(num, 10)
	if !ok || n.Cmp(new(big.Int).SetUint64(1<<64-1)) > 0 {
		return "", false
	}
	lead := v[:len(v)-len(strings.TrimLeft(v, ws))]
	trail := v[len(strings.TrimRight(v, ws)):]
	return lead + strconv.Quote(n.String()) + trail, true
}

// FuzzUpUint64AsString checks the upcaster against the reference on any
// JSON value as the stored seed: the same acceptance, the same string, and
// the string decodes into the exact uint64.
func FuzzUpUint64AsString(f *testing.F) {
	for _, s := range exactSeeds {
		f.Add(strconv.FormatUint(s, 10))
	}
	for _, s := range []string{"-1", "-0", "1.5", "1e3", "18446744073709551616", "99999999999999999999999", `"1"`, "true", "007", "1000 ", "\n\t 7"} {
		f.Add(s)
	}
	up := upUint64AsString("seed")
	f.Fuzz(func(t *testing.T, v string) {
		in := `{"turn_id":"t","seed":` + v + `}`
		if !json.Valid([]byte(in)) || v == "null" {
			t.Skip()
		}
		got, err := up(json.RawMessage(in))
		want, ok := refUint64AsString(v)
		if ok != (err == nil) {
			t.Fatalf("seed %s: upcaster error %v, reference accepts %v", v, err, ok)
		}
		if !ok {
			if !strings.HasPrefix(err.Error(), "field seed: ") {
				t.Fatalf("seed %s: error %q does not name the field", v, err)
			}
			return
		}
		if exp := `{"turn_id":"t","seed":` + want + `}`; string(got) != exp {
			t.Fatalf("seed %s: %s, want %s", v, got, exp)
		}
		var ts TurnStarted
		if err := json.Unmarshal(got, &ts); err != nil || strconv.Quote(strconv.FormatUint(ts.Seed, 10)) != strings.TrimSpace(want) {
			t.Fatalf("seed %s: decoded %d %v", v, ts.Seed, err)
		}
	})
}

// storedSeeds is a commit as the build before issue 19 stored it: a
// TurnStarted v2 and a RetryScheduled v1 whose seeds are JSON numbers.
func storedSeeds(seed, jitter string) []byte {
	return []byte(`{"basis":3,"events":[` +
		`{"id":"0194a3c0-0000-7000-8000-000000000001","type":"TurnStarted","schema_version":2,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t",` +
		`"payload":{"turn_id":"t","session":"s","chat":"direct","requested":{"provider":"openai","model":"gpt-5"},"selection_source":"default","strict":false,` +
		`"chain":[{"provider":"openai","model":"gpt-5","route_origin":"requested"}],"config_hash":"sha256:c","attempt_limit":32,"seed":` + seed + `,"started_at":1768471200000,"rules":2}},` +
		`{"id":"0194a3c0-0000-7000-8000-000000000002","type":"RetryScheduled","schema_version":1,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t",` +
		`"payload":{"turn_id":"t","attempt":1,"retry":1,"budget":2,"base_ms":1000,"delay_ms":1200,"jitter_seed":` + jitter + `,"resume_at":1768471201200}}]}`)
}

// checkSeedsReadExact decodes storedSeeds(s, s) with the catalog registry
// and fails unless both seeds read as s at the current versions, the
// upcast payloads hold s as a string, and encoding writes the same string.
func checkSeedsReadExact(t interface{ Fatalf(string, ...any) }, r *Registry, s uint64) {
	digits := strconv.FormatUint(s, 10)
	evs, err := r.DecodeCommit(storedSeeds(digits, digits), 9, "fledger.main.turn.t")
	if err != nil {
		t.Fatalf("seed %s: %v", digits, err)
	}
	ts, rs := evs[0].Data.(TurnStarted), evs[1].Data.(RetryScheduled)
	if ts.Seed != s || rs.JitterSeed != s || evs[0].SchemaVersion != 3 || evs[1].SchemaVersion != 2 {
		t.Fatalf("seed %s read as %d (v%d) and %d (v%d)", digits, ts.Seed, evs[0].SchemaVersion, rs.JitterSeed, evs[1].SchemaVersion)
	}
	for i, name := range []string{"seed", "jitter_seed"} {
		field := fmt.Sprintf(`"%s":"%s"`, name, digits)
		if !strings.Contains(string(evs[i].Payload), field) {
			t.Fatalf("upcast payload %s lacks %s", evs[i].Payload, field)
		}
		body, err := r.EncodeCommit([]Event{New("main", "t", time.Unix(1, 0), evs[i].Data)})
		if err != nil || !strings.Contains(string(body), field) {
			t.Fatalf("encoded %s %v, want %s", body, err, field)
		}
	}
}

func TestUpcast_SeedsReadBackExact(t *testing.T) {
	r := NewCatalogRegistry()
	for _, s := range exactSeeds {
		checkSeedsReadExact(t, r, s)
	}
	rapid.Check(t, func(rt *rapid.T) {
		checkSeedsReadExact(rt, r, rapid.Uint64().Draw(rt, "seed"))
	})
}

func TestUpcast_BadStoredSeedIsAnUpcastErrorNamingTheField(t *testing.T) {
	r := NewCatalogRegistry()
	for _, c := range []struct {
		seed, jitter string
		index        int
		want         string
	}{
		{"-5", "1", 0, "TurnStarted version 2 to 3: field seed: -5 is negative"},
		{"2.5", "1", 0, "TurnStarted version 2 to 3: field seed: 2.5 is not an integer"},
		{"1", "18446744073709551616", 1, "RetryScheduled version 1 to 2: field jitter_seed: 18446744073709551616 is out of range"},
		{"1", "1e19", 1, "RetryScheduled version 1 to 2: field jitter_seed: 1e19 is not an integer"},
	} {
		_, err := r.DecodeCommit(storedSeeds(c.seed, c.jitter), 9, "fledger.main.turn.t")
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(err, ErrUpcast) || !strings.Contains(err.Error(), c.want) || de.Index != c.index {
			t.Errorf("seeds %s/%s: %v, want an upcast error of event %d with %q", c.seed, c.jitter, err, c.index, c.want)
		}
	}
}

// BenchmarkUpUint64AsString is the cost the upcaster adds to reading a
// stored TurnStarted v2 (once per turn).
func BenchmarkUpUint64AsString(b *testing.B) {
	body := storedSeeds("11029143739690574337", "1")
	var c struct {
		Events []struct {
			Payload json.RawMessage `json:"payload"`
		} `json:"events"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		b.Fatal(err)
	}
	p := c.Events[0].Payload
	up := upUint64AsString("seed")
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if _, err := up(p); err != nil {
			b.Fatal(err)
		}
	}
}

// refSpans is the reference for valueSpans: encoding/json's own tokenizer
// finds each top-level value (p must be valid JSON).
func refSpans(p []byte, field string) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, err
	}
	var out []span
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if key, _ := tok.(string); strings.EqualFold(key, field) {
			end := int(dec.InputOffset())
			out = append(out, span{end - len(v), end})
		}
	}
	return out, nil
}

// FuzzValueSpans checks the hand-written scan of a payload against
// encoding/json's tokenizer on any valid JSON, and that it never panics on
// invalid input.
func FuzzValueSpans(f *testing.F) {
	for _, s := range []string{
		`{"seed":1}`, `{ "a" : [1, {"seed":2}] , "seed" : 12 , "b":"\u00e9<"}`, `{"Seed":5,"seed":6,"s\u0065ed":7}`,
		`{"a":"x\"}{","seed":-1.5e3,"c":{"d":[[],{}]}}`, `{}`, `[]`, `null`, `{"seed":true,"seed":null}`, "{\"seed\"\t:\n\"1\"\r}",
		`{"seed":1`, `{"seed"}`, `{"a":"\`, `{"seed":[1,"]"}`, `{,}`, `{"a":1,}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		got, err := valueSpans(p, "seed")
		if !json.Valid(p) {
			return // any answer but a panic
		}
		want, werr := refSpans(p, "seed")
		if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: spans %v %v, reference %v %v", p, got, err, want, werr)
		}
	})
}
