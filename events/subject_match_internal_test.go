package events

import "testing"

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		filter, subject string
		want            bool
	}{
		{"fledger.a.profile.p", "fledger.a.profile.p", true},
		{"fledger.a.profile.p", "fledger.a.profile.q", false},
		{"fledger.a.*.p", "fledger.a.profile.p", true},
		{"fledger.a.*.p", "fledger.a.profile.q", false},
		{"fledger.a.*", "fledger.a.profile.p", false},
		{"fledger.a.>", "fledger.a.profile.p", true},
		{"fledger.a.>", "fledger.a", false},
		{"fledger.*.profile.>", "fledger.b.profile.p", true},
		{"fledger.*.profile.>", "fledger.b.turn.p", false},
		{"fledger.a.profile.p.x", "fledger.a.profile.p", false},
		{"fledger.a.profile", "fledger.a.profile.p", false},
		{">", "fledger.a.profile.p", true},
	} {
		if got := subjectMatches(c.filter, c.subject); got != c.want {
			t.Errorf("subjectMatches(%q, %q) = %v, want %v", c.filter, c.subject, got, c.want)
		}
	}
}

func TestHasWildcard(t *testing.T) {
	for f, want := range map[string]bool{
		"fledger.a.profile.p": false, "fledger.a.*.p": true, "fledger.a.>": true, "fledger.a*.b": false,
	} {
		if got := hasWildcard(f); got != want {
			t.Errorf("hasWildcard(%q) = %v, want %v", f, got, want)
		}
	}
}
