package projections

import (
	"sort"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// The incident viewer's timeline (GET /v1/timeline, issue 21): one
// agent's auth-profile windows and turn marks over a time range. The
// window derivation ([ProfileTrack]) and the outcome classes
// ([Classify]) live here so that the profile_windows and turns tables
// fold them incrementally and replay.ReadRange (the reference that reads
// the stream from sequence 1) derives them with the same code.

// Turn outcomes of a [TurnMark] (and of a what-if path's class): how a
// turn ended, telling a first-try answer from a rotation and a fallback.
const (
	// ClassFirstTry: succeeded on the first attempt.
	ClassFirstTry = "first_try"
	// ClassRotated: succeeded on the requested model after more than one
	// attempt (another auth profile, or a same-profile retry).
	ClassRotated = "rotated"
	// ClassFellBack: succeeded on another model than the requested one.
	ClassFellBack  = "fell_back"
	ClassExhausted = "exhausted"
	ClassStopped   = "stopped"
	ClassSwitched  = "switched"
	// ClassRunning: no end recorded (yet).
	ClassRunning = "running"
)

// Classify names a turn's outcome from its end (succeeded | exhausted |
// stopped | switched | unfinished), its attempts, and the model it
// requested and the one that answered.
func Classify(end string, attempts int, requested, answered string) string {
	switch end {
	case OutcomeSucceeded:
		switch {
		case answered != requested:
			return ClassFellBack
		case attempts <= 1:
			return ClassFirstTry
		}
		return ClassRotated
	case OutcomeExhausted:
		return ClassExhausted
	case OutcomeStopped:
		return ClassStopped
	case OutcomeSwitched:
		return ClassSwitched
	}
	return ClassRunning
}

// Profile window states of a [ProfileWindow], one per window kind.
const (
	WindowCooldown = "cooldown"
	WindowDisabled = "disabled"
	WindowBlocked  = "blocked"
)

// windowStates are the states by window kind (profile_windows.kind).
var windowStates = [3]string{WindowCooldown, WindowDisabled, WindowBlocked}

// Default and largest number of turns a [RangeTimeline] holds.
const (
	DefaultRangeTurns = 10000
	MaxRangeTurns     = 50000
)

// TimeLayout is how the timeline writes times: RFC 3339, UTC,
// milliseconds always.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime is t as the timeline writes times.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// FormatMs is Unix ms as the timeline writes times.
func FormatMs(ms int64) string { return FormatTime(time.UnixMilli(ms)) }

// DefaultSince is the since (Unix ms) of a range asked with its until
// alone: an hour before it, and not before the Unix epoch, as a since
// asked for is not (ledger times are Unix milliseconds).
func DefaultSince(until int64) int64 { return max(until-time.Hour.Milliseconds(), 0) }

// RangeTimeline is one agent's profile windows and turns over a time
// range (GET /v1/timeline): what the incident viewer draws. Times are RFC
// 3339 UTC with milliseconds; an absent one is "".
type RangeTimeline struct {
	Agent       string        `json:"agent"`
	Since       string        `json:"since,omitempty"`
	Until       string        `json:"until,omitempty"`
	LedgerFirst string        `json:"ledger_first,omitempty"`
	LedgerLast  string        `json:"ledger_last,omitempty"`
	LastSeq     uint64        `json:"last_seq"`
	Profiles    []ProfileLane `json:"profiles"`
	Turns       []TurnMark    `json:"turns"`
	Truncated   bool          `json:"truncated"`
}

// ProfileLane is one auth profile's non-ready windows in the range.
type ProfileLane struct {
	ProfileID string          `json:"profile_id"`
	Provider  string          `json:"provider"`
	Windows   []ProfileWindow `json:"windows"`
}

// ProfileWindow is one cooldown, disable or provider block as recorded:
// From is the time of the event that set it, Until its recorded deadline,
// EndedAt when it really ended (the event that cleared or replaced it
// early, ClearedSeq; else Until; "" while still active at the last event).
type ProfileWindow struct {
	State      string `json:"state"`
	Reason     string `json:"reason"`
	Model      string `json:"model"`
	Source     string `json:"source,omitempty"`
	From       string `json:"from"`
	Until      string `json:"until"`
	EndedAt    string `json:"ended_at,omitempty"`
	SetSeq     uint64 `json:"set_seq"`
	ClearedSeq uint64 `json:"cleared_seq"`

	win
}

// win is a window's position and times as folded: Unix ms (ended 0 =
// not ended by an event yet), its kind (index of [windowStates]), the
// event that set it (setSeq, setIdx: commit sequence and index in the
// commit) and the one that ended it (closeSeq 0: none yet).
type win struct {
	from, until, ended int64
	kind               int
	setIdx, closeIdx   int
	closeSeq           uint64
}

// TurnMark is one turn started in the range.
type TurnMark struct {
	TurnID         string `json:"turn_id"`
	Session        string `json:"session"`
	Outcome        string `json:"outcome"`
	Reason         string `json:"reason,omitempty"`
	StartedAt      string `json:"started_at"`
	EndedAt        string `json:"ended_at,omitempty"`
	RequestedModel string `json:"requested_model"`
	FinalModel     string `json:"final_model"`
	FinalProfile   string `json:"final_profile"`
	Attempts       int    `json:"attempts"`
	StartSeq       uint64 `json:"start_seq"`
	EndSeq         uint64 `json:"end_seq"`
}

// ProfileTrack follows one auth profile's windows through its events:
// its folded [policy.ProfileState] and the window of each kind it holds
// open.
type ProfileTrack struct {
	ID, Provider string
	st           policy.ProfileState
	open         [3]*ProfileWindow // by kind: cooldown, disabled, blocked
}

// NewProfileTrack starts following profile id.
func NewProfileTrack(id string) *ProfileTrack { return &ProfileTrack{ID: id} }

// windowOf is the window of kind k that state s holds (false: none). It
// is a value: most events leave a profile's windows as they are, and only
// a window that opens is kept (allocated).
func windowOf(s *policy.ProfileState, k int) (ProfileWindow, bool) {
	w := ProfileWindow{State: windowStates[k]}
	w.kind = k
	switch {
	case k == 0 && s.CooldownUntil > 0:
		w.Reason, w.Model, w.until = s.CooldownReason, s.CooldownModel, s.CooldownUntil
	case k == 1 && s.DisabledUntil > 0:
		w.Reason, w.until = s.DisabledReason, s.DisabledUntil
	case k == 2 && s.BlockedUntil > 0:
		w.Reason, w.Model, w.Source, w.until = s.BlockedReason, s.BlockedModel, s.BlockedSource, s.BlockedUntil
	default:
		return w, false
	}
	return w, true
}

func sameWindow(a, b *ProfileWindow) bool {
	return a.until == b.until && a.Reason == b.Reason && a.Model == b.Model && a.Source == b.Source
}

// Fold applies one profile event, event idx of the commit at seq, at
// time at (Unix ms): a window that changes or goes ends (early, when
// before its deadline), a new one opens. It returns the windows ended
// and opened, in that order by kind.
func (p *ProfileTrack) Fold(seq uint64, idx int, at int64, data events.Payload) (ended, opened []*ProfileWindow) {
	p.st = policy.EvolveProfile(p.st, data)
	if p.st.Provider != "" {
		p.Provider = p.st.Provider
	}
	for k := range p.open {
		cur := p.open[k]
		next, ok := windowOf(&p.st, k)
		if cur != nil && ok && sameWindow(cur, &next) {
			continue
		}
		if cur != nil {
			cur.ended, cur.closeSeq, cur.closeIdx = cur.until, seq, idx
			if at < cur.until {
				cur.ended, cur.ClearedSeq = at, seq
			}
			ended = append(ended, cur)
			p.open[k] = nil
		}
		if ok && next.until > at {
			w := new(ProfileWindow) // next stays on the stack
			*w = next
			w.from, w.SetSeq, w.setIdx = at, seq, idx
			p.open[k] = w
			opened = append(opened, w)
		}
	}
	return ended, opened
}

// Open are the windows the profile holds open, by kind.
func (p *ProfileTrack) Open() []*ProfileWindow {
	var out []*ProfileWindow
	for _, w := range p.open {
		if w != nil {
			out = append(out, w)
		}
	}
	return out
}

// laneWindow is w as a lane shows it, when it overlaps [since, until]; a
// window not ended by an event whose deadline is at or before lastAt
// (the ledger's last event, of any agent) ended at its deadline.
func laneWindow(w *ProfileWindow, since, until, lastAt int64) (ProfileWindow, bool) {
	x := *w
	if x.ended == 0 && x.until <= lastAt {
		x.ended = x.until
	}
	end := x.ended
	if end == 0 {
		end = x.until
	}
	if x.from > until || end < since {
		return x, false
	}
	x.From, x.Until = FormatMs(x.from), FormatMs(x.until)
	if x.ended > 0 {
		x.EndedAt = FormatMs(x.ended)
	}
	return x, true
}

// sortWindows orders a lane's windows by the time and event that set
// them; windows set by the same event, the ended ones first in the order
// they ended, then the open ones by kind.
func sortWindows(ws []ProfileWindow) {
	sort.Slice(ws, func(i, j int) bool {
		a, b := &ws[i].win, &ws[j].win
		switch {
		case a.from != b.from:
			return a.from < b.from
		case ws[i].SetSeq != ws[j].SetSeq:
			return ws[i].SetSeq < ws[j].SetSeq
		case (a.closeSeq == 0) != (b.closeSeq == 0):
			return a.closeSeq != 0
		case a.closeSeq != b.closeSeq:
			return a.closeSeq < b.closeSeq
		case a.closeIdx != b.closeIdx:
			return a.closeIdx < b.closeIdx
		}
		return a.kind < b.kind
	})
}

// Lane is the lane of profile id (provider) holding the windows ws that
// overlap [since, until], in order; lastAt is the ledger's last event
// time (Unix ms).
func Lane(id, provider string, ws []*ProfileWindow, since, until, lastAt int64) ProfileLane {
	l := ProfileLane{ProfileID: id, Provider: provider, Windows: []ProfileWindow{}}
	for _, w := range ws {
		if x, ok := laneWindow(w, since, until, lastAt); ok {
			l.Windows = append(l.Windows, x)
		}
	}
	sortWindows(l.Windows)
	return l
}

// SortLanes orders lanes by provider, then profile id.
func SortLanes(ls []ProfileLane) {
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].Provider != ls[j].Provider {
			return ls[i].Provider < ls[j].Provider
		}
		return ls[i].ProfileID < ls[j].ProfileID
	})
}
