package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/interrupt"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
)

// The test binary is fledger itself when asCLIEnv is set: TestMain runs
// main with the arguments after the binary's name, so a test can start
// the real command in a process of its own and send it real signals.
// With signalFirstEnv set too, the process sends itself SIGINT before
// main starts: a Ctrl-C while the binary is still initialising.
const (
	asCLIEnv       = "FLEDGER_TEST_AS_CLI"
	signalFirstEnv = "FLEDGER_TEST_SIGNAL_FIRST"
	// readyEnv names a file TestMain creates, as the CLI, once every
	// package init ran (waitCatchesInterrupt).
	readyEnv = "FLEDGER_TEST_READY"
)

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) != "" {
		if f := os.Getenv(readyEnv); f != "" {
			_ = os.WriteFile(f, nil, 0o600)
		}
		if os.Getenv(signalFirstEnv) != "" {
			_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		}
		main()
		return
	}
	// The test binary imports internal/interrupt, whose init catches the
	// signals for main: as tests, Ctrl-C ends them as it ends any test run.
	signal.Reset(interrupt.Signals...)
	os.Exit(m.Run())
}

// exitBound is how long a command may take to end after one SIGINT:
// generous for a loaded machine (it takes 0.1 to 0.3 s), shorter than an
// OTLP request's timeout; a command that misses the signal waits for a
// second one for ever.
const exitBound = 5 * time.Second

// natsServer starts a JetStream server for the test on a loopback port and
// returns its URL.
func natsServer(t *testing.T) string {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

// ledgerOnServer starts a JetStream server (natsServer), plays
// rate-limit-storm into it and returns its URL and the global flags that
// name it.
func ledgerOnServer(t *testing.T) (url string, global []string) {
	t.Helper()
	url = natsServer(t)
	global = []string{"--data", t.TempDir(), "--nats", url}
	if out, err := runFledger(t, append(global, "run", filepath.Join("..", "..", "fixtures", "scenarios", "rate-limit-storm.yaml"))...); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	return url, global
}

// cliProcess is `fledger <args>` running in a process of its own.
type cliProcess struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	exited chan struct{} // closed when the process ended, err set
	err    error
	ready  string // the readyEnv file
}

// startCLI starts `fledger <args>` (the test binary as fledger, see
// TestMain) with stdout to the file stdout; env adds to the environment.
func startCLI(t *testing.T, stdout string, env []string, args ...string) *cliProcess {
	t.Helper()
	out, err := os.Create(stdout)
	if err != nil {
		t.Fatal(err)
	}
	p := &cliProcess{cmd: exec.Command(os.Args[0], args...), exited: make(chan struct{}), ready: filepath.Join(t.TempDir(), "ready")}
	p.cmd.Env = append(append(os.Environ(), asCLIEnv+"=1", readyEnv+"="+p.ready), env...)
	p.cmd.Stdout, p.cmd.Stderr = out, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); out.Close(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// waitServing waits (at most 30 s) for the start-up line of a serve or
// view process and returns the HTTP URL it names; it fails the test when
// the process ends first.
func (p *cliProcess) waitServing(t *testing.T) string {
	t.Helper()
	var base string
	testutil.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		select {
		case <-p.exited:
			t.Fatalf("ended (%v) before serving: %s", p.err, p.stderr.String())
		default:
		}
		m := servingLine.FindStringSubmatch(p.stderr.String())
		if m == nil {
			return errors.New("not serving yet")
		}
		base = m[1]
		return nil
	})
	return base
}

// servingLine finds the URL in serve's and view's start-up line.
var servingLine = regexp.MustCompile(`http=(http://127\.0\.0\.1:\d+)`)

// interrupt sends one SIGINT and wants the process to end with status 0
// within exitBound.
func (p *cliProcess) interrupt(t *testing.T) {
	t.Helper()
	p.waitCatchesInterrupt(t)
	sent := time.Now()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	p.wantExit0(t)
	t.Logf("exited %v after the signal", time.Since(sent).Round(time.Millisecond))
}

