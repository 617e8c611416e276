package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// Every fixture scenario driven through the HTTP API (the gateway makes
// the scripted calls, sleeps each wait on the scenario's virtual clock and
// resumes; a restart or a config change starts `fledger serve` again on
// the same store) records the same events — type, agent, key, correlation, time,
// commit sequence and payload; only event ids and causation ids, random
// UUIDv7s, differ — and the same projection dump as `fledger run` of the
// scenario into another store.
func TestScenarios_HTTPEqualsRun(t *testing.T) {
	testutil.EachScenario(t, func(t *testing.T, f string) {
		sc, err := scenario.LoadFile(f)
		testutil.NoError(t, err)
		ctx := testutil.Context(t)

		runStore := testutil.Store(t)
		_, err = scenario.Run(ctx, runStore, sc, scenario.Options{Agent: "main"})
		testutil.NoError(t, err)

		httpStore := testutil.Store(t)
		clock := scenario.NewClock(sc.Start, false)
		srv := startGateway(t, httpStore, sc, clock)
		driveScenario(t, ctx, sc, srv)

		want, got := eventLines(t, runStore), eventLines(t, httpStore)
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("events differ\n--- fledger run\n%s\n--- HTTP\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
		if a, b := dump(t, runStore), dump(t, httpStore); a != b {
			t.Fatalf("projections differ\n--- fledger run\n%s\n--- HTTP\n%s", a, b)
		}
	})
}

func driveScenario(t *testing.T, ctx context.Context, sc *scenario.Scenario, srv *gateway) {
	t.Helper()
	for i := range sc.Script {
		s := &sc.Script[i]
		srv.clock.AdvanceTo(sc.Start.Add(s.Offset))
		if c := s.Command; c != nil {
			driveCommand(t, ctx, srv, sc, c)
			continue
		}
		tr := s.Turn
		begin := client.BeginRequest{Agent: "main", Session: tr.Session, Chat: tr.Chat, Model: tr.Model, Source: tr.Source, Fallbacks: tr.Fallbacks, FallbacksOverride: tr.FallbacksOverride, TurnID: tr.ID}
		driveTurn(t, ctx, srv.cl, begin, tr, sc.Default, srv.clock, func(c *scenario.Command) { driveCommand(t, ctx, srv, sc, c) })
	}
}

// driveCommand sends a command step as a gateway would: a session
// command, a use step's warm-up turn (`/model p/m@profile` with the
// begin), or a restart of `fledger serve` (with the config a
// remove_profile step leaves in force).
func driveCommand(t *testing.T, ctx context.Context, srv *gateway, sc *scenario.Scenario, c *scenario.Command) {
	t.Helper()
	cl := srv.cl
	var err error
	switch c.Do {
	case "model":
		m, prof, _ := strings.Cut(c.Model, "@")
		if c.Origin != "" {
			// A stored auto override with its origin (imported state):
			// the request's origin field, which SelectModel does not take.
			err = cl.Do(ctx, "POST", "/v1/sessions/main/"+c.Session+"/model",
				map[string]string{"model": m, "source": c.Source, "origin": c.Origin}, nil)
			break
		}
		err = cl.SelectModel(ctx, "main", c.Session, m, c.Source, prof, nil)
	case "model_default":
		err = cl.SelectModel(ctx, "main", c.Session, "default", "", "", nil)
	case "pin":
		err = cl.Pin(ctx, "main", c.Session, c.Profile, c.Source, nil)
	case "new", "reset":
		err = cl.Reset(ctx, "main", c.Session, c.Do, nil)
	case "sessions_reset":
		err = cl.Reset(ctx, "main", c.Session, "", nil)
	case "compaction":
		err = cl.Do(ctx, "POST", "/v1/sessions/main/"+c.Session+"/compaction", nil, nil)
	case "auth_order":
		err = cl.Do(ctx, "POST", "/v1/agents/main/auth/order/"+c.Provider, map[string]any{"profiles": c.Profiles, "by": "scenario"}, nil)
	case "use":
		tr := &scenario.Turn{ID: c.TurnID(), Session: c.Session, Responses: []scenario.Response{{Candidate: c.Model, Profile: c.Profile, OK: true}}}
		begin := client.BeginRequest{Agent: "main", Session: c.Session, Model: c.Model + "@" + c.Profile, TurnID: c.TurnID()}
		driveTurn(t, ctx, cl, begin, tr, nil, srv.clock, nil)
	case "remove_profile":
		srv.restart(t, c.Config())
	case "restart":
		srv.restart(t, nil)
	default:
		t.Fatalf("command %q", c.Do)
	}
	testutil.NoError(t, err)
}

// driveTurn begins a turn and answers its calls from tr's responses (then
// def), sleeping each latency and wait on the clock, until it ends. A
// response's during command is sent at the end of its latency, before
// the outcome is reported, as `fledger run` does.
func driveTurn(t *testing.T, ctx context.Context, cl *client.Client, begin client.BeginRequest, tr *scenario.Turn, def *scenario.Response, clock *scenario.Clock, during func(*scenario.Command)) {
	t.Helper()
	step, err := cl.Begin(ctx, begin)
	testutil.NoError(t, err)
	used := make([]int, len(tr.Responses))
	for n := 0; ; n++ {
		if n > 500 {
			t.Fatalf("turn %s does not end", tr.ID)
		}
		next := step.Next
		switch next.Action {
		case "call":
			resp := pick(tr, def, used, next)
			if resp == nil {
				t.Fatalf("turn %s attempt %d: no scripted response", tr.ID, next.Attempt)
			}
			_ = clock.Sleep(ctx, time.Duration(resp.LatencyMs)*time.Millisecond)
			if resp.During != nil && during != nil && firstUse(tr, used, resp) {
				during(resp.During)
			}
			out := client.Outcome{Attempt: next.Attempt, LatencyMs: resp.LatencyMs, OK: resp.OK,
				OutputStarted: resp.OutputStarted, ToolStarted: resp.ToolStarted, ToolBatchSettled: resp.ToolBatchSettled}
			if !resp.OK {
				out.Error = wireError(t, resp.Error)
			}
			step, err = cl.Report(ctx, step.TurnID, out)
		case "wait":
			_ = clock.Sleep(ctx, time.Duration(next.Ms)*time.Millisecond)
			step, err = cl.Resume(ctx, step.TurnID)
		default:
			return
		}
		testutil.NoError(t, err)
	}
}

// gateway is `fledger serve` for a scenario: the server, and how to start
// it again on the same store (a restart, or a config change).
type gateway struct {
	*server
	st    events.Store
	sc    *scenario.Scenario
	cfg   *config.Loaded
	clock *scenario.Clock
}

func startGateway(t *testing.T, st events.Store, sc *scenario.Scenario, clock *scenario.Clock) *gateway {
	g := &gateway{st: st, sc: sc, cfg: sc.Loaded, clock: clock}
	g.restart(t, nil)
	return g
}

// restart stops the server, if one runs, and starts a new one on the same
// store with cfg (nil = the config in force), as an operator restarting
// `fledger serve` does; it applies the config when it changed.
func (g *gateway) restart(t *testing.T, cfg *config.Loaded) {
	t.Helper()
	if g.server != nil {
		g.svc.Close(context.Background())
	}
	if cfg != nil {
		g.cfg = cfg
	}
	seeds := func(turnID string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(g.sc.Name + "\x00" + turnID))
		return h.Sum64()
	}
	g.server = startServer(t, g.st, serve.Config{Config: g.cfg, ConfigSource: scenario.ConfigSource(g.sc),
		EngineOptions: []engine.Option{engine.WithClock(g.clock), engine.WithSeeds(seeds)}})
}

