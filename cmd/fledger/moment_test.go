package main

import (
	"strings"
	"testing"
	"time"
)

func TestMoment_ParseTimesAndRefuseSequences(t *testing.T) {
	now := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	since := moment{flag: "--since", relative: true, seq: "--from-seq"}
	at := moment{flag: "--at"}
	for _, c := range []struct {
		name string
		m    moment
		in   string
		want time.Time
		err  string
	}{
		{"empty is the zero time", since, "", time.Time{}, ""},
		{"RFC 3339", since, "2026-03-02T09:05:00Z", time.Date(2026, 3, 2, 9, 5, 0, 0, time.UTC), ""},
		{"RFC 3339 in lower case", at, "2026-03-02t09:00:12z", time.Date(2026, 3, 2, 9, 0, 12, 0, time.UTC), ""},
		{"lower-case t with an offset", since, "2026-03-02t10:00:12.5+01:00", time.Date(2026, 3, 2, 9, 0, 12, 500e6, time.UTC), ""},
		{"a duration stays lower case", since, "2h", time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), ""},
		{"RFC 3339 with an offset and ms", at, "2026-03-02T10:05:00.250+01:00", time.Date(2026, 3, 2, 9, 5, 0, 250e6, time.UTC), ""},
		{"duration before now", since, "90m", time.Date(2026, 3, 2, 12, 30, 0, 0, time.UTC), ""},
		{"a sequence names the sequence flag", since, "120", time.Time{}, "--since 120: not a time; a stream sequence is --from-seq 120"},
		{"0 is a sequence, not a zero duration", since, "0", time.Time{}, "--since 0: not a time; a stream sequence is --from-seq 0"},
		{"no sequence flag there", at, "7", time.Time{}, "--at 7: not a time; want an RFC 3339 time, e.g. 2026-01-06T10:40:00Z"},
		{"a duration where only times are taken", at, "2h", time.Time{}, "--at 2h: not a time; want an RFC 3339 time, e.g. 2026-01-06T10:40:00Z"},
		{"a negative number", since, "-5", time.Time{}, "--since -5: not a time; want an RFC 3339 time (2026-01-06T10:40:00Z) or a duration before now (15m)"},
		{"a negative duration", since, "-5m", time.Time{}, "--since -5m: not a time; want an RFC 3339 time (2026-01-06T10:40:00Z) or a duration before now (15m)"},
		{"a value with a space is quoted", at, "next week", time.Time{}, `--at "next week": not a time; want an RFC 3339 time, e.g. 2026-01-06T10:40:00Z`},
		{"another command's sequence", moment{flag: "--until", seq: "fledger events --to-seq"}, "9", time.Time{}, "--until 9: not a time; this command takes no stream sequence, fledger events --to-seq 9 does"},
		{"neither", since, "yesterday", time.Time{}, "--since yesterday: not a time; want an RFC 3339 time (2026-01-06T10:40:00Z) or a duration before now (15m)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.m.parse(c.in, now)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !got.Equal(c.want) {
				t.Fatalf("%v, %v; want %v", got, err, c.want)
			}
		})
	}
}

// Every time flag refuses a stream sequence before anything is opened,
// naming the flag that takes one; no ledger is needed to be told.
func TestMomentFlags_RefuseASequence(t *testing.T) {
	data := t.TempDir()
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"export", "--since", "120"}, "--since 120: not a time; a stream sequence is --from-seq 120"},
		{[]string{"turns", "--since", "120"}, "--since 120: not a time; this command takes no stream sequence, fledger events --from-seq 120 does"},
		{[]string{"export", "--since", "-5"}, "--since -5: not a time; want an RFC 3339 time (2026-01-06T10:40:00Z) or a duration before now (15m)"},
		{[]string{"decisions", "--since", "5"}, "--since 5: not a time; a stream sequence is --from-seq 5"},
		{[]string{"replay", "--until", "13"}, "--until 13: not a time; a stream sequence is --to-seq 13"},
		{[]string{"sessions", "--at", "120"}, "--at 120: not a time; this command takes no stream sequence, fledger replay --out FILE --to-seq 120 does"},
		{[]string{"stats", "--now", "13"}, "--now 13: not a time; want an RFC 3339 time, e.g. 2026-01-06T10:40:00Z"},
		{[]string{"explain", "--session", "s", "--since", "3"}, "--since 3: not a time; this command takes no stream sequence, fledger events --from-seq 3 does"},
		{[]string{"explain", "--session", "s", "--until", "120"}, "--until 120: not a time; this command takes no stream sequence, fledger events --to-seq 120 does"},
		{[]string{"explain", "--session", "s", "--since", "yesterday"}, "--since yesterday: not a time; want an RFC 3339 time, e.g. 2026-01-06T10:40:00Z"},
		{[]string{"classify", "--now", "1"}, "--now 1: not a time; want an RFC 3339 time, e.g. 2026-01-06T10:40:00Z"},
		{[]string{"events", "--from-seq", "5", "--to-seq", "4"}, "--to-seq 4 is before --from-seq 5"},
		{[]string{"export", "--since", "1h", "--from-seq", "3"}, "if any flags in the group [from-seq since] are set none of the others can be; [from-seq since] were all set"},
		// A deprecated spelling and its flag together: refused, not the
		// last one given.
		{[]string{"events", "--from-seq", "3", "--from", "5"}, "if any flags in the group [from from-seq] are set none of the others can be; [from from-seq] were all set"},
		{[]string{"explain", "--session", "s", "--from", "2026-03-02T09:00:00Z", "--since", "2026-03-02T09:00:00Z"}, "if any flags in the group [from since] are set none of the others can be; [from since] were all set"},
		{[]string{"explain", "--session", "s", "--to", "2026-03-02T09:00:00Z", "--until", "2026-03-02T09:00:00Z"}, "if any flags in the group [to until] are set none of the others can be; [to until] were all set"},
	} {
		_, _, err := runFledger2(t, append([]string{"--data", data}, c.args...)...)
		if err == nil || err.Error() != c.err {
			t.Errorf("%v: %v\nwant %s", c.args, err, c.err)
		}
	}
}

