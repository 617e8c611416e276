package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fledger/fledger/engine"
)

// errNotAge: parseAge was given text that is neither days nor a
// duration.
var errNotAge = errors.New("not an age")

// parseAge reads a session-maintenance age as OpenClaw's pruneAfter is
// written: a number of days ("30", "30d", "1.5d") or a Go duration
// ("720h", "90m"), at least least (the flag's minimum).
func parseAge(flag, s string, least time.Duration) (time.Duration, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimSuffix(t, "d")
	if n, err := strconv.ParseFloat(num, 64); err == nil && num != "" && strings.Trim(num, "0123456789.") == "" {
		d := n * float64(24*time.Hour)
		if math.IsNaN(d) || d < float64(least) || d > float64(math.MaxInt64) {
			return 0, fmt.Errorf("%s %q: an age is at least %s and at most %d days", flag, s, ageString(least), int64(math.MaxInt64/int64(24*time.Hour)))
		}
		return time.Duration(d), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w: give days (30, 30d) or a duration (720h, 90m)", flag, s, errNotAge)
	}
	if d < least {
		return 0, fmt.Errorf("%s %q: an age is at least %s", flag, s, ageString(least))
	}
	return d, nil
}

// ageString renders an age as parseAge reads it: whole days as "30d",
// else a duration without its zero tail ("36h", "1h30m").
func ageString(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// idleText says how long a session has been idle in days and hours
// ("279d 10h"), or hours and minutes under a day ("5h 3m").
func idleText(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d >= day:
		return fmt.Sprintf("%dd %dh", d/day, (d%day)/time.Hour)
	case d >= time.Hour:
		return fmt.Sprintf("%dh %dm", d/time.Hour, (d%time.Hour)/time.Minute)
	}
	return d.Truncate(time.Second).String()
}

// parsePruneAge is parseAge for an age to prune sessions after: at least
// engine.MinPruneAfter (below it a turn started on a session that is
// being pruned would not be ordered against the prune).
func parsePruneAge(flag, s string) (time.Duration, error) {
	return parseAge(flag, s, engine.MinPruneAfter)
}
