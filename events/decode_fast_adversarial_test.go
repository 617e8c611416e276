package events

// Adversarial inputs from the review of the one-pass decoder: each must
// decode exactly as the go-json path does (checkFastDecode compares
// events and errors), and the decode must never change its input.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

const adversarialHead = `{"events":[{"id":"i","type":"ProfileCleared","schema_version":1,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"profile","key":"k","payload":`
const adversarialSubj = "fledger.main.profile.k"

func checkAdversarial(t *testing.T, r *Registry, name, data string) {
	t.Helper()
	taken, err := checkFastDecode(r, []byte(data), 7, adversarialSubj)
	if err != nil {
		t.Errorf("%s: taken=%v: %.600v", name, taken, err)
	} else {
	}
}

func TestDecodeFast_DeepPayload(t *testing.T) {
	r := NewCatalogRegistry()
	for _, n := range []int{9990, 9995, 9996, 9997, 9998, 9999, 10000} {
		p := `{"profile_id":"a","x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
		checkAdversarial(t, r, "depth unknown field", adversarialHead+p+`}]}`)
	}
}

func adversarialCommits(t *testing.T, r *Registry) (pre, post []string, payloads []string, subj []string) {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	for i, p := range Examples() {
		ev := New("main", fmt.Sprintf("key:%d", i), t0, p)
		body, err := r.EncodeCommit([]Event{ev})
		if err != nil {
			t.Fatal(err)
		}
		s := string(body)
		k := strings.Index(s, `"payload":`) + len(`"payload":`)
		pre = append(pre, s[:k])
		payloads = append(payloads, s[k:len(s)-3])
		post = append(post, s[len(s)-3:])
		subj = append(subj, "fledger.main.x.y")
	}
	return
}

func TestDecodeFast_OddValuesInEveryField(t *testing.T) {
	r := NewCatalogRegistry()
	pre, post, payloads, subj := adversarialCommits(t, r)
	vals := []string{
		`"a` + "\x01" + `b"`, `"a` + "\x7f" + `b"`, `"\x"`, `"\u12"`, `"\ud800"`, `"\udc00\ud800"`, `"` + "\xff" + `"`, `"` + "\xed\xa0\x80" + `"`,
		`01`, `-01`, `1.`, `.5`, `1e`, `1e+`, `-`, `+1`, `1.5`, `1e2`, `1E2`, `-0`, `-0.0`, `0x10`, `Infinity`, `NaN`,
		`tru`, `nul`, `fals`, `truee`, `nulll`, `TRUE`, `null`, `true`, `false`,
		`[1,]`, `[,1]`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{1:2}`, `[}`, `{]`, `[1 2]`, `{"a":1 "b":2}`,
		`"x"`, `""`, `[]`, `{}`, `[""]`, `[1]`, `[{}]`, `{"k":1}`, `[null]`, `{"a":{"b":[1,{"c":"]"}]}}`,
		"\"a\u2028b\"", `"\u0000"`, `"\/"`, `"\'"`, `"\a"`, `"\U0041"`,
		`18446744073709551616`, `9223372036854775808`, `-9223372036854775809`, `"18446744073709551616"`, `"-0"`, `" 1"`, `"1 "`, `"+1"`, `"0x1"`, `"1e1"`, `"01"`, `"1.0"`,
	}
	n, taken := 0, 0
	for i := range payloads {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(payloads[i]), &fields); err != nil {
			t.Fatal(err)
		}
		keys := []string{"zz_unknown"}
		for k := range fields {
			keys = append(keys, k)
		}
		for _, k := range keys {
			for _, v := range vals {
				for _, form := range []string{`{%q:%s}`, `{%q:[%s]}`, `{%q:{"a":%s}}`, `{%q:[{"a":%s}]}`} {
					p := fmt.Sprintf(form, k, v)
					data := pre[i] + p + post[i]
					for _, sv := range []string{"", "1", "2"} {
						d := data
						if sv != "" {
							d = regexp.MustCompile(`"schema_version":\d+`).ReplaceAllString(d, `"schema_version":`+sv)
						}
						tk, err := checkFastDecode(r, []byte(d), 7, subj[i])
						if tk {
							taken++
						}
						if err != nil {
							n++
							if n < 40 {
								t.Errorf("%s: %.400v", d[len(pre[i])-60:], err)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d divergences, %d taken", n, taken)
}

func TestDecodeFast_DeepPayloadUpcastOrUnplanned(t *testing.T) {
	r := NewCatalogRegistry()
	h := `{"events":[{"id":"i","type":"TurnStarted","schema_version":2,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t","payload":`
	for _, n := range []int{9997, 9998} {
		p := `{"turn_id":"t","x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
		checkAdversarial(t, r, "upcast depth", h+p+`}]}`)
		p = `{"turn_id":"t","x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
		checkAdversarial(t, r, "configapplied depth", `{"events":[{"id":"i","type":"ConfigApplied","schema_version":1,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"config","key":"t","payload":`+p+`}]}`)
	}
}

type profileClearedV2 struct {
	ProfileID string `json:"profile_id"`
	By        string `json:"by"`
}

func (profileClearedV2) EventType() string         { return "ProfileCleared" }
func (profileClearedV2) EventAggregate() Aggregate { return AggProfile }

func TestDecodeFast_UpcasterGetsACopy(t *testing.T) {
	r := NewCatalogRegistry()
	if err := r.Register(profileClearedV2{}, 2); err != nil {
		t.Fatal(err)
	}
	// An upcaster that edits in place (legal before: it got go-json's copy).
	up := func(p json.RawMessage) (json.RawMessage, error) {
		if i := strings.Index(string(p), `"by":"x"`); i >= 0 {
			p[i+6] = 'y'
		}
		return p, nil
	}
	if err := r.RegisterUpcaster("ProfileCleared", 1, up); err != nil {
		t.Fatal(err)
	}
	data := []byte(adversarialHead + `{"profile_id":"a","by":"x"}}]}`)
	orig := string(data)
	_, err := r.DecodeCommit(data, 7, adversarialSubj)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != orig {
		t.Errorf("DecodeCommit changed the caller's data:\n %s\n %s", orig, data)
	}
}

func TestPayloadPlan_MapIntOverflow(t *testing.T) {
	r := NewCatalogRegistry()
	e := r.lookup("ProfileFailureRecorded")
	samePlanDecode(t, e, `{"failure_counts":{"a":4294967296}}`)
	samePlanDecode(t, e, `{"failure_counts":{"a":-2147483649}}`)
}
