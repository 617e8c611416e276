package filelock

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// holderOf is the pid /proc/locks names as holding the flock on f's
// inode, or 0 when it names none (or cannot be read).
func holderOf(f *os.File) int {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	dev := uint64(st.Dev) //nolint:unconvert // Dev's type differs by architecture
	return flockHolder(string(b), fileID(dev, uint64(st.Ino)))
}

// fileID is a file's device and inode as /proc/locks prints them
// (major:minor:inode, the device numbers in hex).
func fileID(dev, ino uint64) string {
	major := (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)
	minor := dev&0xff | (dev>>12)&^uint64(0xff)
	return fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
}

// flockHolder is the pid of the FLOCK line of locks (/proc/locks) on
// id, or 0.
func flockHolder(locks, id string) int {
	for _, line := range strings.Split(locks, "\n") {
		f := strings.Fields(line)
		// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a blocked
		// waiter has "->" after the number.
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != id {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
