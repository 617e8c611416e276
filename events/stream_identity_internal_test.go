package events

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A creation time different from the one the store opened is confirmed
// by the first message before the stream counts as replaced: a stream
// whose stored metadata has no creation time (an old server's) is
// stamped again at every server restart, and must not take a running
// serve down.
func TestReplaced_ConfirmedByTheFirstMessage(t *testing.T) {
	s := openGroupStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, MustSubject("main", AggTurn, "t1"), 0, New("main", "t1", time.Unix(1, 0), TurnStarted{TurnID: "t1", Session: "s", Chat: "direct", Seed: 1})); err != nil {
		t.Fatal(err)
	}
	// Opened before the append: the store's record is of an empty stream.
	if s.opened.FirstID != "" {
		t.Fatalf("opened an empty stream, recorded first id %q", s.opened.FirstID)
	}
	if err := s.noteOpened(ctx); err != nil { // as if opened now
		t.Fatal(err)
	}
	info, err := s.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	restamped := *info
	restamped.Created = info.Created.Add(time.Hour)
	for _, tc := range []struct {
		name     string
		info     *jetstream.StreamInfo
		firstID  string
		replaced bool
	}{
		{"the same stream", info, s.opened.FirstID, false},
		{"restamped at a server restart, same first message", &restamped, s.opened.FirstID, false},
		{"made again: another first message", &restamped, "another-id", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			was := s.opened
			defer func() { s.opened = was }()
			s.opened.FirstID = tc.firstID
			err := s.replaced(ctx, tc.info)
			if got := errors.Is(err, ErrStreamGone); got != tc.replaced {
				t.Fatalf("replaced: %v, want replaced %v", err, tc.replaced)
			}
		})
	}
	// Empty when opened: the configured first sequence decides.
	s.opened.FirstID = ""
	if err := s.replaced(ctx, &restamped); err != nil {
		t.Fatalf("empty when opened, same first sequence: %v", err)
	}
	other := restamped
	other.Config.FirstSeq = 500
	if err := s.replaced(ctx, &other); !errors.Is(err, ErrStreamGone) {
		t.Fatalf("empty when opened, another first sequence: %v, want ErrStreamGone", err)
	}
}
