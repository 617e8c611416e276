package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
	"github.com/fledger/fledger/serve"
)

// benchLedger appends a ledger of turns turns over profiles auth profiles
// (half anthropic, half openai; primary anthropic/claude-opus-4-6, fallback
// openai/gpt-5), one turn every 300 ms, each call answered from a seeded
// script (70 % success, rate limits, billing, overloads), every decision
// by the real deciders and appended as one commit as the engine does. It
// returns the first turn's start.
func benchLedger(b *testing.B, st events.Store, profiles, turns int) time.Time {
	b.Helper()
	ctx := context.Background()
	loaded, err := config.Parse([]byte(benchConfig(profiles)), "bench")
	testutil.NoError(b, err)
	cfg := loaded.Policy
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	now := start.UnixMilli()
	prof := map[string]policy.ProfileState{}
	sess := map[string]policy.SessionState{}
	commit := func(turn string, ps []events.Payload) {
		if len(ps) == 0 {
			return
		}
		evs := make([]events.Event, len(ps))
		for i, p := range ps {
			key := events.KeyOf(p)
			if key == "" {
				key = turn
			}
			evs[i] = events.New("main", key, time.UnixMilli(now), p, events.WithCorrelation(turn))
			switch p.EventAggregate() {
			case events.AggProfile:
				prof[key] = policy.EvolveProfile(prof[key], p)
			case events.AggSession:
				sess[key] = policy.EvolveSession(sess[key], p)
			}
		}
		subj, err := evs[0].Subject()
		if turn != "" {
			subj, err = events.Subject("main", events.AggTurn, turn)
		}
		testutil.NoError(b, err)
		_, err = st.Append(ctx, subj, events.AnySeq, evs...)
		testutil.NoError(b, err)
	}
	commit("", []events.Payload{events.ConfigApplied{Hash: loaded.Hash, Config: loaded.Canonical, Source: "bench"}})
	r := rand.New(rand.NewPCG(7, 42))
	answer := func() policy.Outcome {
		switch x := r.IntN(100); {
		case x < 70:
			return policy.Outcome{OK: true, LatencyMs: 80}
		case x < 88:
			return policy.Outcome{Reason: policy.ReasonRateLimit, Status: 429, LatencyMs: 20, Error: events.ProviderErrorRecord{Status: 429, MessagePreview: "rate limited"}}
		case x < 92:
			return policy.Outcome{Reason: policy.ReasonBilling, Status: 402, LatencyMs: 20, Error: events.ProviderErrorRecord{Status: 402, MessagePreview: "credit balance too low"}}
		}
		return policy.Outcome{Reason: policy.ReasonOverloaded, Status: 529, LatencyMs: 20, Error: events.ProviderErrorRecord{Status: 529, MessagePreview: "overloaded"}}
	}
	for i := range turns {
		id, s := fmt.Sprintf("t%05d", i), fmt.Sprintf("s%02d", i%20)
		env := func() policy.Env { return policy.Env{Config: &cfg, Profiles: prof, Session: sess[s], Now: now} }
		sel, err := cfg.Select(sess[s], policy.SelectRequest{Now: now})
		testutil.NoError(b, err)
		dec, err := policy.StartTurn(sel, env(), policy.StartInput{TurnID: id, Session: s, Chat: "direct", Seed: uint64(i)})
		testutil.NoError(b, err)
		var ts policy.TurnState
		for calls := 0; err == nil; calls++ {
			for _, p := range dec.Events {
				ts = policy.EvolveTurn(ts, p)
			}
			commit(id, dec.Events)
			if dec.Next.Kind == policy.NextCall && calls < 12 {
				out := answer()
				now += out.LatencyMs
				dec, err = policy.OnOutcome(ts, env(), out)
			} else if dec.Next.Kind == policy.NextWait && calls < 12 {
				now = dec.Next.ResumeAt
				dec, err = policy.Resume(ts, env())
			} else {
				break
			}
		}
		testutil.NoError(b, err)
		now = max(now, start.UnixMilli()+int64(i+1)*300)
	}
	return start
}

// benchConfig has profiles auth profiles, half anthropic, half openai;
// primary anthropic/claude-opus-4-6, fallback openai/gpt-5.
func benchConfig(profiles int) string {
	var b strings.Builder
	b.WriteString("auth:\n  profiles:\n")
	for i := range profiles {
		prov := []string{"anthropic", "openai"}[i%2]
		fmt.Fprintf(&b, "    \"%s:k%03d\": {provider: %s, type: api_key}\n", prov, i, prov)
	}
	b.WriteString("agents:\n  defaults:\n    model:\n      primary: anthropic/claude-opus-4-6\n      fallbacks: [openai/gpt-5]\n")
	return b.String()
}

