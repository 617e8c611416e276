package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections/export"
)

// exportFollow is `fledger <global> export --follow --out file <args>`
// running in-process; stop ends it once its stderr holds at least
// stderrLines lines (within 20 s) and returns its stderr and error.
func exportFollow(t *testing.T, global []string, file string, args ...string) (stop func(stderrLines int) (string, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	root := newRootCmd()
	var errOut testutil.Buffer
	root.SetOut(&errOut)
	root.SetErr(&errOut)
	root.SetArgs(append(append(append([]string{}, global...), "export", "--follow", "--out", file), args...))
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	return func(stderrLines int) (string, error) {
		for deadline := time.Now().Add(20 * time.Second); len(lines(errOut.String())) < stderrLines && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		err := <-done
		return errOut.String(), err
	}
}

// jsOn is a JetStream client of url, closed when t ends.
func jsOn(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	return natstest.JetStream(t, url)
}

// caughtUp waits until consumer on url's ledger has acknowledged the
// stream's last sequence and file holds want.
func caughtUp(t *testing.T, url, consumer, file, want string) {
	t.Helper()
	js := jsOn(t, url)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var acked, last uint64
		si, err := js.Stream(ctx, events.StreamName)
		if err == nil {
			last = si.CachedInfo().State.LastSeq
			var c jetstream.Consumer
			if c, err = si.Consumer(ctx, consumer); err == nil {
				acked = c.CachedInfo().AckFloor.Stream
			}
		}
		cancel()
		got, _ := os.ReadFile(file)
		if err == nil && acked == last && string(got) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer %s acknowledged %d of %d (%v); %s holds %d of %d lines", consumer, acked, last, err, file, len(lines(string(got))), len(lines(want)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noPullWaiting waits (at most 10 s) until no consumer of url's ledger
// has a pull request waiting: the server drops a stopped reader's
// requests with its connection, but not at once on a loaded machine, and
// until then a new reader of that consumer is refused as another one at
// work (events.ErrCursorInUse) — as it should be while a reader lives.
func noPullWaiting(t *testing.T, url string) {
	t.Helper()
	js := jsOn(t, url)
	testutil.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, events.StreamName)
		if err != nil {
			return err
		}
		for ci := range s.ListConsumers(ctx).Info() {
			if ci.NumWaiting > 0 {
				return fmt.Errorf("consumer %s: %d pull requests waiting", ci.Name, ci.NumWaiting)
			}
		}
		return nil
	})
}

