package policy

import (
	"reflect"
	"sort"
	"testing"

	"github.com/fledger/fledger/events"
	"pgregory.net/rapid"
)

var allReasons = []string{ReasonAuth, ReasonAuthPermanent, ReasonFormat, ReasonRateLimit, ReasonOverloaded,
	ReasonBilling, ReasonServerError, ReasonTimeout, ReasonTLSCertificate, ReasonContextOverflow,
	ReasonModelNotFound, ReasonSessionExpired, ReasonEmptyResponse, ReasonNoErrorDetails, ReasonUnclassified, ReasonUnknown}

func genParams(t *rapid.T) Params {
	p := DefaultParams()
	p.RateLimitMode = rapid.SampledFrom([]string{RateLimitLadder, RateLimitExponential}).Draw(t, "mode")
	p.ResetOnExpiry = rapid.Bool().Draw(t, "resetOnExpiry")
	p.ClearOtherModelCooldownOnSuccess = rapid.Bool().Draw(t, "clearOther")
	return p
}

// Seed 004: an active window is never extended (nor shortened) by a new
// failure.
func TestProp_ActiveWindowNeverExtended(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genParams(t)
		pr := Profile{ID: "x:1", Provider: "x", Type: ProfileAPIKey, InlineKey: rapid.Bool().Draw(t, "inline")}
		s := ProfileState{ProfileID: pr.ID, Provider: pr.Provider}
		now := t0
		for i := 0; i < rapid.IntRange(1, 30).Draw(t, "n"); i++ {
			now += rapid.Int64Range(0, 400000).Draw(t, "dt")
			model := rapid.SampledFrom([]string{"", "m1", "m2"}).Draw(t, "model")
			if rapid.IntRange(0, 9).Draw(t, "success") == 0 {
				s = EvolveProfile(s, p.RecordSuccess(s, pr, model, "", 0, now))
				continue
			}
			reason := rapid.SampledFrom(allReasons).Draw(t, "reason")
			e, ok := p.RecordFailure(s, pr, Failure{Reason: reason, Model: model}, now)
			if !ok {
				continue
			}
			if s.CooldownUntil > now && e.CooldownUntil != s.CooldownUntil {
				t.Fatalf("active cooldown %d moved to %d", s.CooldownUntil, e.CooldownUntil)
			}
			if s.DisabledUntil > now && e.DisabledUntil != s.DisabledUntil {
				t.Fatalf("active disable %d moved to %d", s.DisabledUntil, e.DisabledUntil)
			}
			if e.ErrorCount < 1 || e.LastFailureAt != now {
				t.Fatalf("failure not counted: %+v", e)
			}
			s = EvolveProfile(s, e)
		}
	})
}

func TestProp_OrderIsPermutationOfEligibleProfiles(t *testing.T) {
	types := []string{ProfileOAuth, ProfileToken, ProfileAPIKey}
	rapid.Check(t, func(t *rapid.T) {
		c := DefaultConfig()
		n := rapid.IntRange(0, 8).Draw(t, "n")
		states := map[string]ProfileState{}
		var ids []string
		for i := 0; i < n; i++ {
			id := "p:" + string(rune('a'+i))
			c.Profiles = append(c.Profiles, Profile{ID: id, Provider: "p", Type: rapid.SampledFrom(types).Draw(t, "type"),
				ExpiresAt: rapid.SampledFrom([]int64{0, t0 - 1, t0 + 1}).Draw(t, "exp")})
			ids = append(ids, id)
			states[id] = ProfileState{LastUsed: rapid.Int64Range(0, 5).Draw(t, "lastUsed"),
				CooldownUntil: rapid.SampledFrom([]int64{0, t0 - 1, t0 + 10, t0 + 20}).Draw(t, "cd"),
				CooldownModel: rapid.SampledFrom([]string{"", "m1", "m2"}).Draw(t, "cdm"),
				DisabledUntil: rapid.SampledFrom([]int64{0, t0 + 15}).Draw(t, "dis")}
		}
		c.Profiles = append(c.Profiles, Profile{ID: "q:z", Provider: "q", Type: ProfileAPIKey})
		if rapid.Bool().Draw(t, "explicit") && n > 0 {
			perm := rapid.Permutation(ids).Draw(t, "perm")
			c.Order = map[string][]string{"p": append(perm[:rapid.IntRange(1, n).Draw(t, "k")], "q:z", "nope")}
		}
		got := c.ResolveOrder(OrderInput{Provider: "p", Model: rapid.SampledFrom([]string{"", "m1"}).Draw(t, "model"),
			States: states, Preferred: rapid.SampledFrom(append(ids, "")).Draw(t, "pref"), Now: t0})
		want := ids
		if c.Order != nil {
			want = nil
			for _, id := range c.Order["p"] {
				if len(id) > 2 && id[:2] == "p:" {
					want = append(want, id)
				}
			}
		}
		g, w := append([]string(nil), got...), append([]string(nil), want...)
		sort.Strings(g)
		sort.Strings(w)
		if len(g) != len(w) || (len(g) > 0 && !reflect.DeepEqual(g, w)) {
			t.Fatalf("order %v is not a permutation of %v", got, want)
		}
	})
}