// firstUse reports whether resp, one of tr's responses, answers its
// first attempt.
func firstUse(tr *scenario.Turn, used []int, resp *scenario.Response) bool {
	for i := range tr.Responses {
		if &tr.Responses[i] == resp {
			return used[i] == 1
		}
	}
	return false
}

// pick answers a call the way `fledger run` does: the first unused
// response for the candidate (and profile), else the default.
func pick(tr *scenario.Turn, def *scenario.Response, used []int, n client.Next) *scenario.Response {
	cand := n.Provider + "/" + n.Model
	for i := range tr.Responses {
		x := &tr.Responses[i]
		if x.Candidate != cand || (x.Profile != "" && x.Profile != n.Profile) || used[i] >= max(1, x.Repeat) {
			continue
		}
		used[i]++
		return x
	}
	if def != nil && (def.Candidate == "" || def.Candidate == cand) {
		return def
	}
	return nil
}

// wireError sends a scripted provider error as the gateway would: its
// JSON fields (status, code, type, message, body, headers, name).
func wireError(t *testing.T, pe *classify.ProviderError) *client.ProviderError {
	b, err := json.Marshal(pe)
	testutil.NoError(t, err)
	var out client.ProviderError
	testutil.NoError(t, json.Unmarshal(b, &out))
	if pe.Cause != nil || pe.ID != "" {
		t.Fatalf("scripted error uses cause/id, which the client type does not carry: %s", b)
	}
	return &out
}

func eventLines(t *testing.T, st events.Store) []string {
	var out []string
	for ev, err := range st.Read(testutil.Context(t), 1) {
		testutil.NoError(t, err)
		b, _ := json.Marshal(ev.Data)
		corr := ev.CorrelationID
		out = append(out, fmt.Sprintf("%d/%d %s %s %s %s corr=%s %s", ev.Seq, ev.Index, ev.At.UTC().Format(time.RFC3339Nano), ev.Type, ev.Agent, ev.Key, corr, b))
	}
	return out
}

func dump(t *testing.T, st events.Store) string {
	db, err := projections.Open(testutil.Context(t), t.TempDir()+"/dump.sqlite")
	testutil.NoError(t, err)
	defer db.Close()
	_, err = projections.NewProjector(db).CatchUp(testutil.Context(t), st, 0)
	testutil.NoError(t, err)
	var b bytes.Buffer
	testutil.NoError(t, db.Dump(testutil.Context(t), &b))
	return b.String()
}
