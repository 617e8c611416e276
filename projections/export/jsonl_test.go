package export

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files under fixtures/golden")

// goldenScenarios are the fixture scenarios whose JSONL export is kept
// under fixtures/golden/<name>.jsonl.
var goldenScenarios = []string{"incident-day", "chain-overload", "rate-limit-storm", "anthropic-overload"}

// The JSONL export of a fixture scenario is byte-identical to its golden
// file: one model_fallback_decision record per line, OpenClaw's names,
// fixed field order, seq/time/agent/turnId set. Run with -update to
// rewrite them after an intended change.
func TestJSONL_Golden(t *testing.T) {
	for _, name := range goldenScenarios {
		t.Run(name, func(t *testing.T) { testGolden(t, name) })
	}
}

func testGolden(t *testing.T, name string) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runScenario(t, ctx, st, name, "golden")
	got := exportAll(t, ctx, st)
	path := filepath.Join("..", "..", "fixtures", "golden", name+".jsonl")
	if *update {
		testutil.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	testutil.NoError(t, err)
	if !bytes.Equal(got, want) {
		gl, wl := lines(got), lines(want)
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("line %d differs from %s (run with -update if intended)\n got: %s\nwant: %s", i+1, path, g, w)
			}
		}
	}
	// Every line is a model_fallback_decision with the reference §8 names.
	for i, l := range lines(got) {
		var m map[string]any
		testutil.NoError(t, json.Unmarshal([]byte(l), &m))
		if m["event"] != EventName || m["turnId"] == "" || m["time"] == nil || m["seq"] == nil || m["agent"] != "golden" {
			t.Fatalf("line %d lacks event/turnId/time/seq/agent: %s", i+1, l)
		}
		tags, _ := m["tags"].([]any)
		if len(tags) != 3 || tags[0] != "error_handling" || tags[1] != "model_fallback" || tags[2] != m["decision"] {
			t.Fatalf("line %d tags %v", i+1, tags)
		}
	}
	if name != "incident-day" {
		return
	}
	for _, name := range []string{`"fallbackStepFromModel"`, `"fallbackStepToModel"`, `"fallbackStepFromFailureReason"`,
		`"fallbackStepFromFailureDetail"`, `"fallbackStepChainPosition"`, `"fallbackStepFinalOutcome"`, `"requestedProvider"`, `"candidateModel"`} {
		if !bytes.Contains(got, []byte(name)) {
			t.Errorf("export has no %s field", name)
		}
	}
}

// The field order is the struct's: event, tags, seq, idx, time, agent,
// then the FallbackStepped fields starting with turnId.
func TestRecord_FieldOrderIsFixed(t *testing.T) {
	ev := events.New("main", "t1", t0(), events.FallbackStepped{TurnID: "t1", Decision: "candidate_failed"})
	ev.Seq, ev.Index = 7, 2
	r, ok := FromEvent(ev)
	if !ok {
		t.Fatal("FallbackStepped not mapped")
	}
	b, err := json.Marshal(r)
	testutil.NoError(t, err)
	if !strings.HasPrefix(string(b), `{"event":"model_fallback_decision","tags":["error_handling","model_fallback","candidate_failed"],"seq":7,"idx":2,"time":"2026-03-02T09:00:00.250Z","agent":"main","turnId":"t1","decision":"candidate_failed",`) {
		t.Fatalf("record JSON %s", b)
	}
	if _, ok := FromEvent(events.New("main", "t1", t0(), events.TurnSucceeded{TurnID: "t1"})); ok {
		t.Fatal("TurnSucceeded mapped to a record")
	}
}

// Previews are redacted again on the way out, without touching the event.
func TestRecord_PreviewsRedactedDefensively(t *testing.T) {
	secret := "bad key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
	fs := events.FallbackStepped{TurnID: "t1", Decision: "candidate_failed", ErrorPreview: secret,
		FallbackStepFromDetail: secret, ConsoleMessage: secret,
		PreviousAttempts: []events.PreviousAttempt{{Provider: "openai", Model: "gpt-5", ErrorPreview: secret}}}
	ev := events.New("main", "t1", t0(), fs)
	r, _ := FromEvent(ev)
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "sk-proj-") {
		t.Fatalf("secret left in %s", b)
	}
	if ev.Data.(events.FallbackStepped).PreviousAttempts[0].ErrorPreview != secret {
		t.Fatal("FromEvent modified the event")
	}
}

// --since SEQ exports the commits from SEQ on, and nothing before.
func TestRange_SinceSkipsEarlierCommits(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	all := lines(exportAll(t, ctx, st))
	if len(all) < 4 {
		t.Fatalf("only %d records", len(all))
	}
	from := seqOf(t, all[len(all)/2])
	var buf bytes.Buffer
	sink := NewJSONL(&buf)
	_, err := Range(ctx, st, from, sink, 0)
	testutil.NoError(t, err)
	var want []string
	for _, l := range all {
		if seqOf(t, l) >= from {
			want = append(want, l)
		}
	}
	if got := lines(buf.Bytes()); !reflect.DeepEqual(got, want) {
		t.Fatalf("since %d: got %d lines, want %d", from, len(got), len(want))
	}
}

// A file sink resumes after its last complete line: a partial line left by
// a crash is cut off, and records already in the file are not written
// again when the stream offers them once more.
func TestJSONLFile_ResumesAfterLastCompleteLine(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	all := lines(exportAll(t, ctx, st))
	k := len(all) / 2
	path := filepath.Join(t.TempDir(), "out.jsonl")
	// First k lines, then half of the next one (a crash mid-write).
	partial := strings.Join(all[:k], "\n") + "\n" + all[k][:len(all[k])/2]
	testutil.NoError(t, os.WriteFile(path, []byte(partial), 0o644))
	sink, err := OpenJSONLFile(path)
	testutil.NoError(t, err)
	if seq, _ := sink.Resume(); seq != seqOf(t, all[k-1]) {
		t.Fatalf("resume seq %d, want %d", seq, seqOf(t, all[k-1]))
	}
	_, err = Range(ctx, st, 0, sink, 2)
	testutil.NoError(t, err)
	testutil.NoError(t, sink.Close())
	got, err := os.ReadFile(path)
	testutil.NoError(t, err)
	if !reflect.DeepEqual(lines(got), all) {
		t.Fatalf("resumed file has %d lines, want %d:\n%s", len(lines(got)), len(all), got)
	}
}
