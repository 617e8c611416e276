package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// decideResult is one decide-and-append run of the engine.
type decideResult struct {
	Turns, Attempts, Decisions int
	Elapsed                    time.Duration
	// Decision holds, per decision, the wall time from the moment its
	// input was known (the provider call returned, the turn was asked for,
	// a wait ended) until the engine was ready to act on it: classify +
	// decide + durable append + fold into the engine's state.
	Decision []time.Duration
	// Append holds each events.Store.Append call alone.
	Append []time.Duration
	// Probe holds the probe's durations (one per turn).
	Probe []time.Duration
}

// timedStore records the duration of every Append.
type timedStore struct {
	events.Store
	mu       sync.Mutex
	lat      []time.Duration
	appended bool
}

func (s *timedStore) Append(ctx context.Context, subject string, expected uint64, evs ...events.Event) (events.AppendResult, error) {
	return s.timed(func() (events.AppendResult, error) { return s.Store.Append(ctx, subject, expected, evs...) })
}

func (s *timedStore) AppendCommit(ctx context.Context, req events.AppendRequest) (events.AppendResult, error) {
	return s.timed(func() (events.AppendResult, error) { return s.Store.AppendCommit(ctx, req) })
}

func (s *timedStore) AppendGuarded(ctx context.Context, subject, guard string, expected uint64, evs ...events.Event) (events.AppendResult, error) {
	return s.timed(func() (events.AppendResult, error) {
		return s.Store.AppendGuarded(ctx, subject, guard, expected, evs...)
	})
}

// timed runs one append and records its duration.
func (s *timedStore) timed(do func() (events.AppendResult, error)) (events.AppendResult, error) {
	t := time.Now()
	r, err := do()
	d := time.Since(t)
	s.mu.Lock()
	s.lat = append(s.lat, d)
	s.appended = true
	s.mu.Unlock()
	return r, err
}

// decisionTimer splits the engine's wall time into decisions: a decision
// starts when its input is known (turn requested, call returned, wait
// ended) and ends when the engine acts on it (calls, sleeps, returns),
// counted only when it appended.
type decisionTimer struct {
	st   *timedStore
	mark time.Time
	lat  []time.Duration
}

func (t *decisionTimer) start() {
	t.st.mu.Lock()
	t.st.appended = false
	t.st.mu.Unlock()
	t.mark = time.Now()
}

func (t *decisionTimer) end() {
	d := time.Since(t.mark)
	t.st.mu.Lock()
	ok := t.st.appended
	t.st.mu.Unlock()
	if ok {
		t.lat = append(t.lat, d)
	}
}

// vclock is a virtual clock: Sleep advances it at once (zero wall time).
type vclock struct {
	mu    sync.Mutex
	now   time.Time
	timer *decisionTimer
}