func genModel(t *rapid.T, label string) ModelRef {
	return ModelRef{Provider: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, label+"p"),
		Model: rapid.SampledFrom([]string{"1", "2"}).Draw(t, label+"m")}
}

func TestProp_ChainStartsWithRequestedAndHasNoDuplicates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req, primary := genModel(t, "req"), genModel(t, "primary")
		var fb []ModelRef
		for i := 0; i < rapid.IntRange(0, 6).Draw(t, "n"); i++ {
			fb = append(fb, genModel(t, "fb"))
		}
		override := rapid.Bool().Draw(t, "override")
		ch := BuildChain(req, fb, override, primary)
		if len(ch) == 0 || ch[0].Provider != req.Provider || ch[0].Model != req.Model || ch[0].RouteOrigin != OriginRequested {
			t.Fatalf("chain %v does not start with %v", ch, req)
		}
		seen := map[ModelRef]bool{}
		for _, c := range ch {
			k := ModelRef{Provider: c.Provider, Model: c.Model}
			if seen[k] {
				t.Fatalf("duplicate %v in %v", k, ch)
			}
			seen[k] = true
		}
		if override && len(fb) == 0 && len(ch) != 1 {
			t.Fatalf("strict chain %v", ch)
		}
	})
}

// runRandomTurn drives one turn with random outcomes to its end.
func runRandomTurn(t *rapid.T, h *harness, sel Selection) {
	h.start(sel, rapid.SampledFrom([]string{"direct", "group"}).Draw(t, "chat"))
	for step := 0; step < 400; step++ {
		switch h.next.Kind {
		case NextWait:
			h.resume()
			continue
		case NextCall:
		default:
			return
		}
		h.now += rapid.Int64Range(0, 50000).Draw(t, "latency")
		if rapid.IntRange(0, 5).Draw(t, "ok") == 0 {
			h.outcome(Outcome{OK: true})
			continue
		}
		o := Outcome{Reason: rapid.SampledFrom(allReasons).Draw(t, "reason"),
			RetryAfterMs:  rapid.SampledFrom([]int64{0, 0, 3000, 70000}).Draw(t, "retryAfter"),
			OutputStarted: rapid.IntRange(0, 9).Draw(t, "output") == 0}
		if rapid.IntRange(0, 19).Draw(t, "stopper") == 0 {
			o.Disposition = rapid.SampledFrom([]string{DispositionAbort, DispositionRefusal, DispositionCoordination}).Draw(t, "disp")
		}
		o.RequestSizeCeiling = o.Reason == ReasonContextOverflow && rapid.Bool().Draw(t, "ceiling")
		h.outcome(o)
	}
	t.Fatalf("turn did not end: %+v", h.next)
}

func genHarness(t *rapid.T) *harness {
	cfg := testConfig()
	cfg.Params = genParams(t)
	cfg.SkipCacheTTLMs = rapid.SampledFrom([]int64{0, 60000}).Draw(t, "ttl")
	h := newHarness(t, cfg)
	return h
}

func TestProp_StrictSelectionNeverYieldsAnotherModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHarness(t)
		h.sess.Model = rapid.SampledFrom([]ModelRef{m("anthropic", "claude"), m("openai", "gpt-5"), m("openrouter", "x")}).Draw(t, "model")
		h.sess.Source = rapid.SampledFrom([]SelectionSource{SourceUser, SourceLegacy, ""}).Draw(t, "source")
		sel, err := h.cfg.Select(h.sess, SelectRequest{Now: h.now})
		if err != nil || !sel.Strict {
			t.Fatalf("not strict: %+v %v", sel, err)
		}
		runRandomTurn(t, h, sel)
		for _, p := range h.log {
			if a, ok := p.(events.AttemptStarted); ok && (a.Provider != h.sess.Model.Provider || a.Model != h.sess.Model.Model) {
				t.Fatalf("strict turn called %s/%s", a.Provider, a.Model)
			}
		}
		if h.next.Kind == NextDone && h.next.AnsweredBy != h.sess.Model {
			t.Fatal("answered by another model")
		}
	})
}

