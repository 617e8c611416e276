package projections

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fledger/fledger/internal/sqlitedb"
)

// Errors of [Remove]: the file at the path is left as it is.
var (
	// ErrNotProjectionDB: the path is a directory, not a regular file,
	// not an SQLite database, or an SQLite database without fledger's
	// projection_meta table.
	ErrNotProjectionDB = errors.New("projections: not a fledger projection database, not deleted")
	// ErrInUse: another process (a running `fledger serve` or `view`, or
	// a catch-up) has the database open.
	ErrInUse = errors.New("projections: database in use by another process, not deleted")
)

// Remove deletes the projection database at path (with its WAL files) so
// the next [Open] starts empty, and reports whether there was a file to
// delete; a missing file is not an error. The event
// stream is not touched. It deletes only what fledger can tell is its own
// projection database and nobody else uses — an empty file, a fledger
// projection database, or an SQLite database too damaged to be read —
// and otherwise returns an error naming the path and the remedy that
// wraps [ErrNotProjectionDB] (a directory, another kind of file, a file
// that is not an SQLite database, an SQLite database without the
// projection_meta table) or [ErrInUse] (another process has it open: see
// [sqlitedb.InUse], where that is known). Call it while this process has
// the database closed.
func Remove(ctx context.Context, path string) (removed bool, err error) {
	if err := checkRemovable(ctx, path); err != nil {
		return false, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, sqlitedb.Remove(path)
	}
	return true, sqlitedb.Remove(path)
}

// checkRemovable returns nil when path may be deleted as a projection
// database, else the error [Remove] returns.
func checkRemovable(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("projections: %w", err)
	case fi.IsDir():
		return fmt.Errorf("%w: %s is a directory; name a database file, e.g. %s", ErrNotProjectionDB, path, filepath.Join(path, DefaultFile))
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file (%s); name a database file", ErrNotProjectionDB, path, fi.Mode().Type())
	}
	inUse, err := sqlitedb.InUse(path)
	if err != nil {
		return fmt.Errorf("projections: %w", err)
	}
	if inUse {
		return fmt.Errorf("%w: %s is open in another process (a running `fledger serve` or `fledger view`?); stop that process first, or write the rebuild to another file", ErrInUse, path)
	}
	if fi.Size() == 0 {
		return nil
	}
	isSQLite, err := sqlitedb.HasHeader(path)
	if err != nil {
		return fmt.Errorf("projections: %w", err)
	}
	if !isSQLite {
		return fmt.Errorf("%w: %s is not an SQLite database (it does not start with %q); name another file, or delete it yourself if it is a damaged projection database", ErrNotProjectionDB, path, sqlitedb.Header)
	}
	ours, err := hasMetaTable(ctx, path)
	if err != nil {
		return err
	}
	if !ours {
		return fmt.Errorf("%w: %s is an SQLite database without fledger's projection_meta table; name another file", ErrNotProjectionDB, path)
	}
	return nil
}

// hasMetaTable reports whether the SQLite database at path has no tables
// or a projection_meta table, read-only; a database too damaged to be
// read counts as fledger's (a damaged projection database is what a
// rebuild replaces).
func hasMetaTable(ctx context.Context, path string) (bool, error) {
	db, err := sqlitedb.OpenReadOnly(ctx, path, readOnlyBusyMs)
	if err == nil {
		defer db.Close()
		var tables, meta int
		err = db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE name = 'projection_meta') FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &meta)
		if err == nil {
			return tables == 0 || meta == 1, nil
		}
	}
	if sqlitedb.IsCorrupt(err) {
		return true, nil
	}
	return false, fmt.Errorf("projections: read %s: %w", path, err)
}
