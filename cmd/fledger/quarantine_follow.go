package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// A following command (export --follow) meets quarantined messages as
// they come, for as long as it runs: a stream that thousands of foreign
// messages reached must not flood stderr with a line each. The first
// followNamed of each kind are named one by one as they come; the rest
// are counted and summed up in one line per kind (count, first and last
// sequence) at most every followSummaryEvery, and once more when the
// command ends.
const (
	followNamed        = 5
	followSummaryEvery = time.Minute
)

// followWarnings writes a following command's warnings to w, one at a
// time (Follow's goroutine and the summary ticker share w).
type followWarnings struct {
	mu   sync.Mutex
	w    io.Writer
	cmd  string
	bad  warnRun // messages that are not fledger commits
	gaps warnRun // runs of missing sequences
}

// warnRun counts one kind of quarantined message past the named ones.
type warnRun struct {
	named       int    // named one by one so far
	n           int    // counted since the last summary (sequences, for gaps)
	runs        int    // gaps counted since the last summary
	first, last uint64 // their first and last sequence
}

func newFollowWarnings(w io.Writer, cmd string) *followWarnings {
	return &followWarnings{w: w, cmd: cmd}
}

// printf writes one line of the command's own (an error it carries on
// after, a note) between the warnings.
func (f *followWarnings) printf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(f.w, "fledger %s: "+format+"\n", append([]any{f.cmd}, args...)...)
}

// add names de, or counts it once followNamed of its kind were named.
func (f *followWarnings) add(de *events.DecodeError) {
	q := projections.QuarantinedOf(de)
	f.mu.Lock()
	defer f.mu.Unlock()
	r, what := &f.bad, "messages that are not fledger commits"
	if q.Kind == projections.QuarantineMissing {
		r, what = &f.gaps, "missing sequences"
	}
	if r.named < followNamed {
		r.named++
		if q.Kind == projections.QuarantineMissing {
			fmt.Fprintf(f.w, "fledger %s: warning: %s missing from the stream (it denies deletes: damaged storage?)\n", f.cmd, events.GapText(q.Seq, q.LastSeq))
		} else {
			fmt.Fprintf(f.w, "fledger %s: warning: seq %d (subject %s, %d bytes) is not a fledger commit, quarantined and skipped: %s\n", f.cmd, q.Seq, cellText(q.Subject), q.Size, cellText(q.Reason))
		}
		if r.named == followNamed {
			fmt.Fprintf(f.w, "fledger %s: warning: further %s are counted and summed up every %s (fledger events --json lists every one)\n", f.cmd, what, followSummaryEvery)
		}
		return
	}
	if r.n == 0 {
		r.first = q.Seq
	}
	r.last = q.LastSeq
	if q.Kind == projections.QuarantineMissing {
		r.n += int(q.LastSeq - q.Seq + 1)
		r.runs++
	} else {
		r.n++
	}
}

// flush writes the summary of what was counted since the last one, if
// anything.
func (f *followWarnings) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := &f.bad; r.n > 0 {
		what := "stored messages are not fledger commits"
		if r.n == 1 {
			what = "stored message is not a fledger commit"
		}
		fmt.Fprintf(f.w, "fledger %s: warning: %d more %s, quarantined and skipped: seq %d to %d\n", f.cmd, r.n, what, r.first, r.last)
		*r = warnRun{named: r.named}
	}
	if r := &f.gaps; r.n > 0 {
		what := "sequences are"
		if r.n == 1 {
			what = "sequence is"
		}
		fmt.Fprintf(f.w, "fledger %s: warning: %d more %s missing from the stream (%s; damaged storage?): seq %d to %d\n", f.cmd, r.n, what, plural(r.runs, "run"), r.first, r.last)
		*r = warnRun{named: r.named}
	}
}

// every flushes the summary every d until ctx is done or stop is called;
// stop flushes once more.
func (f *followWarnings) every(ctx context.Context, d time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-t.C:
				f.flush()
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		f.flush()
	}
}