// waitCatchesInterrupt waits (at most exitBound) until the process has
// run every package init — internal/interrupt's catches the signals —
// which TestMain marks with the readyEnv file: a signal sent while the
// process is still being exec'd and initialised kills it, which a test
// that has nothing else to wait for (a restarted export whose file is
// already complete) would take for the command's fault.
func (p *cliProcess) waitCatchesInterrupt(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(exitBound)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return
		default:
		}
		if _, err := os.Stat(p.ready); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wantExit0 wants the process to end with status 0 within exitBound.
func (p *cliProcess) wantExit0(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		if p.err != nil {
			t.Fatalf("%v after one SIGINT, want exit status 0; stderr:\n%s", p.err, p.stderr.String())
		}
	case <-time.After(exitBound):
		t.Fatalf("still running %v after one SIGINT", exitBound)
	}
}

// fileLines returns the lines of path ("" when it does not exist).
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return lines(string(b))
}

// waitFileLines waits until path holds at least n lines.
func waitFileLines(t *testing.T, p *cliProcess, path string, n int) {
	t.Helper()
	waitFileLinesFor(t, p, path, n, 30*time.Second)
}

// waitFileLinesFor is waitFileLines waiting at most d.
func waitFileLinesFor(t *testing.T, p *cliProcess, path string, n int, d time.Duration) {
	t.Helper()
	testutil.CheckFor(t, d, 10*time.Millisecond, func() error {
		select {
		case <-p.exited:
			t.Fatalf("ended (%v) before writing %d lines: %s", p.err, n, p.stderr.String())
		default:
		}
		if got := len(fileLines(t, path)); got < n {
			return fmt.Errorf("%s: %d lines, want %d", filepath.Base(path), got, n)
		}
		return nil
	})
}

// burst appends scenario runs (each under a fresh agent, so each adds
// decision records) to the stream at url until stop is called.
func burst(t *testing.T, url string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := events.Open(ctx, events.WithURL(url))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.LoadFile(filepath.Join("..", "..", "fixtures", "scenarios", "chain-overload.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			if _, err := scenario.Run(ctx, st, sc, scenario.Options{}); err != nil && ctx.Err() == nil {
				t.Errorf("burst: %v", err)
				return
			}
		}
	})
	return func() { cancel(); wg.Wait(); st.Close() }
}

// followReader is one long-running reader command under test: its
// arguments (out is where its records go) and the lines a one-shot read
// of the whole stream gives.
type followReader struct {
	name   string
	args   func(t *testing.T, out string) []string
	stdout bool // the records go to stdout, not to --out
	all    func(t *testing.T) []string
}

