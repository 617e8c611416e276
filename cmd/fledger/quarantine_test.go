package main

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/fledger/fledger/projections"
)

// runFledger2 runs the CLI in-process with stdout and stderr apart.
func runFledger2(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// publishStray publishes body on subject through a plain NATS client of
// the embedded server of data (as `nats pub` would) and returns its
// stream sequence.
func publishStray(t *testing.T, data, subject string, body []byte) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := events.Open(ctx, events.WithDataDir(data), events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return publishOn(t, natstest.DialWriter(t, st), subject, body)
}

func publishOn(t *testing.T, nc *nats.Conn, subject string, body []byte) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, subject, body)
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// lines splits command output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// containsAll reports the first line of want missing from got.
func containsAll(got, want string) (string, bool) {
	have := map[string]bool{}
	for _, l := range lines(got) {
		have[l] = true
	}
	for _, l := range lines(want) {
		if !have[l] {
			return l, false
		}
	}
	return "", true
}

// One stray message (not a fledger commit) published into the stream
// makes no read command fail: each names its sequence, exits 0 and still
// shows every real row, before and after it.
func TestQuarantine_StrayMessageIsSkippedByEveryReader(t *testing.T) {
	scen := func(name string) string { return filepath.Join("..", "..", "fixtures", "scenarios", name) }
	for _, tc := range []struct{ name, body, reason string }{
		{"text", "hello", "body: want valid JSON, found invalid character 'h' looking for beginning of value at byte 1 of 5: hello"},
		{"json without events", `{"x":1}`, "events: want a JSON array of one or more event envelopes, found no events field"},
		{"unknown type", `{"events":[{"id":"x","type":"Martian","schema_version":1,"payload":{}}]}`, `"Martian"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if out, err := runFledger(t, "--data", data, "run", scen("rate-limit-storm.yaml")); err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			now := "2026-03-02T15:00:00Z"
			reads := [][]string{
				{"turns", "--json"}, {"stats", "--json", "--now", now}, {"sessions", "--json"}, {"decisions", "--json"},
			}
			before := map[string]string{}
			for _, r := range reads {
				out, _, err := runFledger2(t, append([]string{"--data", data}, r...)...)
				if err != nil || out == "" {
					t.Fatalf("%v before: %v\n%s", r, err, out)
				}
				before[r[0]] = out
			}
			exportBefore, _, err := runFledger2(t, "--data", data, "export")
			if err != nil {
				t.Fatal(err)
			}

			seq := publishStray(t, data, "fledger.main.turn.oops", []byte(tc.body))
			// More decisions after it, in another namespace: the engine's
			// fold skips the stray message too.
			if out, err := runFledger(t, "--data", data, "run", scen("anthropic-overload.yaml")); err != nil {
				t.Fatalf("run after the stray message: %v\n%s", err, out)
			}
			named := fmt.Sprintf("seq %d (subject fledger.main.turn.oops, %d bytes)", seq, len(tc.body))

			for _, r := range reads {
				out, errOut, err := runFledger2(t, append([]string{"--data", data}, r...)...)
				if err != nil {
					t.Fatalf("%v: %v\n%s", r, err, errOut)
				}
				if !strings.Contains(errOut, "warning") || !strings.Contains(errOut, named) || !strings.Contains(errOut, tc.reason) {
					t.Fatalf("%v: stderr does not name %q (%s):\n%s", r, named, tc.reason, errOut)
				}
				if l, ok := containsAll(out, before[r[0]]); !ok {
					t.Fatalf("%v: row %s is gone after the stray message", r, l)
				}
				if r[0] != "stats" && len(lines(out)) <= len(lines(before[r[0]])) {
					t.Fatalf("%v: no rows of the commits after the stray message:\n%s", r, out)
				}
			}
			// The table of a projection command too, and a rebuild names
			// it the same way.
			if _, errOut, err := runFledger2(t, "--data", data, "turns", "--rebuild"); err != nil || !strings.Contains(errOut, named) {
				t.Fatalf("turns --rebuild: %v\n%s", err, errOut)
			}

			out, errOut, err := runFledger2(t, "--data", data, "events")
			if err != nil || !strings.Contains(out, fmt.Sprintf("%d ", seq)) || !strings.Contains(out, "QUARANTINED") || !strings.Contains(errOut, named) {
				t.Fatalf("events: %v\n%s\n%s", err, out, errOut)
			}
			out, _, err = runFledger2(t, "--data", data, "events", "--json")
			want := fmt.Sprintf(`{"seq":%d,"subject":"fledger.main.turn.oops","size":%d,"quarantined":true,"reason":`, seq, len(tc.body))
			if err != nil || !strings.Contains(out, want) {
				t.Fatalf("events --json lacks %s: %v\n%s", want, err, out)
			}

			out, errOut, err = runFledger2(t, "--data", data, "export")
			if err != nil || !strings.Contains(errOut, named) {
				t.Fatalf("export: %v\n%s", err, errOut)
			}
			if l, ok := containsAll(out, exportBefore); !ok || len(lines(out)) <= len(lines(exportBefore)) {
				t.Fatalf("export: record %s gone, or none after the stray message (%d lines)", l, len(lines(out)))
			}
			// --follow --out: exactly once, past the stray message.
			file := filepath.Join(t.TempDir(), "d.jsonl")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			root := newRootCmd()
			var fo bytes.Buffer
			root.SetOut(&fo)
			root.SetErr(&fo)
			root.SetArgs([]string{"--data", data, "export", "--follow", "--out", file})
			_ = root.ExecuteContext(ctx)
			cancel()
			got, _ := os.ReadFile(file)
			if string(got) != out || !strings.Contains(fo.String(), named) {
				t.Fatalf("export --follow --out wrote %d lines, export %d:\n%s", len(lines(string(got))), len(lines(out)), fo.String())
			}

			out, _, err = runFledger2(t, "--data", data, "replay", "--verify")
			line := fmt.Sprintf("quarantined: %s: not a fledger commit: ", named)
			if err != nil || !strings.Contains(out, line) || !strings.Contains(out, tc.reason) || !strings.Contains(out, "every recorded decision follows from its inputs") {
				t.Fatalf("replay --verify: %v\n%s", err, out)
			}
			var ee *exitError
			if _, _, err := runFledger2(t, "--data", data, "replay", "--verify", "--strict"); !errors.As(err, &ee) || ee.code != 1 {
				t.Fatalf("replay --verify --strict: %v, want exit 1", err)
			}
		})
	}
}

// The bar: an undecodable message published into the stream of an
// external NATS server; stats and turns still exit 0 with every real
// turn, and the sequence of the bad message is named.
func TestQuarantine_ExternalServerStrayMessage(t *testing.T) {
	url := natsServer(t)
	data := t.TempDir()
	if out, err := runFledger(t, "--data", data, "--nats", url, "run", filepath.Join("..", "..", "fixtures", "scenarios", "rate-limit-storm.yaml")); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	turnsBefore, _, err := runFledger2(t, "--data", data, "--nats", url, "turns", "--json")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	seq := publishOn(t, nc, "fledger.main.turn.oops", []byte("hello"))

	for _, r := range [][]string{{"turns", "--json"}, {"stats", "--json"}} {
		out, errOut, err := runFledger2(t, append([]string{"--data", data, "--nats", url}, r...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", r, err, errOut)
		}
		if !strings.Contains(errOut, fmt.Sprintf("seq %d (subject fledger.main.turn.oops, 5 bytes)", seq)) {
			t.Fatalf("%v: stderr does not name seq %d:\n%s", r, seq, errOut)
		}
		if r[0] == "turns" && (out != turnsBefore || len(lines(out)) == 0) {
			t.Fatalf("turns changed:\n%s\nwant\n%s", out, turnsBefore)
		}
	}
}

// A stray message on a config subject does not stop `config apply` (the
// engine reads the agent's configs with ReadSubject, which skips it and
// still guards the append with its sequence).
func TestQuarantine_StrayMessageOnConfigSubject(t *testing.T) {
	data := t.TempDir()
	cfg := filepath.Join("..", "..", "fixtures", "configs", "example.yaml")
	if out, err := runFledger(t, "--data", data, "config", "apply", cfg); err != nil {
		t.Fatalf("config apply: %v\n%s", err, out)
	}
	seq := publishStray(t, data, "fledger.main.config.oops", []byte("hello"))
	out, err := runFledger(t, "--data", data, "config", "apply", cfg)
	if err != nil {
		t.Fatalf("config apply after a stray message at %d: %v\n%s", seq, err, out)
	}
	if _, errOut, err := runFledger2(t, "--data", data, "replay", "--verify"); err != nil {
		t.Fatalf("verify: %v\n%s", err, errOut)
	}
}

// A ledger with thousands of stray messages does not print thousands of
// warning lines on every command: the first 20 are named, the rest
// counted.
func TestQuarantine_WarningNamesTheFirst20(t *testing.T) {
	var bad []projections.Quarantined
	for i := range 25 {
		bad = append(bad, projections.Quarantined{Seq: uint64(i + 1), LastSeq: uint64(i + 1), Kind: projections.QuarantineUndecodable,
			Subject: "fledger.main.turn.junk", Size: 2, Reason: "not JSON"})
	}
	var b bytes.Buffer
	warnQuarantined(&b, "stats", bad)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 22 || lines[0] != "fledger stats: warning: 25 stored messages are not fledger commits, quarantined and skipped:" ||
		lines[20] != "  seq 20 (subject fledger.main.turn.junk, 2 bytes): not JSON" ||
		lines[21] != "  … and 5 more (fledger events --json lists every one)" {
		t.Fatalf("warning:\n%s", b.String())
	}
}

// A range holding only messages that are not fledger commits shows them
// and says so, not "no events" alone; a range holding nothing says "no
// events".
func TestEvents_RangeOfOnlyQuarantinedMessagesSaysSo(t *testing.T) {
	data := configLedger(t)
	seq := publishStray(t, data, "fledger.main.x.stray", []byte("hello"))
	publishStray(t, data, "fledger.main.x.stray", []byte("again"))
	for _, c := range []struct {
		args      []string
		rows      int
		summary   string
		noSummary bool
	}{
		{[]string{"--from-seq", fmt.Sprint(seq), "--to-seq", fmt.Sprint(seq)}, 1, "no events, only 1 stored message that is not a fledger commit (shown above)", false},
		{[]string{"--from-seq", fmt.Sprint(seq)}, 2, "no events, only 2 stored messages that are not fledger commits (shown above)", false},
		{[]string{"--from-seq", fmt.Sprint(seq + 2)}, 0, "no events", false},
		{[]string{"--type", "AttemptFailed"}, 2, "no events, only 2 stored messages that are not fledger commits (shown above)", false},
		{[]string{"--from-seq", "1"}, 3, "", true},
	} {
		out, errOut, err := runFledger2(t, append([]string{"--data", data, "events"}, c.args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, errOut)
		}
		if got := len(lines(out)) - 1; got != c.rows {
			t.Fatalf("%v: %d rows, want %d:\n%s", c.args, got, c.rows, out)
		}
		first := ""
		if l := lines(errOut); len(l) > 0 {
			first = l[0]
		}
		if c.noSummary && strings.HasPrefix(first, "no events") || !c.noSummary && first != c.summary {
			t.Fatalf("%v: stderr starts %q, want %q\n%s", c.args, first, c.summary, errOut)
		}
	}
}

// A stray message's own text — its subject, the type it names — reaches
// the warning escaped: one line per message, no raw escape or line break
// an operator's terminal would act on.
func TestQuarantine_WarningEscapesTheMessagesText(t *testing.T) {
	data := twoAgentLedger(t)
	body := []byte(`{"events":[{"id":"x","type":"Mar\u001b[2Jtian\nFAKE","schema_version":1,"at":"2026-03-02T09:00:00Z","agent":"alpha","aggregate":"turn","key":"t","payload":{}}]}`)
	seq := publishStray(t, data, "fledger.alpha.turn.o\x1b[2Jops", body)
	_, stderr, err := runFledger2(t, "--data", data, "stats")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`  seq %d (subject fledger.alpha.turn.o\x1b[2Jops, %d bytes): event 0 type Mar\x1b[2Jtian\nFAKE version 1: events[0].type: want one of the `, seq, len(body))
	if !strings.Contains(stderr, want) || strings.ContainsAny(stderr, "\x1b") || strings.Count(stderr, "\n") != 2 {
		t.Fatalf("stderr %q\nwant it to hold %q on one line, no raw ESC", stderr, want)
	}
}