// benchService serves st read-only as `fledger view` does, with
// projections caught up to the stream's end before it returns (nil db:
// none, so the timeline is replay.ReadRange of the whole stream, what
// the endpoint did before issue 20's projections), and returns its URL.
func benchService(b *testing.B, st events.Store, withProjections bool) string {
	b.Helper()
	ctx := context.Background()
	cfg := serve.Config{Store: st, ReadOnly: true}
	if withProjections {
		db, err := projections.Open(ctx, filepath.Join(b.TempDir(), projections.DefaultFile))
		testutil.NoError(b, err)
		b.Cleanup(func() { _ = db.Close() })
		_, err = projections.NewProjector(db).CatchUp(ctx, st, 0)
		testutil.NoError(b, err)
		cfg.Projections = db
	}
	svc, err := serve.New(ctx, cfg)
	testutil.NoError(b, err)
	b.Cleanup(func() { svc.Close(context.Background()) })
	hs := httptest.NewServer(svc.Handler())
	b.Cleanup(hs.Close)
	return hs.URL
}

// getTimeline asks base for a timeline (q: its query) and returns it.
func getTimeline(b *testing.B, base string, q url.Values) *replay.RangeTimeline {
	resp, err := http.Get(base + "/v1/timeline?" + q.Encode())
	testutil.NoError(b, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		b.Fatalf("timeline: %d %s", resp.StatusCode, body)
	}
	var tl replay.RangeTimeline
	testutil.NoError(b, json.NewDecoder(resp.Body).Decode(&tl))
	return &tl
}

// windowCount is the windows of tl's lanes.
func windowCount(tl *replay.RangeTimeline) int {
	n := 0
	for _, l := range tl.Profiles {
		n += len(l.Windows)
	}
	return n
}

// GET /v1/timeline over a range holding 10,000 turns of 100 profiles
// from the projections (caught up first); and on the same ledger one
// turn's explanation and a what-if of every turn.
// go test ./serve/ -run '^$' -bench Timeline_10k -benchtime 3x
func BenchmarkTimeline_10kTurns100Profiles(b *testing.B) {
	st := testutil.Store(b, testutil.NoFsync)
	start := benchLedger(b, st, 100, 10000)
	base := benchService(b, st, true)
	last, err := st.LastSeq(context.Background(), "")
	testutil.NoError(b, err)
	until := start.Add(2 * time.Hour)
	// range: the 10,000 turns (a new range each time).
	b.Run("range", func(b *testing.B) {
		var windows int
		for i := range b.N {
			tl := getTimeline(b, base, url.Values{"since": {start.Format(time.RFC3339)},
				"until": {until.Add(time.Duration(i+1) * time.Millisecond).Format(time.RFC3339Nano)}})
			if len(tl.Turns) != 10000 || len(tl.Profiles) != 100 {
				b.Fatalf("%d turns, %d profiles", len(tl.Turns), len(tl.Profiles))
			}
			windows = windowCount(tl)
		}
		b.ReportMetric(float64(last), "commits")
		b.ReportMetric(float64(windows), "windows")
	})
	// explanation: one turn of the ledger (the stream is read).
	b.Run("explanation", func(b *testing.B) {
		for range b.N {
			resp, err := http.Get(base + "/v1/turns/t05000/explanation")
			testutil.NoError(b, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("explanation: %d", resp.StatusCode)
			}
		}
	})
	// what-if: the 10,000 turns re-decided without the fallback.
	b.Run("what-if", func(b *testing.B) {
		cfg := strings.Replace(benchConfig(100), "fallbacks: [openai/gpt-5]", "fallbacks: []", 1)
		body, _ := json.Marshal(serve.WhatIfRequest{Config: cfg})
		for range b.N {
			resp, err := http.Post(base+"/v1/what-if", "application/json", bytes.NewReader(body))
			testutil.NoError(b, err)
			var rep serve.WhatIfReport
			err = json.NewDecoder(resp.Body).Decode(&rep)
			resp.Body.Close()
			testutil.NoError(b, err)
			if rep.Turns != 10000 {
				b.Fatalf("what-if: %d turns", rep.Turns)
			}
			b.ReportMetric(float64(len(rep.Changed)), "changed")
		}
	})
}

// GET /v1/timeline of the default range, the last hour of the ledger
// (about 10,000 turns of 100 profiles either way), at the end of a ledger
// of 10,000 turns and of one ten times longer: from the whole stream
// (replay.ReadRange, the endpoint before issue 20's projections) and from
// the projections, caught up before the timer. The projections' time
// must not grow with the ledger's length (issue 20).
// go test ./serve/ -run '^$' -bench Timeline_LastHour -benchtime 2x -timeout 30m
func BenchmarkTimeline_LastHour(b *testing.B) {
	for _, turns := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			st := testutil.Store(b, testutil.NoFsync)
			benchLedger(b, st, 100, turns)
			last, err := st.LastSeq(context.Background(), "")
			testutil.NoError(b, err)
			for _, src := range []struct {
				name string
				proj bool
			}{{"stream", false}, {"projections", true}} {
				base := benchService(b, st, src.proj)
				b.Run(src.name, func(b *testing.B) {
					var tl *replay.RangeTimeline
					for range b.N {
						tl = getTimeline(b, base, url.Values{})
					}
					b.ReportMetric(float64(last), "commits")
					b.ReportMetric(float64(len(tl.Turns)), "turns")
					b.ReportMetric(float64(windowCount(tl)), "windows")
				})
			}
		})
	}
}
