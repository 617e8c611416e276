package events_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

func TestExamples_CoverTheCatalog(t *testing.T) {
	cat, ex := events.Catalog(), events.Examples()
	if len(cat) != len(ex) {
		t.Fatalf("%d catalog types, %d examples", len(cat), len(ex))
	}
	for i := range cat {
		if reflect.TypeOf(cat[i]) != reflect.TypeOf(ex[i]) {
			t.Fatalf("example %d is %T, catalog has %T", i, ex[i], cat[i])
		}
	}
}

func TestCodec_EveryCatalogTypeRoundTrips(t *testing.T) {
	reg := events.NewCatalogRegistry()
	var evs []events.Event
	for _, p := range events.Examples() {
		evs = append(evs, events.New("main", "key:1", t0, p, events.WithCorrelation("turn-01JH8Z")))
	}
	body, err := reg.EncodeCommit(evs)
	testutil.NoError(t, err)
	got, err := reg.DecodeCommit(body, 7, "fledger.main.turn.key:1")
	testutil.NoError(t, err)
	if len(got) != len(evs) {
		t.Fatalf("decoded %d events, want %d", len(got), len(evs))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i].Data, evs[i].Data) {
			t.Fatalf("%s: decoded %#v\nwant %#v", evs[i].Type, got[i].Data, evs[i].Data)
		}
		if got[i].Seq != 7 || got[i].Index != i || got[i].Aggregate != evs[i].Data.EventAggregate() {
			t.Fatalf("%s: envelope %+v", evs[i].Type, got[i].Envelope)
		}
	}
	// The wire form: an envelope per event, at in RFC 3339 UTC.
	var c struct {
		Events []map[string]json.RawMessage `json:"events"`
	}
	testutil.NoError(t, json.Unmarshal(body, &c))
	if at := string(c.Events[0]["at"]); at != `"2026-01-15T10:00:00Z"` {
		t.Fatalf("at encoded as %s", at)
	}
	for _, k := range []string{"id", "type", "schema_version", "at", "agent", "aggregate", "key", "correlation_id", "payload"} {
		if _, ok := c.Events[0][k]; !ok {
			t.Fatalf("envelope lacks %q: %v", k, c.Events[0])
		}
	}
}

func TestNew_FillsTheEnvelope(t *testing.T) {
	at := t0.Add(123456789) // 123.456789 ms
	ev := events.New("main", "p", at, events.ProfileCleared{ProfileID: "p"}, events.WithCausation("c"), events.WithCorrelation("r"))
	if ev.Type != "ProfileCleared" || ev.Aggregate != events.AggProfile || ev.Agent != "main" || ev.Key != "p" ||
		ev.CausationID != "c" || ev.CorrelationID != "r" || !ev.At.Equal(t0.Add(123e6)) {
		t.Fatalf("envelope %+v", ev.Envelope)
	}
	if len(ev.ID) != 36 || ev.ID[14] != '7' {
		t.Fatalf("id %q is not a UUIDv7", ev.ID)
	}
	if ev2 := events.New("main", "p", at, events.ProfileCleared{ProfileID: "p"}); ev2.ID <= ev.ID {
		t.Fatalf("UUIDv7 ids do not increase: %s then %s", ev.ID, ev2.ID)
	}
}

func TestDecodeCommit_UnknownTypeNamesTypeAndSequence(t *testing.T) {
	reg := events.NewCatalogRegistry()
	_, err := reg.DecodeCommit([]byte(`{"events":[{"type":"Martian","schema_version":1,"payload":{}}]}`), 42, "fledger.a.turn.t")
	if !errors.Is(err, events.ErrDecode) || !errors.Is(err, events.ErrUnknownType) ||
		!strings.Contains(err.Error(), "Martian") || !strings.Contains(err.Error(), "42") {
		t.Fatalf("error %v", err)
	}
}

// An event whose envelope names another aggregate than its type's (a
// forged message: Encode never writes one) is not decoded, so no reader
// folds it into the envelope's aggregate while another folds it by type.
func TestDecodeCommit_AggregateOtherThanTheTypesIsRefused(t *testing.T) {
	reg := events.NewCatalogRegistry()
	body := `{"events":[{"id":"01a231ef-cc76-7910-aa95-d382b5235c0c","type":"TurnStarted","schema_version":1,` +
		`"at":"2026-12-01T14:08:48.757Z","agent":"main","aggregate":"session","key":"forged","payload":{"turn_id":"forged","session":"s1"}}]}`
	_, err := reg.DecodeCommit([]byte(body), 7, "fledger.main.session.forged")
	var de *events.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, events.ErrInvalidEnvelope) || de.Seq != 7 || de.Index != 0 || de.Type != "TurnStarted" ||
		!strings.Contains(err.Error(), `events[0].aggregate: want "turn" (the aggregate of TurnStarted) or no aggregate field, found "session"`) {
		t.Fatalf("error %v", err)
	}
}

// An event of another agent than the subject it is stored under (a forged
// message: Append never stores one) is not decoded, so no reader folds it
// for that agent while the agent's engine, reading its own subjects, never
// sees it.
func TestDecodeCommit_AgentOtherThanTheSubjectsIsRefused(t *testing.T) {
	reg := events.NewCatalogRegistry()
	body := `{"events":[{"id":"01a231ef-cc76-7910-aa95-d382b5235c0c","type":"SessionAuthPinned","schema_version":1,` +
		`"at":"2026-12-01T14:08:48.757Z","agent":"coder","aggregate":"session","key":"m9",` +
		`"payload":{"session":"m9","profile_id":"anthropic:personal","provider":"anthropic","source":"user"}}]}`
	_, err := reg.DecodeCommit([]byte(body), 9, "fledger.main.session.m9")
	var de *events.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, events.ErrInvalidEnvelope) || de.Seq != 9 || de.Index != 0 ||
		!strings.Contains(err.Error(), `events[0].agent: want "main" (the agent of the subject it is stored under), found "coder"`) {
		t.Fatalf("error %v", err)
	}
	if _, err := reg.DecodeCommit([]byte(body), 9, "fledger.coder.session.m9"); err != nil {
		t.Fatalf("under coder's own subject: %v", err)
	}
}

// Every catalog type names its aggregate key, so no decider can emit an
// event whose key KeyOf does not know.
func TestKeyOf_EveryCatalogType(t *testing.T) {
	for _, p := range events.Examples() {
		if events.KeyOf(p) == "" {
			t.Errorf("KeyOf(%s) is empty", p.EventType())
		}
	}
}
