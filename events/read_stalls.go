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

// readStallLogEvery spaces the store's log lines about stalled reads.
const readStallLogEvery = 10 * time.Second

// readStalls counts a store's stalled ordered reads.
type readStalls struct {
	total atomic.Uint64

	mu       sync.Mutex
	lastLog  time.Time
	unlogged uint64 // stalls since the last line
}

// note counts a stalled read that goes on with direct gets from sequence
// at (first: it had delivered nothing yet) and logs it unless a line was
// written within readStallLogEvery.
func (r *readStalls) note(log *slog.Logger, at uint64, first bool) {
	r.total.Add(1)
	if log == nil {
		return
	}
	now := time.Now()
	r.mu.Lock()
	r.unlogged++
	if !r.lastLog.IsZero() && now.Sub(r.lastLog) < readStallLogEvery {
		r.mu.Unlock()
		return
	}
	n := r.unlogged
	r.lastLog, r.unlogged = now, 0
	r.mu.Unlock()
	what := "delivered nothing"
	if !first {
		what = "stopped delivering"
	}
	log.Warn("events: an ordered read's consumer "+what+"; the read goes on with direct gets (a replica or the meta leader slow to answer: see docs/operations.md, \"Health and monitoring\")",
		"from_seq", at, "stalled_reads", n, "stalled_reads_total", r.total.Load())
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
