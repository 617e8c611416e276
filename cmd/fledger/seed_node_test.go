package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

// seedsJS prints, for each JSON line on stdin, the type and value
// JSON.parse gives every seed in it, at any depth (an event's payload; an
// explanation's own seed and its steps' events): "<event type or
// explain> <field> <typeof> <String(value)>". Its last line parses a stored
// seed as the number the first release wrote, to show what a string
// avoids.
const seedsJS = `
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter(Boolean);
function walk(label, o) {
  if (o === null || typeof o !== 'object') return;
  for (const [k, x] of Object.entries(o)) {
    if (k === 'seed' || k === 'jitter_seed') console.log(label + ' ' + k + ' ' + typeof x + ' ' + String(x));
    else walk(label, x);
  }
}
for (const l of lines) {
  const v = JSON.parse(l);
  walk(v.type || 'explain', v);
}
console.log('number ' + String(JSON.parse('11029143739690574337')));
`

// storedSeed finds a seed as the earlier builds stored it: a JSON number.
var storedSeed = regexp.MustCompile(`"type":"(TurnStarted|RetryScheduled)".*?"(seed|jitter_seed)":([0-9]+)`)

// Issue 19: every seed `fledger events --json` and `fledger explain
// --json` print reads back exactly through JavaScript's JSON.parse — the
// seeds of both earlier builds' ledgers (stored as numbers, up to
// 14281745720790208972) and seeds this build writes, up to 2^64−1.
func TestSeeds_ReadExactlyByNodeJSONParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: skipping the JSON.parse check of the seeds")
	}
	data := t.TempDir()
	var want []string
	for _, name := range []string{"first-release", "pre-layout"} {
		loadLedgerInto(t, data, name)
		raw, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "ledgers", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range bytes.Split(raw, []byte(`{"id":`)) {
			if m := storedSeed.FindSubmatch(ev); m != nil {
				want = append(want, string(m[1])+" "+string(m[2])+" string "+string(m[3]))
			}
		}
	}
	st, err := events.Open(context.Background(), events.WithDataDir(data))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	for _, s := range []uint64{0, 1<<53 + 1, 1<<64 - 1} {
		id := "js-" + strconv.FormatUint(s, 10)
		ts := events.New("main", id, at, events.TurnStarted{TurnID: id, Session: "s", Chat: "direct", SelectionSource: "default", Seed: s, StartedAt: at.UnixMilli()})
		rs := events.New("main", id, at, events.RetryScheduled{TurnID: id, Attempt: 1, Retry: 1, JitterSeed: s, ResumeAt: at.UnixMilli()})
		if _, err := st.Append(context.Background(), events.MustSubject("main", events.AggTurn, id), events.AnySeq, ts, rs); err != nil {
			t.Fatal(err)
		}
		want = append(want, "TurnStarted seed string "+strconv.FormatUint(s, 10), "RetryScheduled jitter_seed string "+strconv.FormatUint(s, 10))
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := runFledger2(t, "--data", data, "events", "--json")
	if err != nil {
		t.Fatal(err)
	}
	explain, _, err := runFledger2(t, "--data", data, "explain", "js-18446744073709551615", "--json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"seed", "seed", "jitter_seed"} { // its own, its steps'
		want = append(want, "explain "+f+" string 18446744073709551615")
	}
	want = append(want, "number 11029143739690574000")

	cmd := exec.Command(node, "-e", seedsJS)
	cmd.Stdin = strings.NewReader(out + strings.ReplaceAll(explain, "\n", "") + "\n")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, got)
	}
	if len(want) < 40 {
		t.Fatalf("only %d seeds found in the fixture ledgers", len(want))
	}
	if g, w := strings.TrimSpace(string(got)), strings.Join(want, "\n"); g != w {
		t.Fatalf("JSON.parse read the seeds as\n%s\nwant\n%s", g, w)
	}
}
