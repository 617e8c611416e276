package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Append implements [Store].
func (m *memStore) Append(ctx context.Context, subject string, expected uint64, evs ...Event) (AppendResult, error) {
	return m.AppendCommit(ctx, AppendRequest{Subject: subject, Expected: expected, Events: evs})
}

// AppendGuarded implements [Store].
func (m *memStore) AppendGuarded(ctx context.Context, subject, guard string, expected uint64, evs ...Event) (AppendResult, error) {
	return m.AppendCommit(ctx, AppendRequest{Subject: subject, Guard: guard, Expected: expected, Events: evs})
}

// AppendCommit implements [Store]. It decides as the JetStream server and
// store do together: the expectation is checked first, and a conflict
// whose guard holds the commit's message id after the expectation is the
// commit stored before (a re-send); then the id is de-duplicated within
// the window; then the commit is stored. Urgent changes nothing: every
// append is stored at once.
func (m *memStore) AppendCommit(ctx context.Context, req AppendRequest) (AppendResult, error) {
	req, err := guarded(req)
	if err != nil {
		return AppendResult{}, err
	}
	if m.isClosed() {
		return AppendResult{}, ErrClosed
	}
	body, envs, err := commitBody(&m.cfg, m.reg, req)
	if err != nil {
		return AppendResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return AppendResult{}, fmt.Errorf("events: append to %s: %w", req.Subject, err)
	}
	id := req.MsgID
	if id == "" {
		id = envs[0].ID
	}
	seq, dup, taken, err := m.store(req, id, envs[0].ID, body)
	if err != nil {
		return AppendResult{}, err
	}
	res := AppendResult{Seq: seq, Duplicate: dup, Taken: taken}
	if !taken {
		// As the JetStream store answers: the commit sent, decoded at
		// the sequence it is stored at.
		if res.Events, err = m.reg.DecodeCommit(body, seq, req.Subject); err != nil {
			res.Events = nil
		}
	}
	return res, nil
}

// store stores body under req.Subject with message id id, unless the
// expectation fails or id is already stored; it returns the sequence the
// commit is at and whether it was there before (dup), stored by another
// commit than the one whose first event id is firstID (taken).
func (m *memStore) store(req AppendRequest, id, firstID string, body []byte) (seq uint64, dup, taken bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.isClosed() {
		return 0, false, false, ErrClosed
	}
	now := time.Now()
	m.expireIDsLocked(now)
	found := func(seq uint64) (uint64, bool, bool, error) {
		return seq, true, id != firstID && memFirstID(m.msgs[seq-1].data) != firstID, nil
	}
	if req.Expected != AnySeq {
		if last := m.lastLocked(req.Guard); last != req.Expected {
			if seq, ok := m.findIDLocked(req.Guard, req.Expected, id); ok {
				return found(seq)
			}
			if !subjectMatches(req.Guard, req.Subject) { // guarded by another subject, stored under its own
				if seq, ok := m.findIDLocked(req.Subject, req.Expected, id); ok {
					return found(seq)
				}
			}
			return 0, false, false, &ConflictError{Subject: req.Subject, Guard: req.Guard, Expected: req.Expected,
				Actual: last, ActualKnown: true, Code: CodeWrongLastSequence}
		}
	}
	if d, ok := m.ids[id]; ok {
		return found(d.seq)
	}
	m.msgs = append(m.msgs, memMsg{subject: req.Subject, msgID: id, data: body})
	seq = uint64(len(m.msgs))
	m.last[req.Subject] = seq
	m.ids[id] = memID{seq: seq, at: now}
	m.idQueue = append(m.idQueue, id)
	m.notifyLocked()
	return seq, false, false, nil
}

// expireIDsLocked forgets the message ids stored longer ago than the
// duplicate window. Callers hold mu.
func (m *memStore) expireIDsLocked(now time.Time) {
	n := 0
	for _, id := range m.idQueue {
		if d, ok := m.ids[id]; ok && now.Sub(d.at) < m.cfg.dupWindow {
			break
		}
		delete(m.ids, id)
		n++
	}
	m.idQueue = m.idQueue[n:]
}

// findIDLocked looks for message id among guard's messages after
// sequence after, searching as many of them as the JetStream store does
// after a conflict. Callers hold mu.
func (m *memStore) findIDLocked(guard string, after uint64, id string) (uint64, bool) {
	searched := 0
	for i := after; i < uint64(len(m.msgs)) && searched < dupScanLimit; i++ {
		msg := &m.msgs[i]
		if !subjectMatches(guard, msg.subject) {
			continue
		}
		if msg.msgID == id {
			return i + 1, true
		}
		searched++
	}
	return 0, false
}

// memFirstID is the id of a stored commit's first event ("" when it has
// none).
func memFirstID(body []byte) string {
	var c struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if json.Unmarshal(body, &c) != nil || len(c.Events) == 0 {
		return ""
	}
	return c.Events[0].ID
}
