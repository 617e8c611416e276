package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// A session's zero fields are left out of the snapshot, and the state
// restored from it is the state encoded, field for field: a nil map or
// slice stays nil, an empty one stays empty, a zero model reference stays
// zero. A session holding only an auto pin encodes to exactly its pin.
func TestSnapshot_SessionsEncodeOnlyWhatTheyHold(t *testing.T) {
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	st := newState("main")
	st.applied = 9
	st.sessions = map[string]*sessionView{
		"pinned": {state: policy.SessionState{Session: "pinned", Pin: "anthropic:a", PinProvider: "anthropic", PinSource: "auto"}},
		"full": {state: policy.SessionState{Session: "full", Model: gpt, Source: "user", Origin: gpt, Fallbacks: []policy.ModelRef{gpt},
			HasFallbacks: true, Notice: policy.NoticeState{Selected: "a/b", Active: "c/d", Reason: "rate_limit"},
			CompactionCount: 2, LastReset: "new", UserCommandSeq: 7, OtherCommandSeq: 5},
			lastAutoProbeAt:  1768471200000,
			skipMarks:        map[string]policy.SkipMark{"k": {At: 1, Reason: "auth"}},
			profileSkipMarks: map[string]policy.SkipMark{}},
		"empty fallbacks": {state: policy.SessionState{Fallbacks: []policy.ModelRef{}, HasFallbacks: true}},
		"marks only":      {skipMarks: map[string]policy.SkipMark{"k": {}}, profileSkipMarks: map[string]policy.SkipMark{}},
	}
	enc, err := st.encodeState()
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Sessions map[string]json.RawMessage `json:"sessions"`
	}
	if err := json.Unmarshal(enc, &raw); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"pinned":          `{"state":{"Session":"pinned","Pin":"anthropic:a","PinProvider":"anthropic","PinSource":"auto"}}`,
		"empty fallbacks": `{"state":{"Fallbacks":[],"HasFallbacks":true}}`,
		"marks only":      `{"state":{},"skip_marks":{"k":{}},"profile_skip_marks":{}}`,
	} {
		if got := string(raw.Sessions[key]); got != want {
			t.Errorf("session %q encodes as\n %s\nwant\n %s", key, got, want)
		}
	}
	restored, err := restoreState("main", st.keep, &Snapshot{Seq: 9, State: enc})
	if err != nil {
		t.Fatal(err)
	}
	for key, v := range st.sessions {
		if got := restored.sessions[key]; !reflect.DeepEqual(got, v) {
			t.Errorf("session %q restored as\n %#v\nwant\n %#v", key, got, v)
		}
	}
	again, err := restored.encodeState()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(enc) {
		t.Fatalf("the restored state encodes otherwise:\n%s\n%s", again, enc)
	}
}
