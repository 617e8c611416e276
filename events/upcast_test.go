package events_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// profileClearedV2 is a test-only version 2 of ProfileCleared: "by" becomes
// a structured actor.
type profileClearedV2 struct {
	ProfileID string  `json:"profile_id"`
	Provider  string  `json:"provider,omitempty"`
	By        actorV2 `json:"by"`
	Note      string  `json:"note,omitempty"`
}

type actorV2 struct {
	Kind string `json:"kind"` // operator | cli | api
	Name string `json:"name,omitempty"`
}

func (profileClearedV2) EventType() string                { return "ProfileCleared" }
func (profileClearedV2) EventAggregate() events.Aggregate { return events.AggProfile }

// upProfileCleared1to2 turns v1's "by" string into v2's actor.
func upProfileCleared1to2(p json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		return nil, err
	}
	by, _ := m["by"].(string)
	switch by {
	case "cli", "api":
		m["by"] = map[string]any{"kind": by}
	case "":
		m["by"] = map[string]any{"kind": "operator"}
	default:
		m["by"] = map[string]any{"kind": "operator", "name": by}
	}
	return json.Marshal(m)
}

func registryV2(t *testing.T, withUpcaster bool) *events.Registry {
	reg := events.NewCatalogRegistry()
	testutil.NoError(t, reg.Register(profileClearedV2{}, 2))
	if withUpcaster {
		testutil.NoError(t, reg.RegisterUpcaster("ProfileCleared", 1, upProfileCleared1to2))
	}
	return reg
}

func TestUpcast_StoredV1IsReadAsV2(t *testing.T) {
	dir := t.TempDir()
	ctx := testutil.Context(t)
	s, err := events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	v1 := events.New("main", "anthropic:ops@example.com", t0,
		events.ProfileCleared{ProfileID: "anthropic:ops@example.com", Provider: "anthropic", By: "alice", Note: "recharged"})
	subj, _ := v1.Subject()
	_, err = s.Append(ctx, subj, 0, v1)
	testutil.NoError(t, err)
	testutil.NoError(t, s.Close())

	s, err = events.Open(ctx, events.WithDataDir(dir), events.WithRegistry(registryV2(t, true)))
	testutil.NoError(t, err)
	defer s.Close()
	got, last, err := s.ReadSubject(ctx, subj)
	testutil.NoError(t, err)
	if len(got) != 1 {
		t.Fatalf("%d events", len(got))
	}
	want := profileClearedV2{ProfileID: "anthropic:ops@example.com", Provider: "anthropic",
		By: actorV2{Kind: "operator", Name: "alice"}, Note: "recharged"}
	if got[0].Data != want || got[0].SchemaVersion != 2 || got[0].ID != v1.ID {
		t.Fatalf("read %+v (v%d), want %+v (v2)", got[0].Data, got[0].SchemaVersion, want)
	}
	// New events of the type are written at v2, and read back as such.
	v2 := events.New("main", "anthropic:ops@example.com", t0, profileClearedV2{ProfileID: "anthropic:ops@example.com", By: actorV2{Kind: "cli"}})
	_, err = s.Append(ctx, subj, last, v2)
	testutil.NoError(t, err)
	got, _, err = s.ReadSubject(ctx, subj)
	testutil.NoError(t, err)
	if got[1].Data != v2.Data || got[1].SchemaVersion != 2 {
		t.Fatalf("v2 event read as %+v v%d", got[1].Data, got[1].SchemaVersion)
	}
	// A v1 value can no longer be appended: the registry's type is v2.
	_, err = s.Append(ctx, subj, events.AnySeq, v1)
	testutil.ErrorIs(t, err, events.ErrInvalidPayload)
}

func TestUpcast_MissingUpcasterIsADecodeError(t *testing.T) {
	reg := events.NewCatalogRegistry()
	body, err := reg.EncodeCommit([]events.Event{events.New("main", "p", t0, events.ProfileCleared{ProfileID: "p"})})
	testutil.NoError(t, err)
	_, err = registryV2(t, false).DecodeCommit(body, 9, "fledger.main.profile.p")
	var de *events.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, events.ErrUpcast) || de.Seq != 9 || de.Type != "ProfileCleared" {
		t.Fatalf("error %v, want an ErrUpcast DecodeError for seq 9", err)
	}
}
