package events

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestSnapshots_OtherStreamIsReplaced: a stored snapshot taken on another
// incarnation of the stream (a backup restored in its place) is replaced
// by the next save whatever its seq; one of this stream at a later seq
// stands.
func TestSnapshots_OtherStreamIsReplaced(t *testing.T) {
	s := openGroupStore(t)
	ctx := context.Background()
	obs, err := s.snapshotBucket(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	name := EncodeToken("main")
	put := func(seq, created string) {
		t.Helper()
		if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name,
			Metadata: map[string]string{snapshotSeqMeta: seq, snapshotStreamMeta: created}}, bytes.NewReader([]byte("old"))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, seq, created string
		saved              bool
	}{
		{"another stream, later seq", "483", "2020-01-01T00:00:00Z", true},
		{"no stream metadata (the nats CLI)", "483", "", true},
		{"this stream, later seq", "483", s.stream.CachedInfo().Created.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put(tc.seq, tc.created)
			saved, err := s.SaveSnapshot(ctx, "main", 95, []byte("new"))
			if err != nil {
				t.Fatal(err)
			}
			data, seq, err := s.LoadSnapshot(ctx, "main")
			if err != nil {
				t.Fatal(err)
			}
			if saved != tc.saved {
				t.Fatalf("saved %v, want %v (stored now %q at %d)", saved, tc.saved, data, seq)
			}
			if want := map[bool]string{true: "new", false: "old"}[tc.saved]; string(data) != want {
				t.Fatalf("stored %q, want %q", data, want)
			}
		})
	}
}

// TestSnapshots_ForeignObjectIsBad: an object without fledger's seq
// metadata (put with the nats CLI) loads as ErrBadSnapshot, naming agent
// and the metadata.
func TestSnapshots_ForeignObjectIsBad(t *testing.T) {
	s := openGroupStore(t)
	ctx := context.Background()
	obs, err := s.snapshotBucket(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: EncodeToken("main")}, bytes.NewReader([]byte("{}"))); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.LoadSnapshot(ctx, "main")
	if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), `snapshot of agent "main": metadata seq ""`) {
		t.Fatalf("load: %v, want ErrBadSnapshot naming the agent and the metadata", err)
	}
}
