package projections

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// MoveAside renames the damaged projection database at path (with its WAL
// files) to path + ".damaged-" + the time now (UTC, to the second), so
// that the next [Open] starts an empty database to rebuild from the
// stream while the damaged file stays for whoever wants to look at it.
// It returns the new path. It moves only what [Remove] would delete (a
// fledger projection database, or an SQLite database too damaged to be
// read, that no other process has open) and otherwise returns Remove's
// error; nothing is moved then.
func MoveAside(ctx context.Context, path string, now time.Time) (string, error) {
	if err := checkRemovable(ctx, path); err != nil {
		return "", err
	}
	to := path + ".damaged-" + now.UTC().Format("20060102T150405Z")
	if _, err := os.Stat(to); err == nil {
		return "", fmt.Errorf("projections: %s already exists; move %s away yourself", to, path)
	}
	// The WAL and journal first: a main file moved without its WAL would
	// leave a hot WAL beside the empty database that takes its place,
	// which SQLite would apply to it. A failure stops before the main
	// file moves.
	for _, suffix := range []string{"-wal", "-journal", "-shm", ""} {
		if err := os.Rename(path+suffix, to+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("projections: move %s aside: %w", path+suffix, err)
		}
	}
	return to, nil
}
