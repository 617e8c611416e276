package events_test

import (
	"errors"
	"iter"
	"testing"
	"time"
)

// iterated runs an iteration (Watch, Follow) on its own goroutine and
// hands out what it yields, so a case can append between two items.
type iterated[T any] struct {
	items chan T
	ended chan error // the error it ended with; closed when it ended without
}

// iterate starts seq; it stops at its first error.
func iterate[T any](seq iter.Seq2[T, error]) *iterated[T] {
	it := &iterated[T]{items: make(chan T, 64), ended: make(chan error, 1)}
	go func() {
		defer close(it.ended)
		for v, err := range seq {
			if err != nil {
				it.ended <- err
				return
			}
			it.items <- v
		}
	}()
	return it
}

// hangLimit bounds every wait for an iteration, so a case that would hang
// fails instead.
const hangLimit = 10 * time.Second

// next is the next item; what names it in the failure.
func (it *iterated[T]) next(t testing.TB, what string) T {
	t.Helper()
	select {
	case v := <-it.items:
		return v
	case err := <-it.ended:
		t.Fatalf("iteration ended waiting for %s: %v", what, err)
	case <-time.After(hangLimit):
		t.Fatalf("iteration yielded no %s within %v", what, hangLimit)
	}
	var zero T
	return zero
}

// wantEnd waits for the iteration to end with an error wrapping want (nil:
// without an error) and checks it yielded nothing more.
func (it *iterated[T]) wantEnd(t testing.TB, want error) {
	t.Helper()
	select {
	case err, failed := <-it.ended:
		if want == nil && failed {
			t.Fatalf("iteration ended with %v, want no error", err)
		}
		if want != nil && !errors.Is(err, want) {
			t.Fatalf("iteration ended with %v, want %v", err, want)
		}
	case <-time.After(hangLimit):
		t.Fatalf("iteration did not end within %v", hangLimit)
	}
	select {
	case v := <-it.items:
		t.Fatalf("extra item %+v", v)
	default:
	}
}