func TestProp_UserPinSurvivesCooldowns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHarness(t)
		pin := rapid.SampledFrom([]string{"anthropic:a", "anthropic:b"}).Draw(t, "pin")
		h.sess.Pin, h.sess.PinProvider, h.sess.PinSource = pin, "anthropic", PinUser
		for turn := 0; turn < rapid.IntRange(1, 4).Draw(t, "turns"); turn++ {
			runRandomTurn(t, h, h.selectDefault())
			if h.sess.Pin != pin || h.sess.PinSource != PinUser {
				t.Fatalf("turn %d replaced the user pin: %+v", turn, h.sess)
			}
			h.sess = fold(h.sess, ResetSession(h.sess, "s1", "new"))
			h.sess = fold(h.sess, h.cfg.CompleteCompaction(h.sess, "s1"))
		}
		if h.sess.Pin != pin {
			t.Fatal("user pin lost on reset or compaction")
		}
	})
}

func fold(s SessionState, ps []events.Payload) SessionState {
	for _, p := range ps {
		s = EvolveSession(s, p)
	}
	return s
}

// Replaying the same events through evolve always gives the same state,
// and the same inputs always give the same decisions.
func TestProp_ReplayIsDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		params := genParams(t)
		var logs [2][]events.Payload
		var states [2]TurnState
		var profiles [2]map[string]ProfileState
		var sessions [2]SessionState
		for run := 0; run < 2; run++ {
			// The same outcome sequence on both runs, from the drawn seed.
			cfg := testConfig()
			cfg.Params = params
			cfg.MaxRetries = 2
			h := newHarness(t, cfg)
			r := &seqT{x: seed}
			driveSeeded(h, r)
			logs[run], states[run], profiles[run], sessions[run] = h.log, h.st, h.profiles, h.sess
		}
		if !reflect.DeepEqual(logs[0], logs[1]) {
			t.Fatal("same inputs, different events")
		}
		var st, inPlace TurnState
		prof := map[string]ProfileState{}
		sess := SessionState{Session: "s1"}
		for i, p := range logs[0] {
			st = EvolveTurn(st, p)
			if inPlace.Evolve(p); !reflect.DeepEqual(inPlace, st) {
				t.Fatalf("event %d (%s): Evolve in place differs from EvolveTurn:\n%+v\n%+v", i, p.EventType(), inPlace, st)
			}
			sess = EvolveSession(sess, p)
			if p.EventAggregate() == events.AggProfile {
				id := events.KeyOf(p)
				prof[id] = EvolveProfile(prof[id], p)
			}
		}
		if !reflect.DeepEqual(st, states[0]) || !reflect.DeepEqual(prof, profiles[0]) || !reflect.DeepEqual(sess, sessions[0]) {
			t.Fatalf("replay differs:\n%+v\n%+v", st, states[0])
		}
	})
}

// seqT is a tiny deterministic outcome source for the replay property.
type seqT struct{ x uint64 }

func (s *seqT) next(n int) int {
	s.x = s.x*6364136223846793005 + 1442695040888963407
	return int((s.x >> 33) % uint64(n))
}

func driveSeeded(h *harness, r *seqT) {
	h.start(h.selectDefault(), "direct")
	for step := 0; step < 400; step++ {
		switch h.next.Kind {
		case NextWait:
			h.resume()
			continue
		case NextCall:
		default:
			return
		}
		h.now += int64(r.next(40000))
		if r.next(6) == 0 {
			h.outcome(Outcome{OK: true})
			continue
		}
		reason := allReasons[r.next(len(allReasons))]
		if r.next(2) == 0 {
			reason = ReasonOverloaded // exercise whole-chain retries and the overload notice
		}
		h.outcome(Outcome{Reason: reason, RetryAfterMs: int64(r.next(2)) * 5000, OutputStarted: r.next(20) == 0})
	}
}
