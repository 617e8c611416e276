package classify

import (
	"testing"
	"time"
)

// The summer-time rules of dstZones at their transitions (2026: US from
// Sunday March 8 02:00 to Sunday November 1 02:00 local; EU from Sunday
// March 29 01:00 UTC to Sunday October 25 01:00 UTC; Sydney until Sunday
// April 5 03:00 and from Sunday October 4 02:00 local).
func TestDSTZones_OffsetsAtTheTransitions(t *testing.T) {
	cases := []struct {
		zone       string
		mo         time.Month
		d, h, mi   int
		wantOffset int // hours east of UTC
	}{
		{"america/new_york", time.March, 8, 1, 59, -5},
		{"america/new_york", time.March, 8, 3, 0, -4},
		{"america/new_york", time.October, 31, 23, 0, -4},
		{"america/new_york", time.November, 1, 3, 0, -5},
		{"america/los_angeles", time.July, 4, 12, 0, -7},
		{"europe/berlin", time.March, 29, 1, 59, 1}, // 00:59 UTC
		{"europe/berlin", time.March, 29, 3, 0, 2},
		{"europe/london", time.October, 25, 0, 59, 1}, // 00:59 standard = 23:59 UTC the day before
		{"europe/london", time.October, 25, 2, 0, 0},
		{"australia/sydney", time.April, 5, 1, 0, 11},
		{"australia/sydney", time.April, 5, 4, 0, 10},
		{"australia/sydney", time.October, 4, 1, 59, 10},
		{"australia/sydney", time.October, 4, 3, 0, 11},
	}
	for _, c := range cases {
		z := dstZones[c.zone]
		if got := z.offsetAt(2026, c.mo, c.d, c.h, c.mi) / 3600; got != c.wantOffset {
			t.Errorf("%s 2026-%02d-%02d %02d:%02d: offset %+d h, want %+d h", c.zone, c.mo, c.d, c.h, c.mi, got, c.wantOffset)
		}
	}
}
