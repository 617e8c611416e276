package events_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"

	"github.com/fledger/fledger/events"
)

func TestSubject_KeysCannotAddTokensOrWildcards(t *testing.T) {
	keys := []struct{ key, token string }{
		{"openai:user@example.com", "openai:user@example%2Ecom"},
		{"a.b", "a%2Eb"},
		{"*", "%2A"},
		{">", "%3E"},
		{"a b", "a%20b"},
		{"a\tb", "a%09b"},
		{"100%", "100%25"},
		{"$JS", "%24JS"},
		{"é✓", "%C3%A9%E2%9C%93"},
		{strings.Repeat("é.", 100), strings.Repeat("%C3%A9%2E", 100)}, // 300 bytes
	}
	for _, k := range keys {
		subj, err := events.Subject("main", events.AggProfile, k.key)
		if err != nil {
			t.Fatalf("Subject(%q): %v", k.key, err)
		}
		if want := "fledger.main.profile." + k.token; subj != want {
			t.Fatalf("Subject(%q) = %q, want %q", k.key, subj, want)
		}
		agent, agg, key, err := events.ParseSubject(subj)
		if err != nil || agent != "main" || agg != events.AggProfile || key != k.key {
			t.Fatalf("ParseSubject(%q) = %q %q %q %v", subj, agent, agg, key, err)
		}
	}
	if len(keys[len(keys)-1].key) != 300 {
		t.Fatal("the long key must be 300 bytes")
	}
}

func TestSubject_RefusesEmptyAndOverlongParts(t *testing.T) {
	cases := []struct {
		agent, key string
		agg        events.Aggregate
		says       string
	}{
		{"main", "", events.AggProfile, "empty key"},
		{"", "k", events.AggProfile, "empty agent"},
		{"main", strings.Repeat("k", events.MaxKeyLen+1), events.AggProfile, "key is 513 bytes"},
		{"main", "k", "Profile.x", "aggregate"},
	}
	for _, c := range cases {
		_, err := events.Subject(c.agent, c.agg, c.key)
		if !errors.Is(err, events.ErrInvalidSubject) || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("Subject(%q, %q, %q) error %v, want ErrInvalidSubject saying %q", c.agent, c.agg, c.key, err, c.says)
		}
	}
}

func TestDecodeToken_RefusesWhatEncodeCannotProduce(t *testing.T) {
	for _, tok := range []string{"a.b", "a*", "%2", "%zz", "%41", "a%2e", "a b"} {
		if _, err := events.DecodeToken(tok); !errors.Is(err, events.ErrInvalidSubject) {
			t.Fatalf("DecodeToken(%q) error %v, want ErrInvalidSubject", tok, err)
		}
	}
}

func TestEncodeToken_RoundTripsAndStaysOneSafeToken(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s string
		if rapid.Bool().Draw(t, "bytes") {
			s = string(rapid.SliceOf(rapid.Byte()).Draw(t, "raw"))
		} else {
			s = rapid.String().Draw(t, "text")
		}
		tok := events.EncodeToken(s)
		for _, r := range tok {
			if r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII {
				t.Fatalf("token %q of %q contains %q", tok, s, r)
			}
		}
		back, err := events.DecodeToken(tok)
		if err != nil || back != s {
			t.Fatalf("DecodeToken(EncodeToken(%q)) = %q, %v", s, back, err)
		}
	})
}
