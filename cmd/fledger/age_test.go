package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"30d", 30 * 24 * time.Hour, ""},
		{"30", 30 * 24 * time.Hour, ""},
		{" 7d ", 7 * 24 * time.Hour, ""},
		{"1.5d", 36 * time.Hour, ""},
		{"720h", 720 * time.Hour, ""},
		{"90m", 90 * time.Minute, ""},
		{"0", 0, "at least 1ms"},
		{"0d", 0, "at least 1ms"},
		{"-3d", 0, "not an age"},
		{"-3h", 0, "at least 1ms"},
		{"500us", 0, "at least 1ms"},
		{"d", 0, "not an age"},
		{"", 0, "not an age"},
		{"1e3", 0, "not an age"},
		{"NaNd", 0, "not an age"},
		{"thirty days", 0, "not an age"},
		{"1e400d", 0, "not an age"},
		{"99999999d", 0, "at most"},
	} {
		got, err := parseAge("--prune-after", tc.in, time.Millisecond)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--prune-after") {
				t.Errorf("%q: got %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for d, want := range map[time.Duration]string{
		30 * 24 * time.Hour: "30d", 36 * time.Hour: "36h", 90 * time.Minute: "1h30m",
		90 * time.Second: "1m30s", 2 * time.Second: "2s", 1500 * time.Millisecond: "1.5s",
	} {
		if got := ageString(d); got != want {
			t.Errorf("ageString(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestIdleText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		279*24*time.Hour + 10*time.Hour + 59*time.Minute: "279d 10h",
		5*time.Hour + 3*time.Minute + 9*time.Second:      "5h 3m",
		45*time.Second + 300*time.Millisecond:            "45s",
	} {
		if got := idleText(d); got != want {
			t.Errorf("idleText(%v) = %q, want %q", d, got, want)
		}
	}
}