// The sequence flags on a two-agent ledger: events --from-seq (and its
// deprecated spelling --from) and export --from-seq are inclusive; export
// --since TIME starts at the first commit stamped at or after TIME, and
// --at shows the state at a time (stats at 14:00:31: alpha's first
// failure and beta's are both recorded, at 14:00:30).
func TestMomentFlags_SequencesInclusiveAndTimes(t *testing.T) {
	data := twoAgentLedger(t)
	run := func(args ...string) string {
		t.Helper()
		out, errOut, err := runFledger2(t, append([]string{"--data", data}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		return out
	}
	seqs := func(jsonl string) string {
		var s []string
		for _, l := range strings.Split(strings.TrimSpace(jsonl), "\n") {
			if i := strings.Index(l, `"seq":`); i >= 0 {
				s = append(s, strings.SplitN(l[i+6:], ",", 2)[0])
			}
		}
		return strings.Join(s, " ")
	}
	out := run("events", "--from-seq", "25", "--type", "TurnStarted", "--json")
	if got := seqs(out); got != "25 36" {
		t.Errorf("events --from-seq 25: seqs %s", got)
	}
	// cobra prints the deprecation through Command.Print: on stderr, or
	// where SetOut points (stdout here).
	const fromDeprecated = "Flag --from has been deprecated, use --from-seq instead\n"
	out = run("events", "--from", "25", "--type", "TurnStarted", "--json")
	if got := seqs(out); got != "25 36" || !strings.HasPrefix(out, fromDeprecated) {
		t.Errorf("events --from 25: seqs %s\n%s", got, out)
	}
	out = run("events", "--from-seq", "2", "--to-seq", "25", "--type", "TurnStarted", "--json")
	if got := seqs(out); got != "2 13 25" {
		t.Errorf("events --from-seq 2 --to-seq 25: seqs %s", got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "11 12 13 22 23 34 35 36 45 46"},
		{[]string{"--from-seq", "34"}, "34 35 36 45 46"},
		{[]string{"--from-seq", "12", "--to-seq", "35"}, "12 13 22 23 34 35"},
		{[]string{"--to-seq", "13", "--limit", "2"}, "12 13"},
		{[]string{"--from-seq", "12", "--to-seq", "35", "--limit", "2"}, "34 35"},
		{[]string{"--from-seq", "12", "--agent", "beta", "--limit", "10"}, "34 35 36 45 46"},
		{[]string{"--from-seq", "47"}, ""},
	} {
		// The table's SEQ column (the JSON record is the record type's).
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(run(append([]string{"decisions"}, c.args...)...)), "\n")[1:] {
			got = append(got, strings.Fields(l)[0])
		}
		if got := strings.Join(got, " "); got != c.want {
			t.Errorf("decisions %v: seqs %s, want %s", c.args, got, c.want)
		}
	}
	out = run("export", "--from-seq", "34")
	if got := seqs(out); got != "34 35 36 45 46" {
		t.Errorf("export --from-seq 34: seqs %s", got)
	}
	out = run("export", "--since", "2026-03-02T14:00:31Z")
	if got := seqs(out); got != "12 13 22 23 34 35 36 45 46" {
		t.Errorf("export --since 14:00:31: seqs %s", got)
	}
	out = run("explain", "--session", "slack-dm-bob", "--agent", "beta", "--from", "2026-03-02T14:00:30Z", "--json")
	if !strings.Contains(out, `"still-cooling"`) || strings.Contains(out, `"turnId": "storm"`) || !strings.HasPrefix(out, "Flag --from has been deprecated, use --since instead\n") {
		t.Errorf("explain --from:\n%.400s", out)
	}
}
