package testutil

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/sqlitedb"
)

// holdEnv names the database the child of [HoldSQLite] opens.
const holdEnv = "FLEDGER_TEST_HOLD_SQLITE"

// HoldSQLite opens the SQLite database at path (as [sqlitedb.Open] does:
// WAL, one connection) in another process — this test binary running
// the package's TestHelperHoldSQLite, which must call
// [HelperHoldSQLite] — and keeps it open until the test ends: another
// process's live database, e.g. a running serve's. It returns once the
// child has the database open (at most 10 s).
func HoldSQLite(t testing.TB, path string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldSQLite$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	NoError(t, err)
	NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if line != "ready\n" {
			t.Fatalf("holder of %s: %q", path, line)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("holder of %s: not ready after 10 s", path)
	}
}

// HelperHoldSQLite is the child of [HoldSQLite]; call it from a test
// named TestHelperHoldSQLite. Unless started by HoldSQLite it returns at
// once; else it opens the database (creating the table "held" in it
// when missing), prints "ready", waits for its stdin
// to close and exits.
func HelperHoldSQLite() {
	path := os.Getenv(holdEnv)
	if path == "" {
		return
	}
	db, err := sqlitedb.Open(context.Background(), path)
	if err == nil {
		// A read, as a serve's first query: the connection maps the WAL
		// index (a new file becomes a WAL database with one table).
		_, err = db.Exec(`CREATE TABLE IF NOT EXISTS held (x)`)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = db.Close()
	os.Exit(0)
}
