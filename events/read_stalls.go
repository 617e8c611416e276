package events

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// An ordered read whose consumer stops delivering goes on with direct
// gets (scanOrdered). Each such read waited firstMsgWait, or the store's
// timeout, first: on a healthy server it never happens, and a rate of
// them (a replica or the meta leader struggling) is worth an operator's
// look. So the store counts them ([ReadStalls]) and logs them, once per
// readStallLogEvery at most, with how many there were since the last line.

// readStallLogEvery spaces the store's log lines about stalled reads (a
// variable for tests).
var readStallLogEvery = 10 * time.Second

// readStalls counts a store's stalled ordered reads.
type readStalls struct {
	total atomic.Uint64

	mu       sync.Mutex
	lastLog  time.Time
	unlogged uint64 // stalls since the last line
	// last is the latest stall not logged yet; flush logs it (with
	// unlogged) once readStallLogEvery has passed since the last line, so
	// a burst's tail is not left unsaid until the next stall.
	last   stallAt
	flush  *time.Timer
	closed bool
}

// stallAt is where a stalled read went on with direct gets.
type stallAt struct {
	log   *slog.Logger
	from  uint64
	first bool
}

// note counts a stalled read that goes on with direct gets from sequence
// at (first: it had delivered nothing yet) and logs it unless a line was
// written within readStallLogEvery; then it is logged, with the others
// of that time, when readStallLogEvery has passed.
func (r *readStalls) note(log *slog.Logger, at uint64, first bool) {
	r.total.Add(1)
	if log == nil {
		return
	}
	now := time.Now()
	r.mu.Lock()
	r.unlogged++
	r.last = stallAt{log: log, from: at, first: first}
	if wait := readStallLogEvery - now.Sub(r.lastLog); !r.lastLog.IsZero() && wait > 0 {
		if r.flush == nil && !r.closed {
			r.flush = time.AfterFunc(wait, r.flushLine)
		}
		r.mu.Unlock()
		return
	}
	r.logLocked(now)
}

// flushLine logs the stalls noted since the last line, if any.
func (r *readStalls) flushLine() {
	r.mu.Lock()
	r.flush = nil
	if r.unlogged == 0 || r.closed {
		r.mu.Unlock()
		return
	}
	r.logLocked(time.Now())
}

// logLocked writes the line for the stalls since the last one and
// unlocks r.mu.
func (r *readStalls) logLocked(now time.Time) {
	n, l := r.unlogged, r.last
	r.lastLog, r.unlogged = now, 0
	if r.flush != nil { // this line says what it was due to say
		r.flush.Stop()
		r.flush = nil
	}
	r.mu.Unlock()
	what := "delivered nothing"
	if !l.first {
		what = "stopped delivering"
	}
	l.log.Warn("events: an ordered read's consumer "+what+"; the read goes on with direct gets (a replica or the meta leader slow to answer: see docs/operations.md, \"Health and monitoring\")",
		"from_seq", l.from, "stalled_reads", n, "stalled_reads_total", r.total.Load())
}

// close writes the line still due, if any: the store is closing.
func (r *readStalls) close() {
	r.mu.Lock()
	r.closed = true
	if r.flush != nil {
		r.flush.Stop()
		r.flush = nil
	}
	if r.unlogged == 0 {
		r.mu.Unlock()
		return
	}
	r.logLocked(time.Now())
}

// ReadStalls returns how many of st's ordered reads stalled and went on
// with direct gets since it opened: this package's NATS store counts them,
// looked for through wrappers ([Unwrap]); any other store answers 0.
func ReadStalls(st Store) uint64 {
	if r, ok := lookThrough[interface{ ReadStalls() uint64 }](st); ok {
		return r.ReadStalls()
	}
	return 0
}

// ReadStalls is [ReadStalls] of s.
func (s *store) ReadStalls() uint64 { return s.stalls.total.Load() }