// lastSeqOn is the last sequence of url's ledger.
func lastSeqOn(t *testing.T, url string) uint64 {
	t.Helper()
	s, err := jsOn(t, url).Stream(context.Background(), events.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State.LastSeq
}

// `export --follow --out FILE`: the file decides where the export
// resumes, whatever the durable consumer's position. Run 1 writes a; run
// 2 on the same consumer (--consumer shared) writes a new file b whole,
// saying it moved the consumer; after more commits run 3 resumes b with
// exactly what follows; run 4 with --from-seq on a file that holds
// records says the flag does not apply. Each file ends as the one-shot
// export.
func TestExportFollow_FileDecidesWhereItResumes(t *testing.T) {
	url, global := ledgerOnServer(t)
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	none := func(uint64, uint64) string { return "" }
	for _, tc := range []struct {
		name, file, scenario string
		args                 []string
		// stderr is the command's whole stderr, given the stream's end
		// and the seq of the last record.
		stderr func(end, last uint64) string
	}{
		{name: "run 1 to a", file: "a.jsonl", stderr: none},
		{name: "run 2 to a new file b", file: "b.jsonl", stderr: func(end, _ uint64) string {
			return fmt.Sprintf("fledger export: consumer shared had acknowledged up to seq %d (0 unacknowledged), not where %s resumes: moved it to seq 1\n", end, path("b.jsonl"))
		}},
		{name: "run 3 resumes b after more commits", file: "b.jsonl", scenario: "anthropic-overload.yaml", stderr: none},
		{name: "run 4: --from-seq on a file with records", file: "b.jsonl", args: []string{"--from-seq", "5"}, stderr: func(_, last uint64) string {
			return fmt.Sprintf("fledger export: note: %s holds records up to seq %d: the export resumes after them (--from-seq and --since are for an empty or new file)\n", path("b.jsonl"), last)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.scenario != "" {
				if out, err := runFledger(t, append(global, "run", filepath.Join("..", "..", "fixtures", "scenarios", tc.scenario))...); err != nil {
					t.Fatalf("run: %v\n%s", err, out)
				}
			}
			end := lastSeqOn(t, url)
			want, _, err := runFledger2(t, append(global, "export")...)
			if err != nil || want == "" {
				t.Fatalf("export: %v", err)
			}
			ls := lines(want)
			var last struct{ Seq uint64 }
			if err := json.Unmarshal([]byte(ls[len(ls)-1]), &last); err != nil {
				t.Fatal(err)
			}
			noPullWaiting(t, url) // the run before has stopped
			stop := exportFollow(t, global, path(tc.file), append([]string{"--consumer", "shared"}, tc.args...)...)
			caughtUp(t, url, "shared", path(tc.file), want)
			w := tc.stderr(end, last.Seq)
			stderr, err := stop(len(lines(w)))
			if err != nil || stderr != w {
				t.Fatalf("export --follow: %v, stderr:\n%s\nwant:\n%s", err, stderr, w)
			}
		})
	}
}

// While an export follows into a.jsonl, a second one is refused at once
// with an error naming what it needs and what to do: into b.jsonl on the
// same --consumer (the consumer in use), or into a.jsonl itself (the
// file's lock, naming the holder). Into b.jsonl with the default
// consumer it runs alongside: each file has its own. The running one
// goes on.
func TestExportFollow_ConsumerInUseIsRefused(t *testing.T) {
	url, global := ledgerOnServer(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	want, _, err := runFledger2(t, append(global, "export")...)
	if err != nil {
		t.Fatal(err)
	}
	stop := exportFollow(t, global, a, "--consumer", "shared")
	caughtUp(t, url, "shared", a, want)
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"another file, same consumer", []string{"--out", b, "--consumer", "shared"},
			"export: --out " + b + ": consumer shared is in use by another exporter; the file decides where its export resumes, so it needs the consumer to itself: stop the other exporter, or give this file its own consumer (without --consumer each file has one) (export: follow: events: cursor shared: events: cursor in use by another reader (pull requests waiting on it: 1))"},
		{"the same file", []string{"--out", a},
			fmt.Sprintf("export: %s is being written by another exporter (pid %d): locked by another process; a file has one writer, so stop that one or write another file", a, os.Getpid())},
		{"the same file, one-shot", []string{"--out", a, "--consumer", "other"},
			fmt.Sprintf("export: %s is being written by another exporter (pid %d): locked by another process; a file has one writer, so stop that one or write another file", a, os.Getpid())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, global...), "export")
			if !strings.Contains(tc.name, "one-shot") {
				args = append(args, "--follow")
			}
			_, _, err := runFledger2(t, append(args, tc.args...)...)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("second export: %v\nwant %s", err, tc.wantErr)
			}
			if tc.args[1] == b {
				// The refused export created b: it leaves no empty file.
				if _, err := os.Stat(b); !os.IsNotExist(err) {
					t.Fatalf("the refused export left %s (%v)", b, err)
				}
			}
		})
	}
	consumerB, err := export.FileConsumer(b)
	if err != nil {
		t.Fatal(err)
	}
	stopB := exportFollow(t, global, b)
	caughtUp(t, url, consumerB, b, want)
	if stderr, err := stopB(0); err != nil || stderr != "" {
		t.Fatalf("export to b alongside: %v\n%s", err, stderr)
	}
	if stderr, err := stop(0); err != nil || stderr != "" {
		t.Fatalf("running export: %v\n%s", err, stderr)
	}
}

// `export --follow` over many stray messages names the first 5 one by
// one, says the rest are summed up, and sums them up (count, first and
// last sequence) when it ends, instead of a warning per message.
func TestExportFollow_QuarantineWarningsAreSummedUp(t *testing.T) {
	url, global := ledgerOnServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var seqs []uint64
	for range 8 {
		seqs = append(seqs, publishOn(t, nc, "fledger.main.turn.oops", []byte("hello")))
	}
	want, _, err := runFledger2(t, append(global, "export")...)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "d.jsonl")
	consumer, err := export.FileConsumer(file)
	if err != nil {
		t.Fatal(err)
	}
	stop := exportFollow(t, global, file)
	caughtUp(t, url, consumer, file, want)
	stderr, err := stop(6) // the summary comes when it ends
	var w strings.Builder
	for _, s := range seqs[:5] {
		fmt.Fprintf(&w, "fledger export: warning: seq %d (subject fledger.main.turn.oops, 5 bytes) is not a fledger commit, quarantined and skipped: body: want valid JSON, found invalid character 'h' looking for beginning of value at byte 1 of 5: hello\n", s)
	}
	w.WriteString("fledger export: warning: further messages that are not fledger commits are counted and summed up every 1m0s (fledger events --json lists every one)\n")
	fmt.Fprintf(&w, "fledger export: warning: 3 more stored messages are not fledger commits, quarantined and skipped: seq %d to %d\n", seqs[5], seqs[7])
	if err != nil || stderr != w.String() {
		t.Fatalf("export --follow: %v, stderr:\n%s\nwant:\n%s", err, stderr, w.String())
	}
}
