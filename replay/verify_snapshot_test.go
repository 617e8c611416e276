package replay_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// TestVerifySnapshots_Scenarios: the engine of fixture scenarios that
// fold every kind of state (live switches, skip caches, stored orders,
// pins, blocks, configs) saves a snapshot when it closes (on the
// JetStream store, in its object store), and each equals the fold from
// sequence 1.
func TestVerifySnapshots_Scenarios(t *testing.T) {
	for _, name := range []string{"incident-day", "live-switch-notice-after-retry", "live-switch-repeated-pin",
		"skip-cache-per-profile", "skip-cache-restart", "stored-order", "user-pin-lifecycle", "codex-usage-limit",
		"chain-overload", "selection-sources", "cron-fallbacks", "primary-probe-slot"} {
		t.Run(name, func(t *testing.T) {
			st := openStore(t)
			runScenario(t, st, name, "main")
			checks, err := replay.VerifySnapshots(context.Background(), st, "")
			testutil.NoError(t, err)
			if len(checks) != 1 || !checks[0].OK || checks[0].Agent != "main" {
				t.Fatalf("snapshot checks %+v, want one OK for agent main", checks)
			}
		})
	}
}

// TestVerify_LedgerOfARestartedEngine: an engine started from the
// snapshot of the first run's engine decides on; verify passes on the
// whole ledger and on the new snapshot.
func TestVerify_LedgerOfARestartedEngine(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	runScenario(t, st, "cooldown-ladder", "main")
	first, _ := storedSnapshot(t, st)
	runScenario(t, st, "rate-limit-storm", "main")
	second, seq := storedSnapshot(t, st)
	if bytes.Equal(first, second) {
		t.Fatal("the second run saved no newer snapshot")
	}
	rep, err := replay.Verify(ctx, st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	rep.Snapshots, err = replay.VerifySnapshots(ctx, st, "")
	testutil.NoError(t, err)
	if !rep.OK() || len(rep.Snapshots) != 1 || rep.Snapshots[0].Seq != seq {
		t.Fatalf("verify: ok %v, %d divergences, snapshots %+v", rep.OK(), rep.Diverged, rep.Snapshots)
	}
}

// storedSnapshot is agent main's stored snapshot and its seq.
func storedSnapshot(t *testing.T, st events.Store) ([]byte, uint64) {
	t.Helper()
	data, seq, err := st.(events.Snapshots).LoadSnapshot(context.Background(), "main")
	testutil.NoError(t, err)
	return data, seq
}

// tampered serves a snapshot changed by the test.
type tampered struct {
	events.Store
	data []byte
	seq  uint64
	err  error // LoadSnapshot's error, when set
}

func (s tampered) LoadSnapshot(context.Context, string) ([]byte, uint64, error) {
	if s.err != nil {
		return nil, 0, s.err
	}
	return s.data, s.seq, nil
}
func (s tampered) SaveSnapshot(context.Context, string, uint64, []byte) (bool, error) {
	return false, nil
}
func (s tampered) SnapshotAgents(context.Context) ([]string, error) { return []string{"main"}, nil }

// TestVerifySnapshots_Tampered: a changed field (digest made to match)
// and a bad digest each fail verify with a line naming the agent, the seq
// and what differs.
func TestVerifySnapshots_Tampered(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	runScenario(t, st, "cooldown-ladder", "main")
	good, seq := storedSnapshot(t, st)
	sn, err := engine.DecodeSnapshot(good)
	testutil.NoError(t, err)
	count := regexp.MustCompile(`"ErrorCount":[0-9]+`)
	if !count.Match(sn.State) {
		t.Fatalf("the scenario's snapshot has no profile: %s", sn.State)
	}
	changed := *sn
	changed.State = count.ReplaceAll(sn.State, []byte(`"ErrorCount":99`))
	sum := sha256.Sum256(changed.State)
	changed.Digest = hex.EncodeToString(sum[:])
	badDigest := *sn
	badDigest.Digest = strings.Repeat("0", 64)
	for _, tc := range []struct {
		name string
		sn   engine.Snapshot
		want string
	}{
		{"changed field", changed, "differs from the fold from the stream's first sequence: state.profiles"},
		{"bad digest", badDigest, "differs from the fold from the stream's first sequence: state digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.sn)
			testutil.NoError(t, err)
			rep := &replay.VerifyReport{}
			rep.Snapshots, err = replay.VerifySnapshots(ctx, tampered{Store: st, data: b, seq: seq}, "")
			testutil.NoError(t, err)
			if rep.OK() || len(rep.Snapshots) != 1 {
				t.Fatalf("tampered snapshot passed: %+v", rep.Snapshots)
			}
			line := rep.Snapshots[0].String()
			prefix := `snapshot of agent "main" at seq ` + itoa(seq) + " "
			if !strings.HasPrefix(line, prefix) || !strings.Contains(line, tc.want) {
				t.Fatalf("line %q, want %q…%q", line, prefix, tc.want)
			}
			t.Log(line)
		})
	}
}

// TestVerifySnapshots_Unreadable: an object whose metadata does not read
// (put with the nats CLI, which drops fledger's seq) fails verify with a
// line saying it is unreadable, naming no sequence it does not have.
func TestVerifySnapshots_Unreadable(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "cooldown-ladder", "main")
	bad := fmt.Errorf("%w: snapshot of agent %q: metadata seq \"\": strconv.ParseUint: parsing \"\": invalid syntax", events.ErrBadSnapshot, "main")
	rep := &replay.VerifyReport{}
	var err error
	rep.Snapshots, err = replay.VerifySnapshots(context.Background(), tampered{Store: st, err: bad}, "")
	testutil.NoError(t, err)
	want := `snapshot of agent "main" is unreadable: events: stored snapshot unreadable: snapshot of agent "main": metadata seq ""`
	if rep.OK() || len(rep.Snapshots) != 1 || !rep.Snapshots[0].Unreadable || !strings.HasPrefix(rep.Snapshots[0].String(), want) {
		t.Fatalf("checks %+v (ok %v), want one failed check whose line begins %q", rep.Snapshots, rep.OK(), want)
	}
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }
