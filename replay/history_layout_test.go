package replay_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// History is forever, across the issue-14 layout change too: a ledger
// written by the last build before it (six fixture scenarios and 96
// turns from eight concurrent HTTP clients through one serve, with v2
// payloads, recorded bases and step message ids) verifies with this
// build, and rebuilds into exactly the projection rows that build wrote.
func TestHistory_PreLayoutLedgerVerifiesAndProjectsTheSame(t *testing.T) {
	ctx := context.Background()
	st := loadLedger(t, "pre-layout")
	rep, err := replay.Verify(ctx, st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() {
		t.Fatalf("%d divergent commits; first: %+v", rep.Diverged, rep.Divergences[0])
	}
	want := map[string]int{"start": 112, "outcome": 128, "resume": 15, "session": 3, "config": 7}
	for k, n := range want {
		if rep.Checked[k] != n {
			t.Errorf("checked %d %s decisions, want %d (all: %v)", rep.Checked[k], k, n, rep.Checked)
		}
	}
	if rep.Commits != 265 || rep.Events != 1062 || rep.Turns != 112 {
		t.Fatalf("read %d commits, %d events, %d turns; want 265, 1062, 112", rep.Commits, rep.Events, rep.Turns)
	}

	db := rebuiltProjections(t, ctx, st)
	var got bytes.Buffer
	testutil.NoError(t, db.Dump(ctx, &got))
	golden, err := os.ReadFile(filepath.Join("..", "fixtures", "ledgers", "pre-layout.dump"))
	testutil.NoError(t, err)
	if v4 := v4Dump(got.Bytes()); !bytes.Equal(v4, golden) {
		gl, wl := bytes.Split(v4, []byte("\n")), bytes.Split(golden, []byte("\n"))
		for i := 0; i < min(len(gl), len(wl)); i++ {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("projection dump differs from the earlier build's at line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("projection dump has %d lines, the earlier build's %d", len(gl), len(wl))
	}
}

// v4Dump is a dump of schema version 5 as version 4 wrote it (the
// earlier build's golden): without the tables profile_windows and
// agent_spans, and without the turns columns added after lastSeq
// (startSeq, openedAt, class). Everything that build wrote must still
// come out exactly.
func v4Dump(dump []byte) []byte {
	var out [][]byte
	section := ""
	for _, line := range bytes.Split(bytes.TrimSuffix(dump, []byte("\n")), []byte("\n")) {
		if name, ok := bytes.CutPrefix(line, []byte("# ")); ok {
			section = string(name)
		}
		switch section {
		case "profile_windows", "agent_spans":
			continue
		case "turns":
			if before, _, ok := bytes.Cut(line, []byte(`,"startSeq":`)); ok {
				line = append(before, '}')
			}
		}
		out = append(out, line)
	}
	return append(bytes.Join(out, []byte("\n")), '\n')
}
