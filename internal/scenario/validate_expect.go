package scenario

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/policy"
)

// attemptKinds are the attempt kinds attempt_kinds may name
// (AttemptStarted.kind).
var attemptKinds = []policy.AttemptKind{policy.KindFirst, policy.KindRetry, policy.KindRotation,
	policy.KindFallback, policy.KindProbe, policy.KindChainRetry, policy.KindLiveSwitch, policy.KindTransportRecovery}

func (v *validator) turnExpect(path string, e *TurnExpect) {
	switch e.Outcome {
	case "", "succeeded", "exhausted", "stopped", "switched", "unfinished":
	default:
		v.add(path+".outcome", fmt.Sprintf("%q is not succeeded|exhausted|stopped|switched|unfinished", e.Outcome))
	}
	if e.AnsweredBy != "" && e.AnsweredBy != None {
		v.model(path+".answered_by", e.AnsweredBy)
	}
	v.models(path+".chain", e.Chain)
	v.models(path+".tried_candidates", e.TriedCandidates)
	if e.AttemptKinds != nil {
		for i, k := range *e.AttemptKinds {
			if !validKind(k) {
				v.add(fmt.Sprintf("%s.attempt_kinds[%d]", path, i), fmt.Sprintf("%q is not %s", k, kindList()))
			}
		}
	}
	v.time(path+".soonest_cooldown_expiry", e.SoonestCooldownExpiry)
	v.time(path+".answered_at", e.AnsweredAt)
	v.profiles(path+".profiles", e.Profiles)
	if e.Session != nil {
		v.session(path+".session", *e.Session)
	}
}

// models checks a list of provider/model.
func (v *validator) models(path string, l *[]string) {
	if l == nil {
		return
	}
	for i, m := range *l {
		v.model(fmt.Sprintf("%s[%d]", path, i), m)
	}
}

func validKind(k string) bool {
	for _, x := range attemptKinds {
		if string(x) == k {
			return true
		}
	}
	return false
}

func kindList() string {
	s := make([]string, len(attemptKinds))
	for i, k := range attemptKinds {
		s[i] = string(k)
	}
	return strings.Join(s, "|")
}

// time adds a problem at path when an expected time is not +<duration>,
// RFC 3339 or none.
func (v *validator) time(path string, tv *string) {
	if tv == nil {
		return
	}
	if _, ok := parseExpectTime(*tv, time.Time{}); !ok {
		v.add(path, fmt.Sprintf("%q is not +<duration>, RFC 3339 or none", *tv))
	}
}

func (v *validator) profiles(path string, m map[string]ProfileExpect) {
	for _, id := range sortedKeys(m) {
		p := m[id]
		v.expectedProfile(path+"."+id, id)
		v.time(path+"."+id+".cooldownUntil", p.CooldownUntil)
		v.time(path+"."+id+".disabledUntil", p.DisabledUntil)
		v.time(path+"."+id+".blockedUntil", p.BlockedUntil)
		v.time(path+"."+id+".lastUsed", p.LastUsed)
	}
}

func (v *validator) sessions(path string, m map[string]SessionExpect) {
	for _, k := range sortedKeys(m) {
		v.session(path+"."+k, m[k])
	}
}

// session checks a session expectation's closed sets (source, pin_source)
// and models.
func (v *validator) session(path string, s SessionExpect) {
	for _, f := range []struct {
		name string
		m    *string
	}{{"model", s.Model}, {"origin", s.Origin}, {"notice_selected", s.NoticeSelected}, {"notice_active", s.NoticeActive}} {
		if f.m != nil && absent(*f.m) != "" {
			v.model(path+"."+f.name, *f.m)
		}
	}
	if s.Source != nil {
		switch absent(*s.Source) {
		case "", "user", "default", "auto", "legacy", "cron":
		default:
			v.add(path+".source", fmt.Sprintf("%q is not user|default|auto|legacy|cron|none", *s.Source))
		}
	}
	if s.PinSource != nil {
		switch absent(*s.PinSource) {
		case "", string(policy.PinAuto), string(policy.PinUser):
		default:
			v.add(path+".pin_source", fmt.Sprintf("%q is not auto|user|none", *s.PinSource))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
