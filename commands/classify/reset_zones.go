package classify

import "time"

// Zones with daylight saving time named in reset texts ("resets 10pm
// (America/New_York)", "resets 3pm (Europe/Berlin)"), by the rule each
// region has followed since 2007 (US, Canada) and 1996 (EU), computed here
// without a zone database so the classifier stays pure: the offset on the
// reset's date is the standard offset, or one hour more inside the
// region's summer time.
type dstRule int

const (
	dstUS dstRule = iota + 1 // second Sunday of March 02:00 local to first Sunday of November 02:00 local
	dstEU                    // last Sunday of March 01:00 UTC to last Sunday of October 01:00 UTC
	dstAU                    // first Sunday of October 02:00 local to first Sunday of April 03:00 local (southern summer)
)

type dstZone struct {
	std  int // standard offset, seconds east of UTC
	rule dstRule
}

var dstZones = map[string]dstZone{
	"america/new_york": {-5 * 3600, dstUS}, "america/detroit": {-5 * 3600, dstUS}, "america/toronto": {-5 * 3600, dstUS},
	"us/eastern": {-5 * 3600, dstUS}, "america/chicago": {-6 * 3600, dstUS}, "us/central": {-6 * 3600, dstUS},
	"america/denver": {-7 * 3600, dstUS}, "us/mountain": {-7 * 3600, dstUS}, "america/los_angeles": {-8 * 3600, dstUS},
	"us/pacific": {-8 * 3600, dstUS}, "america/vancouver": {-8 * 3600, dstUS}, "america/anchorage": {-9 * 3600, dstUS},
	"europe/london": {0, dstEU}, "europe/dublin": {0, dstEU}, "europe/lisbon": {0, dstEU},
	"europe/berlin": {3600, dstEU}, "europe/paris": {3600, dstEU}, "europe/madrid": {3600, dstEU},
	"europe/rome": {3600, dstEU}, "europe/amsterdam": {3600, dstEU}, "europe/brussels": {3600, dstEU},
	"europe/vienna": {3600, dstEU}, "europe/zurich": {3600, dstEU}, "europe/stockholm": {3600, dstEU},
	"europe/oslo": {3600, dstEU}, "europe/copenhagen": {3600, dstEU}, "europe/warsaw": {3600, dstEU},
	"europe/prague": {3600, dstEU}, "europe/budapest": {3600, dstEU}, "europe/athens": {2 * 3600, dstEU},
	"europe/helsinki": {2 * 3600, dstEU}, "europe/kyiv": {2 * 3600, dstEU}, "europe/kiev": {2 * 3600, dstEU},
	"europe/bucharest": {2 * 3600, dstEU},
	"australia/sydney": {10 * 3600, dstAU}, "australia/melbourne": {10 * 3600, dstAU}, "australia/canberra": {10 * 3600, dstAU},
	"australia/hobart": {10 * 3600, dstAU}, "australia/adelaide": {34200, dstAU},
}

// offsetAt is the zone's offset for the local wall time y-mo-d h:mi.
func (z dstZone) offsetAt(y int, mo time.Month, d, h, mi int) int {
	std := time.FixedZone("", z.std)
	at := time.Date(y, mo, d, h, mi, 0, 0, std) // as if standard time
	summer := false
	switch z.rule {
	case dstUS:
		start := time.Date(y, time.March, nthSunday(y, time.March, 2), 2, 0, 0, 0, std)
		end := time.Date(y, time.November, nthSunday(y, time.November, 1), 1, 0, 0, 0, std) // 02:00 daylight
		summer = !at.Before(start) && at.Before(end)
	case dstEU:
		start := time.Date(y, time.March, lastSunday(y, time.March), 1, 0, 0, 0, time.UTC)
		end := time.Date(y, time.October, lastSunday(y, time.October), 1, 0, 0, 0, time.UTC)
		summer = !at.Before(start) && at.Before(end)
	case dstAU:
		end := time.Date(y, time.April, nthSunday(y, time.April, 1), 2, 0, 0, 0, std)       // 03:00 daylight
		start := time.Date(y, time.October, nthSunday(y, time.October, 1), 2, 0, 0, 0, std) // 02:00 standard
		summer = at.Before(end) || !at.Before(start)
	}
	if summer {
		return z.std + 3600
	}
	return z.std
}

// nthSunday is the day of month of the n-th Sunday of mo in y.
func nthSunday(y int, mo time.Month, n int) int {
	first := time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC).Weekday()
	return 1 + (7-int(first))%7 + 7*(n-1)
}

// lastSunday is the day of month of the last Sunday of mo in y.
func lastSunday(y int, mo time.Month) int {
	last := time.Date(y, mo+1, 0, 0, 0, 0, 0, time.UTC)
	return last.Day() - int(last.Weekday())
}
