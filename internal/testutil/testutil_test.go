package testutil

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

func TestManualClock(t *testing.T) {
	c := NewManualClock(T0)
	if err := c.Sleep(context.Background(), 90*time.Second); err != nil {
		t.Fatal(err)
	}
	c.Advance(-time.Hour)
	c.Advance(30 * time.Second)
	if got, want := c.Now(), T0.Add(2*time.Minute); !got.Equal(want) {
		t.Fatalf("now %v, want %v", got, want)
	}
}

func TestCheckFor(t *testing.T) {
	n := 0
	CheckFor(t, time.Minute, time.Millisecond, func() error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if n != 3 {
		t.Fatalf("f called %d times, want 3", n)
	}
}

// cleared is one commit for the profile subject of key.
func cleared(key string) events.AppendRequest {
	return events.AppendRequest{Subject: events.MustSubject("main", events.AggProfile, key),
		Events: []events.Event{events.New("main", key, T0, events.ProfileCleared{ProfileID: key, By: "testutil"})}}
}

func TestOpenPair_BothStoresWriteOneStream(t *testing.T) {
	first, second := OpenPair(t)
	_, err := second.AppendCommit(Context(t), cleared("openai:a"))
	NoError(t, err)
	_, err = first.AppendCommit(Context(t), cleared("openai:b"))
	NoError(t, err)
	if a, b := LastSeq(t, first), LastSeq(t, second); a != 2 || b != 2 {
		t.Fatalf("last seq %d and %d, want 2 on both", a, b)
	}
}

func TestRefusingStore_RefusesOnlyWhileSet(t *testing.T) {
	st, _ := OpenStore(t, NoFsync)
	rs := &RefusingStore{Store: st}
	rs.Refuse.Store(true)
	_, err := rs.AppendCommit(Context(t), cleared("openai:a"))
	ErrorIs(t, err, events.ErrInvalidEnvelope)
	if n := LastSeq(t, rs); n != 0 {
		t.Fatalf("a refused commit stored: last seq %d", n)
	}
	rs.Refuse.Store(false)
	_, err = rs.AppendCommit(Context(t), cleared("openai:a"))
	NoError(t, err)
	if n := LastSeq(t, rs); n != 1 {
		t.Fatalf("last seq %d, want 1", n)
	}
}

func TestEachScenario_RunsOneSubtestPerFixtureScenario(t *testing.T) {
	var names []string
	EachScenario(t, func(t *testing.T, path string) {
		if _, err := os.Stat(path); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(path))
	})
	if len(names) != len(Scenarios(t)) || !slices.Contains(names, "incident-day.yaml") {
		t.Fatalf("subtests %v", names)
	}
}
