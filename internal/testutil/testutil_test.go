package testutil

import (
	"context"
	"errors"
	"testing"
	"time"
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
