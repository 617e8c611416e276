//go:build !unix

package natsserver

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir creates dir/fledger.lock exclusively. Without flock a crashed
// process leaves the file behind; remove it by hand after checking that no
// fledger runs on the directory.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		if os.IsExist(err) {
			return nil, fmt.Errorf("%w: %s is locked (%s exists); another fledger is running on it, or one crashed (then delete the file)", ErrLocked, dir, path)
		}
		return nil, fmt.Errorf("natsserver: lock %s: %w", path, err)
	}
	return f, nil
}

func unlockDir(f *os.File) {
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
}