func (c *vclock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *vclock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func (c *vclock) Sleep(ctx context.Context, d time.Duration) error {
	c.timer.end()
	c.advance(d)
	c.timer.start()
	return ctx.Err()
}

// mixCaller answers calls with a seeded realistic mix: a turn's first
// attempt succeeds 70% of the time, later attempts (retries, rotations,
// fallbacks) 85%; failures are provider errors as SDKs report them (rate
// limits, overloads, timeouts, model not found, auth), which the engine
// classifies. Each call takes 1 s of virtual time and no wall time.
type mixCaller struct {
	rng   *rand.Rand
	clock *vclock
	timer *decisionTimer
	calls int
}

func (m *mixCaller) Call(_ context.Context, r engine.CallRequest) (engine.Answer, error) {
	m.timer.end()
	defer m.timer.start()
	m.calls++
	m.clock.advance(time.Second)
	x := m.rng.IntN(100)
	if r.Attempt > 1 {
		if x < 85 {
			return engine.Answer{Text: "ok"}, nil
		}
		x = 70 + m.rng.IntN(30)
	}
	switch {
	case x < 70:
		return engine.Answer{Text: "ok"}, nil
	case x < 85:
		return nil2(&classify.ProviderError{Provider: r.Provider, Model: r.Model, Status: 429, Type: "rate_limit_error",
			Message: `429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 450,000 input tokens per minute."}}`,
			Headers: map[string]string{"retry-after": "12"}})
	case x < 91:
		return nil2(&classify.ProviderError{Provider: r.Provider, Model: r.Model, Status: 529, Type: "overloaded_error",
			Message: `529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`})
	case x < 95:
		return nil2(&classify.ProviderError{Provider: r.Provider, Model: r.Model, Name: "TimeoutError",
			Message: "Request timed out."})
	case x < 98:
		return nil2(&classify.ProviderError{Provider: r.Provider, Model: r.Model, Status: 404, Code: "model_not_found",
			Message: "404 The model `" + r.Model + "` does not exist or you do not have access to it."})
	default:
		return nil2(&classify.ProviderError{Provider: r.Provider, Model: r.Model, Status: 401, Type: "authentication_error",
			Message: `401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`})
	}
}

func nil2(err error) (engine.Answer, error) { return engine.Answer{}, err }

// runDecide drives a fresh engine (agent) on st with the bench config
// (3 profiles per provider) and the mix caller until at least attempts
// provider calls were made, on 16 sessions, one turn at a time.
//
// probe, when set, runs after every measured turn (outside any decision)
// and its durations are returned in Probe: a raw publish interleaved with
// the engine's decisions, so both see the same disk and the same load.
func runDecide(ctx context.Context, st events.Store, agent string, attempts int, probe func(i int) (time.Duration, error)) (*decideResult, error) {
	ts := &timedStore{Store: st}
	timer := &decisionTimer{st: ts}
	clock := &vclock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), timer: timer}
	e, err := engine.New(ctx, ts, agent, engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 7 }))
	if err != nil {
		return nil, err
	}
	defer e.Close()
	l, err := loadConfig(3)
	if err != nil {
		return nil, err
	}
	if _, _, err := e.ApplyConfig(ctx, "bench", l); err != nil {
		return nil, err
	}
	caller := &mixCaller{rng: rand.New(rand.NewPCG(11, 13)), clock: clock, timer: timer}
	// Warm up: pins, first profile states, connection buffers.
	run := func(i int) error {
		timer.start()
		_, err := e.RunTurn(ctx, engine.TurnRequest{TurnID: fmt.Sprintf("%s-t%07d", agent, i),
			Session: fmt.Sprintf("agent:%s:telegram:direct:%d", agent, i%16)}, caller)
		timer.end()
		clock.advance(5 * time.Second)
		var ex *engine.ExhaustedError
		var stop *engine.StoppedError
		if err != nil && !errors.As(err, &ex) && !errors.As(err, &stop) {
			return err
		}
		return nil
	}
	for i := range 20 {
		if err := run(-1 - i); err != nil {
			return nil, err
		}
	}
	ts.mu.Lock()
	ts.lat = ts.lat[:0]
	ts.mu.Unlock()
	timer.lat = timer.lat[:0]
	caller.calls = 0
	res := &decideResult{}
	var probeTime time.Duration
	start := time.Now()
	for i := 0; caller.calls < attempts; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := run(i); err != nil {
			return nil, err
		}
		res.Turns++
		if probe != nil {
			t := time.Now()
			d, err := probe(i)
			if err != nil {
				return nil, err
			}
			res.Probe = append(res.Probe, d)
			probeTime += time.Since(t)
		}
	}
	res.Elapsed = time.Since(start) - probeTime
	res.Attempts = caller.calls
	res.Decision = timer.lat
	res.Decisions = len(timer.lat)
	ts.mu.Lock()
	res.Append = append([]time.Duration(nil), ts.lat...)
	ts.mu.Unlock()
	return res, nil
}
