package projections

import (
	"errors"
	"reflect"
	"testing"
)

// The open turns follow each turn's session and phase: a turn opening,
// a second one in the same session, one started again in another
// session, and turns finishing, with the count of each (agent, session)
// exact after every step.
func TestOpenTurns_CountPerSession(t *testing.T) {
	o := openTurns{turn: map[key]string{}, count: map[key]int{}}
	t1, t2, t3 := key{"main", "t1"}, key{"main", "t2"}, key{"ops", "t1"}
	for _, step := range []struct {
		name    string
		turn    key
		session string
		open    bool
		want    map[key]int
	}{
		{"t1 starts in s1", t1, "s1", true, map[key]int{{"main", "s1"}: 1}},
		{"t1 waits in s1", t1, "s1", true, map[key]int{{"main", "s1"}: 1}},
		{"t2 starts in s1", t2, "s1", true, map[key]int{{"main", "s1"}: 2}},
		{"ops' t1 starts in s1", t3, "s1", true, map[key]int{{"main", "s1"}: 2, {"ops", "s1"}: 1}},
		{"t1 starts again in s2", t1, "s2", true, map[key]int{{"main", "s1"}: 1, {"main", "s2"}: 1, {"ops", "s1"}: 1}},
		{"t2 stops", t2, "s1", false, map[key]int{{"main", "s2"}: 1, {"ops", "s1"}: 1}},
		{"t2 folds again, finished", t2, "s1", false, map[key]int{{"main", "s2"}: 1, {"ops", "s1"}: 1}},
		{"t1 succeeds", t1, "s2", false, map[key]int{{"ops", "s1"}: 1}},
		{"ops' t1 is switched", t3, "s1", false, map[key]int{}},
	} {
		o.set(step.turn, step.session, step.open)
		if !reflect.DeepEqual(o.count, step.want) {
			t.Fatalf("after %s: counts %v, want %v", step.name, o.count, step.want)
		}
	}
	if len(o.turn) != 0 {
		t.Fatalf("open turns %v left, want none", o.turn)
	}
}

// The open turns read stay across catch-ups while each starts from the
// checkpoint the one before reached; they are forgotten by a catch-up
// that failed or one starting from another checkpoint.
func TestOpenTurns_KeptOnlyFromTheCheckpointTheyReached(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reach  uint64
		err    error
		next   uint64
		loaded bool
	}{
		{"succeeded, next from it", 40, nil, 40, true},
		{"succeeded, next from further (another writer)", 40, nil, 55, false},
		{"failed", 40, errors.New("disk I/O error"), 40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := openTurns{loaded: true, at: 30, turn: map[key]string{{"main", "t1"}: "s1"}, count: map[key]int{{"main", "s1"}: 1}}
			o.begin(30, &keyedRows{})
			o.end(tc.reach, tc.err)
			o.begin(tc.next, &keyedRows{})
			if o.loaded != tc.loaded || (o.count[key{"main", "s1"}] == 1) != tc.loaded {
				t.Fatalf("loaded %v with counts %v, want loaded %v", o.loaded, o.count, tc.loaded)
			}
		})
	}
}