// One SIGINT ends `export --follow --out FILE` and `events --follow`
// promptly with exit status 0, wherever it comes: before main starts
// (the process signals itself while initialising), while the reader is
// idle at the end of the stream, and while commits are being appended
// and written. What was written is exactly a prefix of what a one-shot
// read gives, ending at a commit (no partial or repeated record); a
// restarted export completes the file exactly once.
func TestFollow_OneSignalEndsTheReader(t *testing.T) {
	url, global := ledgerOnServer(t)
	oneShot := func(args ...string) func(t *testing.T) []string {
		return func(t *testing.T) []string {
			out, errOut, err := runFledger2(t, append(global, args...)...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", args, err, errOut)
			}
			return lines(out)
		}
	}
	readers := []followReader{
		{name: "export", args: func(t *testing.T, out string) []string {
			// A consumer per subtest: each starts at the beginning.
			consumer := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
			return append(global, "export", "--follow", "--out", out, "--consumer", consumer)
		}, all: oneShot("export")},
		{name: "events", stdout: true, args: func(*testing.T, string) []string {
			return append(global, "events", "--follow", "--json")
		}, all: oneShot("events", "--json")},
	}
	for _, r := range readers {
		start := func(t *testing.T, env ...string) (*cliProcess, string) {
			out := filepath.Join(t.TempDir(), r.name+".jsonl")
			stdout := filepath.Join(t.TempDir(), "stdout")
			if r.stdout {
				stdout = out
			}
			return startCLI(t, stdout, env, r.args(t, out)...), out
		}
		t.Run(r.name+"/before-main", func(t *testing.T) {
			p, out := start(t, signalFirstEnv+"=1")
			p.wantExit0(t)
			if got := fileLines(t, out); len(got) != 0 {
				t.Fatalf("interrupted before main, wrote %d lines", len(got))
			}
		})
		t.Run(r.name+"/idle", func(t *testing.T) {
			want := r.all(t)
			p, out := start(t)
			waitFileLines(t, p, out, len(want))
			p.interrupt(t)
			if got := fileLines(t, out); !slices.Equal(got, want) {
				t.Fatalf("wrote %d lines, want the %d of a one-shot read:\n%s", len(got), len(want), strings.Join(got, "\n"))
			}
		})
		t.Run(r.name+"/burst", func(t *testing.T) {
			before := len(r.all(t))
			p, out := start(t)
			stop := burst(t, url)
			waitFileLines(t, p, out, before+1) // the burst is being written
			p.interrupt(t)
			stop()
			got, want := fileLines(t, out), r.all(t)
			if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
				t.Fatalf("wrote %d lines, not a prefix of the %d of a one-shot read", len(got), len(want))
			}
			if r.stdout {
				return
			}
			// The file ends at an acknowledged commit: a restarted export
			// completes it, every record once.
			noPullWaiting(t, url)
			p = startCLI(t, filepath.Join(t.TempDir(), "stdout"), nil, r.args(t, out)...)
			// Deliveries the stopped export's last pull request took as
			// it ended (its connection closing) come again only once
			// their ack wait (30 s) is over.
			waitFileLinesFor(t, p, out, len(want), 45*time.Second)
			p.interrupt(t)
			if got := fileLines(t, out); !slices.Equal(got, want) {
				t.Fatalf("after the restart %d lines, want the %d of a one-shot read exactly once", len(got), len(want))
			}
		})
	}
}

// One SIGINT ends `export --follow --format otlp` promptly with exit
// status 0 while the collector holds its request unanswered: the batch is
// handed back, and the exporter's shutdown does not wait for the
// collector either.
func TestExportOTLP_OneSignalEndsWhileTheCollectorHangs(t *testing.T) {
	_, global := ledgerOnServer(t)
	var requests atomic.Int32
	release := make(chan struct{})
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		select { // no answer while the exporter runs
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer collector.Close()
	defer close(release)
	p := startCLI(t, filepath.Join(t.TempDir(), "stdout"), nil, append(global, "export", "--follow", "--format", "otlp",
		"--endpoint", collector.URL, "--consumer", "otlp-hangs")...)
	testutil.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if requests.Load() == 0 {
			return errors.New("no request reached the collector")
		}
		return nil
	})
	p.interrupt(t)
}

// A one-shot export or listing (no --follow) that a signal stops did not
// reach the end of the stream: it exits with the signal's status (130
// for SIGINT), says it was interrupted, and never passes for a whole
// read.
func TestOneShot_SignalEndsWithTheSignalsStatus(t *testing.T) {
	_, global := ledgerOnServer(t)
	for _, args := range [][]string{{"export"}, {"events"}} {
		t.Run(args[0], func(t *testing.T) {
			p := startCLI(t, filepath.Join(t.TempDir(), "stdout"), []string{signalFirstEnv + "=1"}, append(global, args...)...)
			select {
			case <-p.exited:
			case <-time.After(exitBound):
				t.Fatalf("still running %v after one SIGINT", exitBound)
			}
			var ee *exec.ExitError
			if !errors.As(p.err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("ended with %v, want exit status 130; stderr:\n%s", p.err, p.stderr.String())
			}
			if want := "fledger: interrupted: "; !strings.HasPrefix(p.stderr.String(), want) {
				t.Fatalf("stderr %q, want it to begin %q", p.stderr.String(), want)
			}
		})
	}
}
