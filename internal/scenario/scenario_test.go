package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
)

func fixtures(t *testing.T) []string {
	t.Helper()
	files := testutil.Scenarios(t)
	if len(files) < 8 {
		t.Fatalf("%d fixture scenarios, want at least 8", len(files))
	}
	return files
}

// Every fixture scenario runs, on one shared store (each in its own
// namespace), and meets every expectation.
func TestFixtures_RunAndCheck(t *testing.T) {
	st := testutil.Store(t)
	for _, f := range fixtures(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Description == "" || !strings.Contains(sc.Description, "RE-") {
				t.Errorf("description must say what it shows and name its RE-* vectors")
			}
			hasExpect := sc.Expect != nil
			for _, s := range sc.Script {
				hasExpect = hasExpect || (s.Turn != nil && s.Turn.Expect != nil)
			}
			if !hasExpect {
				t.Errorf("no expect block")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rep, err := Run(ctx, st, sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if ms := Check(sc, rep); len(ms) > 0 {
				var b bytes.Buffer
				_ = WriteText(&b, rep)
				t.Fatalf("expectations not met:\n%s", b.String())
			}
		})
	}
}

// Two runs of one scenario on the same store give the same report (fresh
// namespace per run, derived jitter seeds).
func TestRun_ReproducibleOnReusedStore(t *testing.T) {
	st := testutil.Store(t)
	f := filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml")
	sc, err := LoadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for range 2 {
		rep, err := Run(context.Background(), st, sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep.Agent = ""
		var b bytes.Buffer
		_ = WriteJSON(&b, rep)
		outs = append(outs, b.String())
	}
	if outs[0] != outs[1] {
		t.Fatalf("two runs differ")
	}
}

// --check reports a readable difference when reality differs.
func TestCheck_ReportsDifferences(t *testing.T) {
	sc, err := LoadFile(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 2
	sc.Script[0].Turn.Expect.Attempts = &n
	sc.Script[0].Turn.Expect.AnsweredBy = "anthropic/claude-opus-4-6"
	rep, err := Run(context.Background(), testutil.Store(t), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms := Check(sc, rep)
	if len(ms) != 2 {
		t.Fatalf("mismatches %v", ms)
	}
	var b bytes.Buffer
	_ = WriteText(&b, rep)
	for _, want := range []string{"check: 2 expectations not met", "answered_by", `want "anthropic/claude-opus-4-6"`, `got  "openai/gpt-5"`, "attempts\n    want 2\n    got  6"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("diff lacks %q:\n%s", want, b.String())
		}
	}
}

// An attempt with no matching response and no default stops the run with
// an error naming the attempt; the turn is left unfinished.
func TestRun_MissingResponseNamesTheAttempt(t *testing.T) {
	sc, err := Parse([]byte(`
name: missing
start: "2026-03-02T09:00:00Z"
config: {agents: {defaults: {model: {primary: openai/gpt-5}}}}
script:
  - at: "+0s"
    turn: {id: t1, session: s, responses: [{candidate: anthropic/claude, ok: true}]}
`), "inline")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), testutil.Store(t), sc, Options{})
	var se *ScriptError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "turn t1 attempt 1 (openai/gpt-5, no profile, first): no scripted response") {
		t.Fatalf("err %v", err)
	}
	if rep == nil || rep.Steps[0].Turn.Outcome != "unfinished" {
		t.Fatalf("report %+v", rep)
	}
}

// Parse names every problem with its path.
func TestParse_ErrorsHavePaths(t *testing.T) {
	_, err := Parse([]byte(`
name: bad
start: "yesterday"
config: {agents: {defaults: {model: {primary: gpt}}}}
script:
  - at: "45s"
    turn:
      session: s
      chat: dm
      responses:
        - {candidate: openai, ok: true}
        - {candidate: openai/gpt-5}
  - at: "+1m"
    command: {do: teleport, session: s}
  - at: "+2m"
    turn: {session: s, colour: blue}
`), "bad.yaml")
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"start:", "config.agents.defaults.model.primary", "script[0].at", "script[0].turn.chat",
		"script[0].turn.responses[0].candidate", `script[0].turn.responses[1]: needs exactly one of "ok: true" and "error"`,
		"script[1].command.do", `script[2].turn.colour: unknown field "colour"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

// schemas/scenario.v1.json accepts every fixture and rejects bad shapes.
func TestSchema_AcceptsFixtures(t *testing.T) {
	s := scenarioSchema(t)
	for _, f := range fixtures(t) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(schemaDoc(t, string(raw))); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, bad := range []string{
		`{"name":"x","start":"2026-01-01T00:00:00Z","config":{},"script":[{"at":"45s","turn":{"session":"s"}}]}`,
		`{"name":"x","start":"2026-01-01T00:00:00Z","config":{},"script":[{"at":"+1s","turn":{"session":"s","responses":[{"candidate":"a/b"}]}}]}`,
		`{"name":"x","start":"2026-01-01T00:00:00Z","config":{},"script":[{"at":"+1s","command":{"do":"teleport","session":"s"}}]}`,
	} {
		var v any
		_ = json.Unmarshal([]byte(bad), &v)
		if err := s.Validate(v); err == nil {
			t.Errorf("schema accepted %s", bad)
		}
		if _, err := Parse([]byte(bad), "x"); err == nil {
			t.Errorf("Parse accepted %s", bad)
		}
	}
}

// A top-level "$schema" (an editor's pointer to schemas/scenario.v1.json),
// in the scenario and in its config, is accepted and ignored: the same
// scenario, with the same config hash, as without them.
func TestParse_SchemaKeysIgnored(t *testing.T) {
	const body = `name: s
start: "2026-03-02T09:00:00Z"
config: {CONFIG agents: {defaults: {model: {primary: openai/gpt-5}}}}
script:
  - at: "+1s"
    turn: {session: s, responses: [{candidate: openai/gpt-5, ok: true}]}
`
	plain, err := Parse([]byte(strings.Replace(body, "CONFIG ", "", 1)), "plain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	with, err := Parse([]byte("$schema: ../../schemas/scenario.v1.json\n"+strings.Replace(body, "CONFIG ", `"$schema": ../../schemas/config.v1.json, `, 1)), "with.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if with.Name != plain.Name || !with.Start.Equal(plain.Start) || with.Loaded.Hash != plain.Loaded.Hash || len(with.Script) != len(plain.Script) {
		t.Fatalf("with $schema: %+v\nwithout: %+v", with, plain)
	}
	s := scenarioSchema(t)
	if err := s.Validate(schemaDoc(t, "$schema: ../../schemas/scenario.v1.json\n"+strings.Replace(body, "CONFIG ", `"$schema": x, `, 1))); err != nil {
		t.Fatalf("schema: %v", err)
	}
}
