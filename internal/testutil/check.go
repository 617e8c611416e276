package testutil

import (
	"testing"
	"time"
)

// CheckFor calls f every interval until it returns nil and fails the test
// with f's last error when timeout passes first: for state that becomes
// true eventually (a consumer caught up, a leader elected). The timeout
// is a bound, never an assertion about speed.
func CheckFor(t testing.TB, timeout, interval time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true after %v: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}
