package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `events --follow` on a stream created with --first-seq (a fresh stream
// after a rotation) starts at the stream's first sequence, as the one-shot
// `events` does: the same lines, no MISSING line and no warning for the
// archived sequences before it.
func TestEventsFollow_FirstSeqStreamHasNoGap(t *testing.T) {
	data := t.TempDir()
	cfg := filepath.Join("..", "..", "fixtures", "configs", "example.yaml")
	mustRun(t, "--data", data, "--first-seq", "275", "config", "apply", cfg)
	once, errOnce, err := runFledger2(t, "--data", data, "events")
	if err != nil || errOnce != "" {
		t.Fatalf("events: %v\n%s", err, errOnce)
	}
	want := lines(once)
	if len(want) < 2 || !strings.HasPrefix(want[1], "275 ") {
		t.Fatalf("events:\n%s\nwant a header and the config at seq 275", once)
	}

	root := newRootCmd()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var errOut bytes.Buffer
	root.SetOut(pw)
	root.SetErr(&errOut)
	root.SetArgs([]string{"--data", data, "events", "--follow"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()
	timer := time.AfterFunc(30*time.Second, cancel)
	defer timer.Stop()
	sc := bufio.NewScanner(pr)
	var got []string
	for len(got) < len(want) && sc.Scan() {
		got = append(got, sc.Text())
	}
	cancel()
	for sc.Scan() { // drain until the command closes its output
		got = append(got, sc.Text())
	}
	if err := <-done; err != nil {
		t.Fatalf("events --follow: %v", err)
	}
	// The same cells (a follower pads its columns to widths of its own,
	// aligned from its first row: the header's AGENT and the row's agent
	// start at one column).
	fields := func(ls []string) string {
		var out []string
		for _, l := range ls {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
		return strings.Join(out, "\n")
	}
	if fields(got) != fields(want) || errOut.String() != "" {
		t.Fatalf("events --follow:\n%s\nstderr %q\nwant the cells of\n%s\nand nothing on stderr", strings.Join(got, "\n"), errOut.String(), once)
	}
	if len(got) < 2 || strings.Index(got[0], "AGENT") != strings.Index(got[1], " main ")+1 {
		t.Fatalf("events --follow columns not aligned:\n%s", strings.Join(got, "\n"))
	}
}
