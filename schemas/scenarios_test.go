package schemas_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/projections/export"
	"github.com/fledger/fledger/schemas"
)

// Every fixture scenario, played into one stream (each under its own
// agent): every stored message, read back as raw bytes, is a commit of
// commit.v1.json whose envelopes validate (payloads included); and every
// decision record validates against decision-record.v1.json and is the
// same bytes from the projections (GET /v1/decisions, `fledger decisions
// --json`) as from the JSONL export.
func TestStoredSchemas_FixtureScenarios(t *testing.T) {
	ctx := testutil.Context(t)
	st := testutil.Store(t, testutil.NoFsync, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	testutil.NoError(t, scenario.RunFiles(ctx, st, testutil.Scenarios(t)))
	last := testutil.LastSeq(t, st)

	js, err := jetstream.New(natstest.DialWriter(t, st))
	testutil.NoError(t, err)
	stream, err := js.Stream(ctx, events.StreamName)
	testutil.NoError(t, err)
	for seq := uint64(1); seq <= last; seq++ {
		m, err := stream.GetMsg(ctx, seq)
		testutil.NoError(t, err)
		checkCommit(t, fmt.Sprintf("seq %d (%s)", seq, m.Subject), m.Data)
	}

	db, err := projections.Open(ctx, filepath.Join(t.TempDir(), "p.sqlite"))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	_, err = projections.NewProjector(db).CatchUp(ctx, st, last)
	testutil.NoError(t, err)
	recs, err := db.Decisions(ctx, projections.DecisionFilter{})
	testutil.NoError(t, err)
	var out bytes.Buffer
	sink := export.NewJSONL(&out)
	_, err = export.Range(ctx, st, 0, sink, 0)
	testutil.NoError(t, err)
	testutil.NoError(t, sink.Close())

	lines := bufio.NewScanner(&out)
	lines.Buffer(nil, 1<<20)
	n := 0
	for ; lines.Scan(); n++ {
		line := lines.Bytes()
		if err := schemas.Validate("decision-record.v1.json", line); err != nil {
			t.Fatalf("record %d: %v\n%s", n, err, line)
		}
		if n >= len(recs) {
			t.Fatalf("the export has more records than the projection's %d", len(recs))
		}
		if got := encode(t, recs[n]); !bytes.Equal(got, line) {
			t.Fatalf("record %d\nprojection: %s\nexport:     %s", n, got, line)
		}
	}
	if n != len(recs) || n < 100 {
		t.Fatalf("export %d records, projection %d", n, len(recs))
	}
}

// encode is v as `fledger decisions --json` and GET /v1/decisions write
// it: no HTML escaping.
func encode(t *testing.T, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	testutil.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
