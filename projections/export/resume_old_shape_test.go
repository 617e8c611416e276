package export

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// A file written before records carried `idx` (the old shape: event, tags,
// seq, time, agent, then the FallbackStepped fields) still resumes.
// testdata/old-shape-cut.jsonl is the old-shape export of the
// cron-fallbacks scenario (agent golden) cut by a crash inside the commit
// at seq 8, which holds two records: its first record is a complete line,
// the second (a skip_candidate) half written. Resuming keeps the four complete old lines, cuts
// the partial one and writes the rest in the new shape: the second record
// of seq 8 and the record of seq 9, each once.
func TestJSONLFile_ResumesAnOldShapeFileCutInsideACommit(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "old-shape-cut.jsonl"))
	testutil.NoError(t, err)
	complete := lines(old[:strings.LastIndexByte(string(old), '\n')+1])
	if len(complete) != 4 || strings.Contains(string(old), `"idx"`) {
		t.Fatalf("fixture: %d complete lines, want 4 old-shape lines", len(complete))
	}
	path := filepath.Join(t.TempDir(), "out.jsonl")
	testutil.NoError(t, os.WriteFile(path, old, 0o644))
	sink, err := OpenJSONLFile(path)
	testutil.NoError(t, err)
	if seq, n := sink.Resume(); seq != 8 || n != 1 {
		t.Fatalf("resume after seq %d record %d, want seq 8 record 1", seq, n)
	}
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runScenario(t, ctx, st, "cron-fallbacks", "golden")
	fresh := lines(exportAll(t, ctx, st))
	_, err = Range(ctx, st, 0, sink, 2)
	testutil.NoError(t, err)
	testutil.NoError(t, sink.Close())
	got, err := os.ReadFile(path)
	testutil.NoError(t, err)
	want := append(complete, fresh[4:]...)
	if len(fresh) != 6 || !strings.HasPrefix(fresh[4], `{"event":"model_fallback_decision","tags":["error_handling","model_fallback","skip_candidate"],"seq":8,"idx":3,`) {
		t.Fatalf("fresh export: %d lines, fifth %.120s", len(fresh), fresh[min(4, len(fresh)-1)])
	}
	if !reflect.DeepEqual(lines(got), want) {
		t.Fatalf("resumed file:\n%s\nwant the 4 old lines then:\n%s", got, strings.Join(fresh[4:], "\n"))
	}
}
