//go:build unix

package sqlitedb

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The byte ranges SQLite's unix VFS locks with fcntl (see os_unix.c and
// os.h): in the database file the pending, reserved and shared bytes —
// a connection in WAL mode holds a shared lock there as long as it is
// open —, in the -shm file the WAL-index locks up to the "dead man
// switch" byte every connection holds a read lock on while it has the
// WAL index mapped.
const (
	pendingByte  = 0x40000000
	lockRangeLen = 2 + 510
	shmLockFirst = 120
	shmLockLen   = 8 + 1
)

// InUse reports whether another process has the SQLite database at path
// open: it asks the kernel (fcntl F_GETLK, nothing is locked) whether a
// lock of SQLite's is held on the database file or its -shm file. Locks
// of this process are not seen, and closing a descriptor drops this
// process's own fcntl locks on the file: call it only while this process
// has no connection to path. A missing file is not in use.
func InUse(path string) (bool, error) {
	for _, r := range []struct {
		file       string
		start, len int64
	}{{path, pendingByte, lockRangeLen}, {path + "-shm", shmLockFirst, shmLockLen}} {
		held, err := lockHeld(r.file, r.start, r.len)
		if err != nil || held {
			return held, err
		}
	}
	return false, nil
}

// lockHeld reports whether another process holds an fcntl lock that
// overlaps [start, start+n) of file.
func lockHeld(file string, start, n int64) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: start, Len: n}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return false, fmt.Errorf("sqlitedb: lock test on %s: %w", file, err)
	}
	return lk.Type != unix.F_UNLCK, nil
}
