package serve

import (
	"bytes"
	"log/slog"
	"testing"
)

// The health status is logged when it changes, starting from ok: a
// first ok is not logged ("ok again" with nothing wrong before it was
// confusing), a degraded status is, and so is the ok after it.
func TestLogHealth_ChangesOnlyStartingFromOK(t *testing.T) {
	var buf bytes.Buffer
	s := &Service{cfg: Config{Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime}))}}
	for _, h := range []*Health{
		{Status: "ok"},
		{Status: "ok"},
		{Status: "degraded", Degraded: []string{"projections: behind by 9 messages and not advancing"}},
		{Status: "degraded", Degraded: []string{"projections: behind by 9 messages and not advancing"}},
		{Status: "ok"},
	} {
		s.logHealth(h)
	}
	want := `level=WARN msg="health: degraded" degraded="projections: behind by 9 messages and not advancing"
level=INFO msg="health: ok again"
`
	if got := buf.String(); got != want {
		t.Fatalf("logged:\n%s\nwant:\n%s", got, want)
	}
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
