package events

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// What each append's outcome does to the store's write status: a stored
// append or a conflict (the server answered) clears the failures; an
// UnavailableError while the caller waited counts one; a caller that gave
// up, or bad input, says nothing about the store.
func TestWriteHealth_Note(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	unavailable := fmt.Errorf("events: append to x: %w", &UnavailableError{Op: "append", Outcome: OutcomeUnknown, Err: errors.New("nats: timeout")})
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	var w writeHealth
	steps := []struct {
		ctx  context.Context
		err  error
		want WriteStatus
	}{
		{context.Background(), unavailable, WriteStatus{Failures: 1, FailingSince: t0, LastFailure: t0, LastErr: unavailable, Total: 1}},
		{context.Background(), unavailable, WriteStatus{Failures: 2, FailingSince: t0, LastFailure: t0.Add(time.Second), LastErr: unavailable, Total: 2}},
		{gone, unavailable, WriteStatus{Failures: 2, FailingSince: t0, LastFailure: t0.Add(time.Second), LastErr: unavailable, Total: 2}},
		{context.Background(), ErrInvalidEnvelope, WriteStatus{Failures: 2, FailingSince: t0, LastFailure: t0.Add(time.Second), LastErr: unavailable, Total: 2}},
		{context.Background(), &ConflictError{Subject: "x"}, WriteStatus{LastStored: t0.Add(4 * time.Second), Total: 2}},
		{context.Background(), unavailable, WriteStatus{Failures: 1, FailingSince: t0.Add(5 * time.Second), LastFailure: t0.Add(5 * time.Second), LastErr: unavailable, LastStored: t0.Add(4 * time.Second), Total: 3}},
		{context.Background(), nil, WriteStatus{LastStored: t0.Add(6 * time.Second), Total: 3}},
	}
	for i, s := range steps {
		w.note(s.ctx, s.err, t0.Add(time.Duration(i)*time.Second))
		if got := w.status(); got != s.want {
			t.Fatalf("step %d: %+v, want %+v", i, got, s.want)
		}
	}
}

// A store's appends reach its write status: stored ones, and one the
// server does not confirm in time (a closed connection's publish).
func TestWriteHealth_Appends(t *testing.T) {
	st, err := Open(context.Background(), WithDataDir(t.TempDir()), WithTimeout(200*time.Millisecond), WithRetryUnknown(300*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := st.(*store)
	subj := MustSubject("main", AggTurn, "t1")
	if _, err := st.Append(context.Background(), subj, 0, New("main", "t1", groupT0, TurnSucceeded{TurnID: "t1", Attempts: 1})); err != nil {
		t.Fatal(err)
	}
	if ws := WriteHealth(st); ws.Failures != 0 || ws.LastStored.IsZero() {
		t.Fatalf("after a stored append: %+v", ws)
	}
	// The server stops answering the stream's writes.
	if err := s.srv.NATS().DisableJetStream(); err != nil {
		t.Fatal(err)
	}
	_, err = st.Append(context.Background(), subj, 1, New("main", "t1", groupT0, TurnSucceeded{TurnID: "t1", Attempts: 1}))
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("append with JetStream off: %v, want an UnavailableError", err)
	}
	if ws := WriteHealth(st); ws.Failures != 1 || ws.Total != 1 || ws.LastErr == nil {
		t.Fatalf("after an append not stored: %+v", ws)
	}
}
