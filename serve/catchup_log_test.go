package serve

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// A background catch-up that goes on failing the same way is logged
// once, then at most every 30 s with how long and how often it failed;
// a kind of error not logged before in the run is logged at once (one
// seen before, wrapped differently, waits), and the first success after
// failures once.
func TestCatchUpLog_RepeatsSpaced(t *testing.T) {
	var buf bytes.Buffer
	c := catchUpLog{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime}))}
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	gone := errors.New("stream gone")
	down := errors.New("no responders")
	steps := []struct {
		at  time.Duration
		err error
	}{
		{0, nil},
		{500 * time.Millisecond, gone},
		{time.Second, gone},
		{29 * time.Second, gone},
		{30500 * time.Millisecond, gone},
		{31 * time.Second, gone},
		{31500 * time.Millisecond, down},
		{32 * time.Second, down},
		{32100 * time.Millisecond, fmt.Errorf("catch-up from 9: %w", gone)}, // a kind seen before: at the spacing
		{32500 * time.Millisecond, nil},
		{33 * time.Second, nil},
		{34 * time.Second, down},
	}
	for _, s := range steps {
		c.note(t0.Add(s.at), s.err)
	}
	want := `level=WARN msg="projections: catch-up" err="stream gone"
level=WARN msg="projections: catch-up still failing" err="stream gone" failing_for=30s failed_catch_ups=4
level=WARN msg="projections: catch-up still failing" err="no responders" failing_for=31s failed_catch_ups=6
level=INFO msg="projections: catch-up succeeds again" failed_for=32s failed_catch_ups=8
level=WARN msg="projections: catch-up" err="no responders"
`
	if got := buf.String(); got != want {
		t.Fatalf("logged:\n%s\nwant:\n%s", got, want)
	}
}
