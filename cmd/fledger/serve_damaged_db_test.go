package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// serve starts on a damaged projection database (derived data: the
// engines take turns without it): the file is moved aside, kept, and an
// empty database takes its place for the catch-up to rebuild. A file
// that is not fledger's is refused and left as it was.
func TestServe_DamagedProjectionDatabaseMovedAside(t *testing.T) {
	ctx := context.Background()
	st := testutil.Store(t, testutil.NoFsync)
	g := &globals{DataDir: t.TempDir()}
	path := filepath.Join(g.DataDir, projections.DefaultFile)
	db, err := projections.Open(ctx, path)
	testutil.NoError(t, err)
	testutil.NoError(t, db.Close())
	b, err := os.ReadFile(path)
	testutil.NoError(t, err)
	copy(b[100:], bytes.Repeat([]byte{0xA5}, 3000)) // page 1's B-tree: the schema unreadable
	testutil.NoError(t, os.WriteFile(path, b, 0o644))
	if _, err := projections.Open(ctx, path); !errors.Is(err, projections.ErrCorrupt) {
		t.Fatalf("the damaged file opened: %v", err)
	}

	var logs bytes.Buffer
	db, err = openServeProjections(ctx, g, st, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("serve's projections on a damaged database: %v", err)
	}
	testutil.NoError(t, db.Close())
	aside, _ := filepath.Glob(path + ".damaged-*Z") // not its -wal, -shm
	if len(aside) != 1 || !strings.Contains(logs.String(), "projections: the database is damaged: moved aside") || !strings.Contains(logs.String(), "damaged="+aside[0]) {
		t.Fatalf("moved aside: %v; log:\n%s", aside, logs.String())
	}
	if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, b) {
		t.Fatalf("the damaged file was not kept as it was")
	}

	// Not fledger's: refused, untouched.
	foreign := []byte("not a database at all\n")
	testutil.NoError(t, os.WriteFile(path, foreign, 0o644))
	if _, err := openServeProjections(ctx, g, st, slog.New(slog.NewTextHandler(&logs, nil))); !errors.Is(err, projections.ErrCorrupt) {
		t.Fatalf("serve on a file that is not a database: %v, want it refused", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, foreign) {
		t.Fatalf("the foreign file was changed")
	}
}
