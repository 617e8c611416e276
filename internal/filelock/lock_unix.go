//go:build unix

package filelock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock takes an exclusive, non-blocking flock on f, held until f is
// closed; the kernel drops it when the process dies, so a crash leaves
// no stale lock. When another open file description holds it, Lock
// returns ErrLocked and the holder's pid when the system tells it (Linux:
// /proc/locks), else 0.
// Supported reports whether Lock really locks here: it does (flock).
const Supported = true

func Lock(f *os.File) (holder int, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return holderOf(f), ErrLocked
	}
	if err != nil {
		return 0, fmt.Errorf("filelock: lock %s: %w", f.Name(), err)
	}
	return 0, nil
}
