//go:build unix

package filelock_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fledger/fledger/internal/filelock"
)

// A second open of a locked file is refused, naming the holder (on
// Linux); once the first is closed the lock is free again.
func TestLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.jsonl")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		return f
	}
	a, b := open(), open()
	if pid, err := filelock.Lock(a); pid != 0 || err != nil {
		t.Fatalf("first lock: %d, %v", pid, err)
	}
	want := 0
	if runtime.GOOS == "linux" {
		want = os.Getpid()
	}
	if pid, err := filelock.Lock(b); pid != want || !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("second lock: %d, %v; want %d, ErrLocked", pid, err, want)
	}
	_ = a.Close()
	if pid, err := filelock.Lock(b); pid != 0 || err != nil {
		t.Fatalf("lock after the holder closed: %d, %v", pid, err)
	}
}
