//go:build unix

package natsserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on dir/fledger.lock. The
// lock is released by the kernel when the process dies, so a crash never
// leaves a stale lock behind.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("natsserver: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := ""
			if b, rerr := os.ReadFile(path); rerr == nil && len(strings.TrimSpace(string(b))) > 0 {
				holder = " by pid " + strings.TrimSpace(string(b))
			}
			return nil, fmt.Errorf("%w: %s is locked%s (%s); another fledger is running on it — stop it, use another --data, or reach its ledger through it: start that one with --nats-listen PORT and run this command with --nats nats://127.0.0.1:PORT --data %s (docs/api.md)", ErrLocked, dir, holder, path, dir)
		}
		return nil, fmt.Errorf("natsserver: lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return f, nil
}

func unlockDir(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	_ = f.Close()
}
