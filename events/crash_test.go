package events_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// crashChildEnv names the data directory a re-executed test binary appends
// to until it is killed.
const crashChildEnv = "FLEDGER_CRASH_CHILD_DIR"

// TestCrash_KilledProcessKeepsEveryAcknowledgedAppend runs a child process
// that appends and reports each acknowledged sequence, kills it with
// SIGKILL mid-stream, and checks that reopening the directory finds every
// acknowledged commit (and that the killed process left no stale lock).
func TestCrash_KilledProcessKeepsEveryAcknowledgedAppend(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrash_KilledProcessKeepsEveryAcknowledgedAppend$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	testutil.NoError(t, err)
	testutil.NoError(t, cmd.Start())
	acked := map[uint64]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(acked) < 50 {
		if seq, err := strconv.ParseUint(sc.Text(), 10, 64); err == nil {
			acked[seq] = true
		}
	}
	testutil.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	if len(acked) < 50 {
		t.Fatalf("child acknowledged only %d appends", len(acked))
	}

	s, err := events.Open(testutil.Context(t), events.WithDataDir(dir))
	testutil.NoError(t, err)
	defer s.Close()
	got, _, err := s.ReadSubject(testutil.Context(t), profileSubj)
	testutil.NoError(t, err)
	stored := map[uint64]bool{}
	for _, ev := range got {
		stored[ev.Seq] = true
	}
	for seq := range acked {
		if !stored[seq] {
			t.Fatalf("acknowledged commit %d is missing after the crash (%d stored)", seq, len(stored))
		}
	}
}

func crashChild(dir string) {
	ctx := context.Background()
	s, err := events.Open(ctx, events.WithDataDir(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var last uint64
	for i := 0; ; i++ {
		res, err := s.Append(ctx, profileSubj, last, failure(fmt.Sprintf("turn-%d", i), 1)...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		last = res.Seq
		fmt.Println(res.Seq)
	}
}

// lockChildEnv names the data directory a re-executed test binary holds
// open until its stdin closes.
const lockChildEnv = "FLEDGER_LOCK_CHILD_DIR"

// TestOpen_SecondProcessOnSameDirGetsAClearError opens a data directory
// in a child process and checks that this process is refused with
// ErrLocked, then succeeds once the child has exited.
func TestOpen_SecondProcessOnSameDirGetsAClearError(t *testing.T) {
	if dir := os.Getenv(lockChildEnv); dir != "" {
		s, err := events.Open(context.Background(), events.WithDataDir(dir))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("ready")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		_ = s.Close()
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpen_SecondProcessOnSameDirGetsAClearError$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	testutil.NoError(t, err)
	out, err := cmd.StdoutPipe()
	testutil.NoError(t, err)
	testutil.NoError(t, cmd.Start())
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("child said %q", line)
	}
	_, err = events.Open(testutil.Context(t), events.WithDataDir(dir))
	testutil.ErrorIs(t, err, events.ErrLocked)
	t.Logf("second process error: %v", err)
	_ = stdin.Close()
	testutil.NoError(t, cmd.Wait())
	s, err := events.Open(testutil.Context(t), events.WithDataDir(dir))
	testutil.NoError(t, err)
	_ = s.Close()
}
