package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// SnapshotCheck is the verification of one agent's stored engine
// snapshot: its state compared, in canonical encoding, with the fold of
// the stream from sequence 1 to the snapshot's sequence.
type SnapshotCheck struct {
	Agent string `json:"agent"`
	Seq   uint64 `json:"seq"`
	// OK is true when the snapshot equals the fold; Problem otherwise
	// says what differs (the first differing field) or why the snapshot
	// does not read (a bad digest). Skipped is set instead for a snapshot
	// no engine of this build would load (another code version or
	// ledger): it is not compared, and is no failure.
	OK      bool   `json:"ok"`
	Problem string `json:"problem,omitempty"`
	Skipped string `json:"skipped,omitempty"`
	// Unreadable is set with Problem when the stored object's metadata
	// does not read (not saved by fledger: its sequence unknown, Seq 0),
	// so nothing was compared.
	Unreadable bool `json:"unreadable,omitempty"`
}

// String is the check in one line, naming agent and seq.
func (c SnapshotCheck) String() string {
	switch {
	case c.Skipped != "":
		return fmt.Sprintf("snapshot of agent %q at seq %d not compared: %s", c.Agent, c.Seq, c.Skipped)
	case c.OK:
		return fmt.Sprintf("snapshot of agent %q at seq %d equals the fold from the stream's first sequence", c.Agent, c.Seq)
	case c.Unreadable && c.Seq == 0:
		return fmt.Sprintf("snapshot of agent %q is unreadable: %s", c.Agent, c.Problem)
	case c.Unreadable:
		return fmt.Sprintf("snapshot of agent %q at seq %d is unreadable: %s", c.Agent, c.Seq, c.Problem)
	}
	return fmt.Sprintf("snapshot of agent %q at seq %d differs from the fold from the stream's first sequence: %s", c.Agent, c.Seq, c.Problem)
}

// VerifySnapshots checks the engine snapshot stored for each agent (only
// agent when not ""): digest, then state against the fold of the stream
// from sequence 1 to the snapshot's sequence ([engine.FoldAllTo]: one
// read of the stream for every agent, the state [engine.FoldTo] gives
// each). A store that keeps no snapshots has none to check. The embedded
// server's read-only user may read them (natsserver grants it the object
// store's stream).
func VerifySnapshots(ctx context.Context, st events.Store, agent string) ([]SnapshotCheck, error) {
	ss, ok := st.(events.Snapshots)
	if !ok {
		return nil, nil
	}
	agents, err := ss.SnapshotAgents(ctx)
	if err != nil {
		return nil, err
	}
	ledger, err := st.Ledger(ctx)
	if err != nil {
		return nil, err
	}
	var out []SnapshotCheck
	pending := map[int]*engine.Snapshot{} // out's index → the snapshot to compare with the fold
	targets := map[string]engine.FoldTarget{}
	for _, a := range agents {
		if agent != "" && a != agent {
			continue
		}
		data, seq, err := ss.LoadSnapshot(ctx, a)
		if errors.Is(err, events.ErrNoSnapshot) {
			continue
		}
		if errors.Is(err, events.ErrBadSnapshot) {
			out = append(out, SnapshotCheck{Agent: a, Problem: err.Error(), Unreadable: true})
			continue
		}
		if err != nil {
			return out, err
		}
		c, sn := checkSnapshot(ledger, a, seq, data)
		if sn != nil {
			pending[len(out)] = sn
			targets[a] = engine.FoldTarget{Keep: sn.KeepFinished, Seq: sn.Seq}
		}
		out = append(out, c)
	}
	if len(targets) == 0 {
		return out, nil
	}
	folds, err := engine.FoldAllTo(ctx, st, targets)
	if err != nil {
		return out, err
	}
	for i, sn := range pending {
		want, err := folds[out[i].Agent].StateEncoding()
		if err != nil {
			return out, err
		}
		if d := engine.SnapshotDiff(want, sn.State); d != "" {
			out[i].Problem = d
		} else {
			out[i].OK = true
		}
	}
	return out, nil
}

// checkSnapshot checks what one stored snapshot (stored at seq) says
// without the stream; the snapshot is returned when its state is to be
// compared with the fold.
func checkSnapshot(ledger events.Ledger, agent string, seq uint64, data []byte) (SnapshotCheck, *engine.Snapshot) {
	c := SnapshotCheck{Agent: agent, Seq: seq}
	sn, err := engine.DecodeSnapshot(data)
	if err != nil {
		c.Problem = err.Error()
		return c, nil
	}
	switch {
	case sn.Agent != agent:
		c.Problem = fmt.Sprintf("stored for agent %q, the snapshot names agent %q", agent, sn.Agent)
		return c, nil
	case sn.Seq != seq:
		c.Problem = fmt.Sprintf("stored at seq %d, the snapshot says %d", seq, sn.Seq)
		return c, nil
	case sn.Compat != engine.SnapshotCompat:
		c.Skipped = fmt.Sprintf("written by code %q, this build is %q (an engine discards it)", sn.Compat, engine.SnapshotCompat)
		return c, nil
	case !(events.Ledger{Stream: sn.Stream, Created: sn.Created, FirstID: sn.FirstID}).Same(ledger):
		c.Skipped = fmt.Sprintf("taken on another ledger (an engine discards it; this is %s)", ledger)
		return c, nil
	case sn.Seq > ledger.LastSeq:
		c.Problem = fmt.Sprintf("past the stream's last sequence %d", ledger.LastSeq)
		return c, nil
	}
	return c, sn
}
