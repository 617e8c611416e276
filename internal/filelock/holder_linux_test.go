package filelock

import "testing"

func TestFlockHolder(t *testing.T) {
	const locks = `1: POSIX  ADVISORY  WRITE 900 fe:00:77 0 EOF
2: FLOCK  ADVISORY  WRITE 17257 fe:00:10405169 0 EOF
2: -> FLOCK  ADVISORY  WRITE 18000 fe:00:10405169 0 EOF
3: FLOCK  ADVISORY  WRITE 4242 08:01:10405169 0 EOF
`
	for _, tc := range []struct {
		id   string
		want int
	}{
		{"fe:00:10405169", 17257}, // the holder, not the waiter
		{"08:01:10405169", 4242},  // same inode on another device
		{"fe:00:77", 0},           // a POSIX (fcntl) lock is not a flock
		{"fe:00:1", 0},
	} {
		if got := flockHolder(locks, tc.id); got != tc.want {
			t.Errorf("flockHolder(%s) = %d, want %d", tc.id, got, tc.want)
		}
	}
}

func TestFileID(t *testing.T) {
	for _, tc := range []struct {
		dev, ino uint64
		want     string
	}{
		{65024, 10405169, "fe:00:10405169"},
		{0x801, 12, "08:01:12"},
		{0x10300, 5, "103:00:5"}, // major 259 (nvme)
	} {
		if got := fileID(tc.dev, tc.ino); got != tc.want {
			t.Errorf("fileID(%#x, %d) = %s, want %s", tc.dev, tc.ino, got, tc.want)
		}
	}
}
