package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// A snapshot is the engine's folded state at a stream sequence (its
// applied), written so that an engine restored from it folds on from
// seq+1 exactly as one folded from sequence 1 (docs/engine.md
// "Snapshots"). The state is encoded canonically — encoding/json of
// structs in field order and maps in sorted key order, no map iteration
// anywhere — so the fold of the same prefix always encodes to the same
// bytes: `replay --verify` folds from sequence 1 and compares.
const (
	// SnapshotFormat is the layout of the snapshot envelope.
	SnapshotFormat = 1
	// foldVersion is bumped whenever the fold (state.go) or the encoded
	// state (snapState) changes: a snapshot of another fold is discarded.
	// Version 2: a session's zero fields are left out (snapSession).
	// Version 3: rule revision 5's sequences. Version 4: each session's
	// last activity (snapSession.ActiveAt) and the pruned count.
	foldVersion = 4
)

// SnapshotCompat is the code version a snapshot must carry to be loaded:
// the fold's version, the rule revision new turns start under and the
// event catalog's types and schema versions (a digest).
var SnapshotCompat = fmt.Sprintf("fold %d, rules %d, catalog %s", foldVersion, policy.CurrentRules, catalogDigest())

// catalogDigest names the event catalog: its types at their current
// schema versions (the upcasters bring older ones to those).
func catalogDigest() string {
	r := events.NewCatalogRegistry()
	h := sha256.New()
	for _, t := range r.Types() {
		v, _ := r.Version(t)
		fmt.Fprintf(h, "%s@%d,", t, v)
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// Snapshot is a stored snapshot's envelope. State is the canonical
// encoding of the folded state; Digest its sha256.
type Snapshot struct {
	Format int    `json:"format"`
	Compat string `json:"compat"`
	Agent  string `json:"agent"`
	// Seq is the stream sequence the state is folded to.
	Seq uint64 `json:"seq"`
	// KeepFinished is the number of finished turns the fold keeps
	// ([WithFinishedTurns]); a fold keeping another number differs.
	KeepFinished int `json:"keep_finished"`
	// Ledger is the stream's fingerprint ([events.Ledger]): a snapshot of
	// another stream (deleted and created again) is refused.
	Stream  string          `json:"stream"`
	Created time.Time       `json:"created"`
	FirstID string          `json:"first_id"`
	Digest  string          `json:"digest"`
	State   json.RawMessage `json:"state"`
}

// snapState is the encoded state: everything a decision, a guard or a
// step's message id reads (state.go).
type snapState struct {
	Applied    uint64                         `json:"applied"`
	SubjectSeq map[string]uint64              `json:"subject_seq"`
	TurnLast   map[string]uint64              `json:"turn_last"`
	Profiles   map[string]policy.ProfileState `json:"profiles"`
	Sessions   map[string]snapSession         `json:"sessions"`
	// Turns holds the open turns (running or waiting) in full and Done
	// the finished ones as the fold keeps them (FoldTurn).
	Turns   map[string]policy.TurnState `json:"turns"`
	Done    map[string]doneTurn         `json:"done"`
	ProbeAt map[string]int64            `json:"probe_at"`
	Orders  map[string][]string         `json:"orders"`
	// Configs holds each ConfigApplied's text by hash, parsed again on
	// load (config.Parse is deterministic).
	Configs    map[string]json.RawMessage `json:"configs"`
	Current    string                     `json:"current"`
	DecodeErrs int                        `json:"decode_errs"`
	// Finished is the eviction queue (finished turns, oldest first) and
	// Evicted how many turns it has evicted.
	Finished []string `json:"finished"`
	Evicted  uint64   `json:"evicted"`
	// Pruned is how many sessions session maintenance has dropped.
	Pruned uint64 `json:"pruned,omitzero"`
}

// doneTurn is a finished turn as the fold keeps it (id = its key).
type doneTurn struct {
	Session    string           `json:"session"`
	Phase      policy.TurnPhase `json:"phase"`
	Attempts   int              `json:"attempts"`
	ConfigHash string           `json:"config_hash"`
}

// snapSession is one session's view. Zero fields are left out (omitzero
// keeps nil and empty maps apart), here and in policy.SessionState: a
// session with an auto pin and nothing else encodes in about 110 bytes.
type snapSession struct {
	State            policy.SessionState        `json:"state"`
	LastAutoProbeAt  int64                      `json:"last_auto_probe_at,omitzero"`
	SkipMarks        map[string]policy.SkipMark `json:"skip_marks,omitzero"`
	ProfileSkipMarks map[string]policy.SkipMark `json:"profile_skip_marks,omitzero"`
	ActiveAt         int64                      `json:"active_at,omitzero"`
}

// encodeState is the canonical encoding of s. Call with mu held (for
// reading at least).
func (s *state) encodeState() ([]byte, error) {
	return s.capture().encode()
}

// capturedState is the state as it stood when captured, for encoding
// after the lock is released: the snapshot's JSON encoding takes about
// a second per 100k sessions, and a fold waiting that long for the lock
// holds up every decision behind it.
type capturedState struct {
	agent string
	keep  int
	ss    snapState
}

// capture copies what the snapshot encodes. Call with mu held (for
// reading at least). The maps the fold writes in place are copied; the
// values themselves are never changed in place once stored (the policy's
// Evolve functions copy a slice or map before they change it), so the
// copies share them.
func (s *state) capture() *capturedState {
	ss := snapState{Applied: s.applied, SubjectSeq: maps.Clone(s.subjectSeq), TurnLast: maps.Clone(s.turnLast),
		Profiles: maps.Clone(s.profiles), Sessions: make(map[string]snapSession, len(s.sessions)),
		Turns: map[string]policy.TurnState{}, Done: map[string]doneTurn{},
		ProbeAt: maps.Clone(s.probeAt), Orders: maps.Clone(s.orders),
		Configs: maps.Clone(s.configText), Current: s.current, DecodeErrs: s.decodeErrs,
		Finished: slices.Clone(s.finished), Evicted: s.evicted, Pruned: s.pruned}
	for id, t := range s.turns {
		if finishedPhase(t.Phase) && t.TurnID == id {
			ss.Done[id] = doneTurn{Session: t.Session, Phase: t.Phase, Attempts: t.Attempts, ConfigHash: t.ConfigHash}
		} else {
			ss.Turns[id] = t
		}
	}
	for k, v := range s.sessions {
		// markSkip writes the skip-mark maps in place.
		ss.Sessions[k] = snapSession{State: v.state, LastAutoProbeAt: v.lastAutoProbeAt,
			SkipMarks: maps.Clone(v.skipMarks), ProfileSkipMarks: maps.Clone(v.profileSkipMarks), ActiveAt: v.activeAt}
	}
	return &capturedState{agent: s.agent, keep: s.keep, ss: ss}
}

// encode is the canonical encoding of the captured state.
func (c *capturedState) encode() ([]byte, error) {
	b, err := json.Marshal(c.ss)
	if err != nil {
		return nil, fmt.Errorf("engine: encode state of agent %q at seq %d: %w", c.agent, c.ss.Applied, err)
	}
	return b, nil
}

// snapshot encodes the captured state with its envelope for ledger l.
func (c *capturedState) snapshot(l events.Ledger) ([]byte, uint64, error) {
	st, err := c.encode()
	if err != nil {
		return nil, 0, err
	}
	sum := sha256.Sum256(st)
	b, err := json.Marshal(Snapshot{Format: SnapshotFormat, Compat: SnapshotCompat, Agent: c.agent, Seq: c.ss.Applied,
		KeepFinished: c.keep, Stream: l.Stream, Created: l.Created.UTC(), FirstID: l.FirstID,
		Digest: hex.EncodeToString(sum[:]), State: st})
	if err != nil {
		return nil, 0, fmt.Errorf("engine: encode snapshot of agent %q: %w", c.agent, err)
	}
	return b, c.ss.Applied, nil
}

// DecodeSnapshot reads a snapshot's envelope and checks what it can
// without the stream: its format, that the state's digest matches and
// that the state is at Seq. It does not check Compat or the agent.
func DecodeSnapshot(b []byte) (*Snapshot, error) {
	var sn Snapshot
	if err := json.Unmarshal(b, &sn); err != nil {
		return nil, fmt.Errorf("snapshot does not decode: %w", err)
	}
	if sn.Format != SnapshotFormat {
		return &sn, fmt.Errorf("snapshot format %d, this build reads %d", sn.Format, SnapshotFormat)
	}
	sum := sha256.Sum256(sn.State)
	if got := hex.EncodeToString(sum[:]); got != sn.Digest {
		return &sn, fmt.Errorf("state digest %s does not match the snapshot's %s", got, sn.Digest)
	}
	return &sn, nil
}

// check refuses a snapshot this engine cannot start from (why, or nil):
// another code version, agent, eviction bound or ledger, or a sequence
// past the stream's end.
func (sn *Snapshot) check(agent string, keep int, l events.Ledger) error {
	switch {
	case sn.Compat != SnapshotCompat:
		return fmt.Errorf("written by code %q, this build is %q", sn.Compat, SnapshotCompat)
	case sn.Agent != agent:
		return fmt.Errorf("snapshot of agent %q", sn.Agent)
	case sn.KeepFinished != keep:
		return fmt.Errorf("keeps %d finished turns, this engine %d", sn.KeepFinished, keep)
	case !(events.Ledger{Stream: sn.Stream, Created: sn.Created, FirstID: sn.FirstID}).Same(l):
		return fmt.Errorf("taken on another ledger (%s; this is %s)",
			events.Ledger{Stream: sn.Stream, Created: sn.Created, FirstID: sn.FirstID}, l)
	case sn.Seq > l.LastSeq:
		return fmt.Errorf("at seq %d, past the stream's last sequence %d", sn.Seq, l.LastSeq)
	}
	return nil
}

// restoreState rebuilds the state of agent a snapshot's State encodes,
// keeping keep finished turns.
func restoreState(agent string, keep int, sn *Snapshot) (*state, error) {
	var ss snapState
	dec := json.NewDecoder(bytes.NewReader(sn.State))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ss); err != nil {
		return nil, fmt.Errorf("state does not decode: %w", err)
	}
	if ss.Applied != sn.Seq {
		return nil, fmt.Errorf("state folded to seq %d, the snapshot says %d", ss.Applied, sn.Seq)
	}
	s := newState(agent)
	s.keep = keep
	s.applied = ss.Applied
	s.subjectSeq = orEmpty(ss.SubjectSeq)
	s.turnLast = orEmpty(ss.TurnLast)
	s.profiles = orEmpty(ss.Profiles)
	s.turns = orEmpty(ss.Turns)
	for id, d := range ss.Done {
		s.turns[id] = compactTurn(policy.TurnState{TurnID: id, Session: d.Session, Phase: d.Phase, Attempts: d.Attempts, ConfigHash: d.ConfigHash})
	}
	for _, t := range s.turns {
		if t.Phase.Open() {
			s.countOpen(t.Session, 1)
		}
	}
	s.probeAt = orEmpty(ss.ProbeAt)
	s.orders = orEmpty(ss.Orders)
	s.current, s.decodeErrs, s.finished, s.evicted, s.pruned = ss.Current, ss.DecodeErrs, ss.Finished, ss.Evicted, ss.Pruned
	for k, v := range ss.Sessions {
		s.sessions[k] = &sessionView{state: v.State, lastAutoProbeAt: v.LastAutoProbeAt, skipMarks: v.SkipMarks, profileSkipMarks: v.ProfileSkipMarks, activeAt: v.ActiveAt}
	}
	for hash, text := range ss.Configs {
		if !s.parseConfig(hash, text) {
			return nil, fmt.Errorf("config %s does not parse", hash)
		}
	}
	if _, ok := s.configs[s.current]; !ok && s.current != "" {
		return nil, fmt.Errorf("current config %s is not in the snapshot", s.current)
	}
	return s, nil
}

func orEmpty[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

// StateEncoding is the canonical encoding of the fold's state (the
// snapshot's State): two folds of the same prefix encode the same.
func (f *Fold) StateEncoding() ([]byte, error) { return f.st.encodeState() }

// parseConfig parses a ConfigApplied's text and keeps it by hash (text
// too, for the snapshot); false when it does not parse.
func (s *state) parseConfig(hash string, text json.RawMessage) bool {
	l, err := config.Parse(text, "ConfigApplied "+hash, config.Stored())
	if err != nil {
		return false
	}
	pc := l.Policy
	pc.Hash = hash
	s.configs[hash] = &pc
	s.configText[hash] = append(json.RawMessage(nil), text...)
	return true
}
