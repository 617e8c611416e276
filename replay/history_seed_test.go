package replay_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// replay --verify compares seeds exactly: a first-release RetryScheduled
// (v1, the seed a JSON number) whose jitter_seed is changed by one — a
// change a float64 cannot see above 2^53 — is a divergence naming
// jitter_seed, with both values in full (decimal strings, as v2 writes
// them).
func TestHistory_VerifyComparesSeedsExactly(t *testing.T) {
	const stored, tampered = "9660366734658420387", "9660366734658420388"
	a, _ := strconv.ParseFloat(stored, 64)
	b, _ := strconv.ParseFloat(tampered, 64)
	if a != b {
		t.Fatalf("%s and %s differ as float64: the test proves nothing", stored, tampered)
	}
	var at uint64
	st := loadEditedLedger(t, "first-release", func(seq uint64, data []byte) []byte {
		old := []byte(`"jitter_seed":` + stored + `,`)
		if at != 0 || !bytes.Contains(data, old) {
			return data
		}
		at = seq
		return bytes.Replace(data, old, []byte(`"jitter_seed":`+tampered+`,`), 1)
	})
	if at == 0 {
		t.Fatalf("no RetryScheduled with jitter_seed %s in the ledger", stored)
	}
	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	requireDivergence(t, rep, at, "RetryScheduled", "jitter_seed")
	for _, d := range rep.Divergences {
		for _, f := range d.Fields {
			if d.Seq == at && f.Path == "jitter_seed" && (f.Expected != strconv.Quote(stored) || f.Recorded != strconv.Quote(tampered)) {
				t.Errorf("jitter_seed expected %s recorded %s, want %s and %s", f.Expected, f.Recorded, stored, tampered)
			}
		}
	}
}
