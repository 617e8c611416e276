// Package sqlitedb opens SQLite databases (modernc.org/sqlite, pure Go) the
// way every fledger read model wants them: WAL journal, synchronous=NORMAL,
// a busy timeout, immediate write transactions and one connection.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"modernc.org/sqlite"
)

// BusyTimeoutMs is how long a statement waits for another writer's lock
// before failing with SQLITE_BUSY, in milliseconds.
const BusyTimeoutMs = 5000

// SQLite primary result codes fledger reacts to.
const (
	codeCorrupt = 11 // SQLITE_CORRUPT
	codeNotADB  = 26 // SQLITE_NOTADB
	codeBusy    = 5  // SQLITE_BUSY
)

// Open opens (creating it when missing) the SQLite database at path with
// journal_mode=WAL, synchronous=NORMAL, busy_timeout=[BusyTimeoutMs] and
// BEGIN IMMEDIATE transactions, limited to one open connection (SQLite has
// one writer; one connection keeps prepared statements and the page cache
// warm). It pings the database so that a file that is not a database fails
// here: such errors satisfy [IsCorrupt].
func Open(ctx context.Context, path string) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeoutMs))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	// Switching a new file to WAL answers SQLITE_BUSY at once, without
	// the busy timeout, while another process does the same: wait and
	// try again, up to the busy timeout.
	deadline := time.Now().Add(BusyTimeoutMs * time.Millisecond)
	for {
		err := db.PingContext(ctx)
		if err == nil {
			return db, nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			_ = db.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			_ = db.Close()
			return nil, fmt.Errorf("%w (waiting after: %w)", ctx.Err(), err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == codeBusy
}

// OpenReadOnly opens the existing database at path read-only and
// query-only: nothing is created (SQLite refuses a missing file) or
// written. A statement waits at most busyMs for another writer's lock.
func OpenReadOnly(ctx context.Context, path string, busyMs int) (*sql.DB, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyMs))
	q.Add("_pragma", "query_only(1)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// IsCorrupt reports whether err is SQLite's "database disk image is
// malformed" (SQLITE_CORRUPT) or "file is not a database" (SQLITE_NOTADB).
func IsCorrupt(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == codeCorrupt || c == codeNotADB
	}
	return false
}

// Header is the 16 bytes every SQLite database file starts with.
const Header = "SQLite format 3\x00"

// HasHeader reports whether the file at path starts with [Header] (false
// for a shorter file).
func HasHeader(path string) (bool, error) {
	isSQLite, _, err := Format(path)
	return isSQLite, err
}

// Format reads the header of the file at path: whether it starts with
// [Header] and, if so, whether the database is in WAL mode (its file
// format version bytes, offsets 18 and 19, are 2), as every database
// [Open] opened is. A file shorter than the header is not SQLite.
func Format(path string) (isSQLite, wal bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	b := make([]byte, 20)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, false, err
	}
	if n < len(Header) || string(b[:len(Header)]) != Header {
		return false, false, nil
	}
	return true, n == len(b) && b[18] == 2 && b[19] == 2, nil
}

// Remove deletes the database at path with its WAL and shared-memory
// files. Missing files are not an error.
func Remove(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
