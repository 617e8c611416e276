package classify

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Reset times written in a message (source 3 of reset.go).
//
// A trigger — "reset"/"resets" (optionally "at", "on", "after" or ":"),
// "try again after|at|on", "available again at" — is followed within a few
// bytes by one of:
//
//   - an ISO date: "2026-03-06 22:19:54", "2026-03-06T22:19:54Z";
//   - a month-name date: "Feb 7, 11am", "July 3, 2026 at 2:45 PM",
//     "Sep 14th, 2026 6:43 AM", "Feb 7" (the day's start);
//   - a time of day: "5pm", "at 3:00 pm", "17:30" (the next such moment).
//
// Then an optional zone: Z, UTC, GMT, an offset ("+09:00", "UTC+9"), an
// abbreviation or a zone name in parentheses from [zoneOffsets]. Any other
// zone, or none, is read as UTC and marked ZoneUnknown: the classifier
// never reads a zone database (it is pure), and the provider's zone is
// not known. A date without a year is the next one that is not more than
// a day past now; a time of day alone is the next such moment after now.
// Both need the decision time.

// resetTriggers gates the search: only texts with one of these phrases
// are read.
var resetTriggers = newTable("reset_trigger", "reset", "try again a", "try again on", "available again at")

var (
	resetLead = regexp.MustCompile(`(?:\breset(?:s)?|\btry again|\bavailable again)(?:\s+(?:at|on|after|until))?\s*:?\s*`)
	isoDate   = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})(?:[ t](\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?`)
	monthDate = regexp.MustCompile(`^(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?(?:,?\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?)?`)
	dayTime   = regexp.MustCompile(`^(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)|^(\d{1,2}):(\d{2})\b`)
	zoneTail  = regexp.MustCompile(`^\s*(?:\(([a-z_]+(?:/[a-z_+-]+)*)\)|(z|utc|gmt)(?:\s*([+-]\d{1,2})(?::?(\d{2}))?)?\b|([+-]\d{2}):?(\d{2})\b|([a-z]{3,4})\b)`)
)

var months = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// zoneOffsets are the zones a reset text may name that have one fixed
// offset all year (seconds east of UTC): names without daylight saving
// time, and abbreviations that state which half of the year they mean.
// Zones with daylight saving time by name (America/Los_Angeles) are in
// dstZones (reset_zones.go), by their region's rule.
var zoneOffsets = map[string]int{
	"utc": 0, "gmt": 0, "z": 0, "etc/utc": 0, "etc/gmt": 0,
	"asia/seoul": 9 * 3600, "asia/tokyo": 9 * 3600, "asia/shanghai": 8 * 3600, "asia/hong_kong": 8 * 3600,
	"asia/singapore": 8 * 3600, "asia/taipei": 8 * 3600, "asia/manila": 8 * 3600, "asia/kolkata": 19800,
	"asia/calcutta": 19800, "asia/dubai": 4 * 3600, "asia/jakarta": 7 * 3600, "asia/bangkok": 7 * 3600,
	"asia/ho_chi_minh": 7 * 3600, "asia/karachi": 5 * 3600, "asia/riyadh": 3 * 3600,
	"kst": 9 * 3600, "jst": 9 * 3600, "sgt": 8 * 3600, "hkt": 8 * 3600,
	"pst": -8 * 3600, "pdt": -7 * 3600, "mst": -7 * 3600, "mdt": -6 * 3600,
	"est": -5 * 3600, "edt": -4 * 3600, "cet": 3600, "cest": 2 * 3600,
	"bst": 3600, "aest": 10 * 3600, "aedt": 11 * 3600,
}

// Two more written forms (fledger, issue 17 fresh-user pass):
//
//   - Claude's subscription limit with its reset as Unix seconds after a
//     bar: "Claude AI usage limit reached|1773190800";
//   - the Chinese providers' "将于/将在 <ISO date [time]> 重置" ("您的限额将在
//     2026-03-10 13:00:00 重置", "额度将于 2026-03-11 00:00:00 (UTC+8) 重置").
//     With no zone written it is read as China Standard Time (UTC+8, no
//     daylight saving): the providers that word their resets so — Zhipu,
//     Moonshot, DashScope — answer on Beijing time.
var (
	barEpochReset = regexp.MustCompile(`limit reached\s*\|\s*(\d{10})\b`)
	cjkReset      = regexp.MustCompile(`(?:将于|将在|于|在)\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ t]?(\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*(\(utc\+8\)|（utc\+8）|\(北京时间\)|北京时间)?\s*(?:后)?(?:重置|恢复|刷新)`)
)

// chinaStandardTime is UTC+8.
var chinaStandardTime = time.FixedZone("UTC+8", 8*3600)

// writtenReset reads the two forms above.
func writtenReset(t *text) *Reset {
	if m := barEpochReset.FindStringSubmatch(t.lower); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return &Reset{At: millis(time.Unix(sec, 0)), Source: ResetText, Field: t.field, Match: preview(m[0])}
		}
	}
	if !strings.Contains(t.lower, "重置") && !strings.Contains(t.lower, "恢复") && !strings.Contains(t.lower, "刷新") {
		return nil
	}
	m := cjkReset.FindStringSubmatch(t.lower)
	if m == nil {
		return nil
	}
	n := make([]int, 7)
	for i := 1; i <= 6; i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	if n[2] < 1 || n[2] > 12 || n[3] < 1 || n[3] > 31 || n[4] > 23 || n[5] > 59 || n[6] > 59 {
		return nil
	}
	at := time.Date(n[1], time.Month(n[2]), n[3], n[4], n[5], n[6], 0, chinaStandardTime)
	return &Reset{At: millis(at), Source: ResetText, Field: t.field, Match: preview(m[0])}
}

// textReset finds the first reset time written in t (see above).
func textReset(t *text, now time.Time) *Reset {
	if t == nil {
		return nil
	}
	if r := writtenReset(t); r != nil {
		return r
	}
	if !resetTriggers.in(&t.hits) {
		return nil
	}
	s := t.lower
	for _, m := range resetLead.FindAllStringIndex(s, 8) {
		rest := s[m[1]:]
		if len(rest) > 96 {
			rest = rest[:96]
		}
		at, n, unknown, ok := parseResetTime(rest, now)
		if !ok {
			continue
		}
		match := strings.TrimSpace(t.raw[min(m[0], len(t.raw)):min(m[1]+n, len(t.raw))])
		return &Reset{At: millis(at), Source: ResetText, Field: t.field, Match: preview(match), ZoneUnknown: unknown}
	}
	return nil
}

// parseResetTime reads a date or time at the start of s. It returns the
// moment, the bytes read and whether the zone was unknown (read as UTC).
func parseResetTime(s string, now time.Time) (time.Time, int, bool, bool) {
	var y, d, h, mi, sec int
	var mo time.Month
	yearSet, dateSet := false, false
	n := 0
	switch {
	case isoDate.MatchString(s):
		g := isoDate.FindStringSubmatch(s)
		n = len(g[0])
		y, _ = strconv.Atoi(g[1])
		m, _ := strconv.Atoi(g[2])
		mo = time.Month(m)
		d, _ = strconv.Atoi(g[3])
		h, _ = strconv.Atoi(g[4])
		mi, _ = strconv.Atoi(g[5])
		sec, _ = strconv.Atoi(g[6])
		yearSet, dateSet = true, true
	case monthDate.MatchString(s):
		g := monthDate.FindStringSubmatch(s)
		n = len(g[0])
		mo = months[g[1]]
		d, _ = strconv.Atoi(g[2])
		if g[3] != "" {
			y, _ = strconv.Atoi(g[3])
			yearSet = true
		}
		if g[4] != "" && (g[5] != "" || g[6] != "") {
			h, _ = strconv.Atoi(g[4])
			mi, _ = strconv.Atoi(g[5])
			h = meridiem(h, g[6])
		} else if g[4] != "" {
			n = len(g[0]) - len(g[4]) // a bare number after the date is not a time
		}
		dateSet = true
	case dayTime.MatchString(s):
		g := dayTime.FindStringSubmatch(s)
		n = len(g[0])
		if g[1] != "" {
			h, _ = strconv.Atoi(g[1])
			mi, _ = strconv.Atoi(g[2])
			h = meridiem(h, g[3])
		} else {
			h, _ = strconv.Atoi(g[4])
			mi, _ = strconv.Atoi(g[5])
		}
	default:
		return time.Time{}, 0, false, false
	}
	if h > 23 || mi > 59 || sec > 59 || dateSet && (d < 1 || d > 31 || mo < 1 || mo > 12) {
		return time.Time{}, 0, false, false
	}
	off, zn, known := zoneAt(s[n:])
	dz, dst := dstZoneAt(s[n:])
	if dst {
		off, known = dz.std, true
	}
	n += zn
	loc := time.FixedZone("", off)
	switch {
	case yearSet:
	case now.IsZero():
		return time.Time{}, 0, false, false // the year or day needs the decision time
	case dateSet:
		y = now.In(loc).Year()
		if time.Date(y, mo, d, h, mi, sec, 0, loc).Before(now.Add(-24 * time.Hour)) {
			y++
		}
	default:
		ln := now.In(loc)
		at := time.Date(ln.Year(), ln.Month(), ln.Day(), h, mi, 0, 0, loc)
		if !at.After(now) {
			at = at.AddDate(0, 0, 1)
		}
		if dst {
			at = time.Date(at.Year(), at.Month(), at.Day(), h, mi, 0, 0, time.FixedZone("", dz.offsetAt(at.Year(), at.Month(), at.Day(), h, mi)))
		}
		return at, n, !known, true
	}
	if dst {
		loc = time.FixedZone("", dz.offsetAt(y, mo, d, h, mi))
	}
	at := time.Date(y, mo, d, h, mi, sec, 0, loc)
	if at.Day() != d { // Feb 30
		return time.Time{}, 0, false, false
	}
	return at, n, !known, true
}

// dstZoneAt is the zone named in parentheses at the start of s when it is
// one of dstZones.
func dstZoneAt(s string) (dstZone, bool) {
	g := zoneTail.FindStringSubmatch(s)
	if g == nil || g[1] == "" {
		return dstZone{}, false
	}
	z, ok := dstZones[g[1]]
	return z, ok
}

// meridiem turns a 12-hour clock hour into 0–23 ("12am" is 0, "12pm" 12);
// without am/pm the hour is kept. An invalid hour comes back as 24.
func meridiem(h int, ampm string) int {
	switch {
	case ampm == "":
		return h
	case h < 1 || h > 12:
		return 24
	case strings.HasPrefix(ampm, "a"):
		return h % 12
	}
	return h%12 + 12
}

// zoneAt reads an optional zone at the start of s: its offset east of UTC
// in seconds, the bytes read, and whether it is known (a zone fledger
// cannot apply, or none, is UTC and unknown).
func zoneAt(s string) (int, int, bool) {
	g := zoneTail.FindStringSubmatchIndex(s)
	if g == nil {
		return 0, 0, false
	}
	sub := func(i int) string {
		if g[2*i] < 0 {
			return ""
		}
		return s[g[2*i]:g[2*i+1]]
	}
	switch {
	case sub(1) != "":
		off, ok := zoneOffsets[sub(1)]
		return off, g[1], ok
	case sub(2) != "":
		off := 0
		if hh := sub(3); hh != "" {
			hv, _ := strconv.Atoi(hh)
			mv, _ := strconv.Atoi(sub(4))
			if hv < 0 {
				mv = -mv
			}
			off = hv*3600 + mv*60
		}
		return off, g[1], true
	case sub(5) != "":
		hv, _ := strconv.Atoi(sub(5))
		mv, _ := strconv.Atoi(sub(6))
		if hv < 0 {
			mv = -mv
		}
		return hv*3600 + mv*60, g[1], true
	case sub(7) != "":
		if off, ok := zoneOffsets[sub(7)]; ok {
			return off, g[1], true
		}
	}
	return 0, 0, false
}
