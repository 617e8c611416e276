package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/projections"
)

// growth is what a ledger of a known traffic mix costs in storage: the
// stream (JetStream's stored size: subject, headers, payload and its
// per-message record; the file store on disk: message blocks, indexes and
// metadata, measured after a clean shutdown) and the projection database
// built from it, with the turns and model_fallback_decision records it
// holds. The engine snapshots' object store is on the same file store but
// is not part of DiskBytes: it holds one object per agent (Snapshots of
// them, SnapshotBytes on disk) and does not grow with the history.
type growth struct {
	Mix                             string
	Turns, Decisions, Commits       int
	StreamBytes, DiskBytes, DBBytes float64
	SnapshotBytes                   float64
	Snapshots                       int
	// DecisionBytes is the mean encoded size of a FallbackStepped event
	// (one model_fallback_decision record) inside its commit.
	DecisionBytes float64
}

// growthSizes are the growth phase's sizes: the generator mix's events
// (at most 200,000: the figures are per turn) and the incident-day runs
// (20: each the same 5 turns on a fresh agent; enough for the database
// to outgrow an empty one's pages).
func (s sizes) growthSizes() (evs, runs int) {
	return min(s.events, 200_000), 20
}

func (g growth) perTurn(v float64) float64 { return v / float64(max(g.Turns, 1)) }

// growthRows measures the growth of the generator mix (gen.go, two
// agents) and of the incident-day scenario run several times (each run
// its own agent), each on a fresh embedded server (sizes: growthSizes).
func (b *runner) growthRows(fixtures string) error {
	evs, runs := b.sz.growthSizes()
	b.progress("growth: generator mix, %d events", evs)
	gen, err := measureGrowth(b.ctx, filepath.Join(b.tmp, "growth-gen"), "generator mix", func(st events.Store) error {
		_, err := fill(b.ctx, st, evs)
		return err
	})
	if err != nil {
		return fmt.Errorf("growth, generator mix: %w", err)
	}
	b.progress("growth: incident-day scenario × %d", runs)
	sc, err := scenario.LoadFile(filepath.Join(fixtures, "scenarios", "incident-day.yaml"))
	if err != nil {
		return err
	}
	inc, err := measureGrowth(b.ctx, filepath.Join(b.tmp, "growth-incident"), "incident-day", func(st events.Store) error {
		for range runs {
			if _, err := scenario.Run(b.ctx, st, sc, scenario.Options{}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("growth, incident-day: %w", err)
	}
	for _, g := range []growth{gen, inc} {
		detail := fmt.Sprintf("%d turns, %d commits, %d model_fallback_decision records; %.0f B per commit",
			g.Turns, g.Commits, g.Decisions, g.StreamBytes/float64(max(g.Commits, 1)))
		b.rep.Rows = append(b.rep.Rows,
			barRow(Measure{Name: "stream bytes per turn, " + g.Mix, Value: g.perTurn(g.StreamBytes), Unit: "B",
				Detail: detail + "; JetStream's stored size (subject, headers, payload, record)"}, nil, "", true),
			barRow(Measure{Name: "disk bytes per turn, " + g.Mix, Value: g.perTurn(g.DiskBytes), Unit: "B",
				Detail: fmt.Sprintf("file store after shutdown (blocks, indexes, meta), without the engine snapshots' object store: %.1f MiB", g.DiskBytes/(1<<20))}, nil, "", true),
			barRow(Measure{Name: "stream bytes per model_fallback_decision, " + g.Mix, Value: g.DecisionBytes, Unit: "B",
				Detail: fmt.Sprintf("the FallbackStepped event inside its commit; %.2f records per turn", float64(g.Decisions)/float64(max(g.Turns, 1)))}, nil, "", true),
			barRow(Measure{Name: "projection DB bytes per turn, " + g.Mix, Value: g.perTurn(g.DBBytes), Unit: "B",
				Detail: fmt.Sprintf("SQLite file after a rebuild and close, less an empty database: %.1f MiB", g.DBBytes/(1<<20))}, nil, "", true))
		if g.Snapshots > 0 {
			b.rep.Rows = append(b.rep.Rows, barRow(Measure{Name: "engine snapshot store bytes, " + g.Mix, Value: g.SnapshotBytes, Unit: "B",
				Detail: fmt.Sprintf("OBJ_%s on disk: %d snapshots, one per agent (%.0f B each), replaced as the agent's state moves: it does not grow with history", events.SnapshotBucket, g.Snapshots, g.SnapshotBytes/float64(g.Snapshots))}, nil, "", true))
		}
	}
	return nil
}

// measureGrowth fills a fresh embedded server in dir with write, rebuilds
// the projections from it into dir/projections.sqlite, closes both and
// measures the stream, the file store and the database.
func measureGrowth(ctx context.Context, dir, mix string, write func(events.Store) error) (growth, error) {
	g := growth{Mix: mix}
	data := filepath.Join(dir, "data")
	st, err := events.Open(ctx, events.WithDataDir(data), events.WithSyncAlways(false, 0)) // sizes do not depend on fsync
	if err != nil {
		return g, err
	}
	err = write(st)
	var last uint64
	if err == nil {
		last, err = st.LastSeq(ctx, "")
	}
	dbPath := filepath.Join(dir, projections.DefaultFile)
	if err == nil {
		err = project(ctx, st, dbPath, last, &g)
	}
	if err == nil {
		g.DecisionBytes, err = decisionBytes(ctx, st)
	}
	var stored uint64
	if err == nil {
		_, stored, err = events.StreamSize(ctx, st)
		g.StreamBytes = float64(stored)
	}
	if snaps, ok := st.(events.Snapshots); ok && err == nil {
		var agents []string
		agents, err = snaps.SnapshotAgents(ctx)
		g.Snapshots = len(agents)
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return g, err
	}
	g.Commits = int(last)
	if g.DiskBytes, g.SnapshotBytes, err = storeBytes(filepath.Join(data, "jetstream")); err != nil {
		return g, err
	}
	// Less an empty database's size: its schema's fixed pages.
	empty := filepath.Join(dir, "empty.sqlite")
	edb, err := projections.Open(ctx, empty)
	if err != nil {
		return g, err
	}
	if err := edb.Close(); err != nil {
		return g, err
	}
	g.DBBytes = fileBytes(dbPath) - fileBytes(empty)
	return g, nil
}

// project rebuilds the projections of st up to last into path and counts
// its turns and decision records into g.
func project(ctx context.Context, st events.Store, path string, last uint64, g *growth) error {
	db, err := projections.Open(ctx, path)
	if err != nil {
		return err
	}
	_, err = projections.NewProjector(db).CatchUp(ctx, st, last)
	if err == nil {
		row := db.SQL().QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM turns), (SELECT COUNT(*) FROM fallback_decisions)`)
		if err = row.Scan(&g.Turns, &g.Decisions); err != nil {
			err = fmt.Errorf("count turns and decisions: %w", err)
		}
	}
	// Closed before the caller measures the file (the WAL checkpointed),
	// once, whatever happened.
	return errors.Join(err, db.Close())
}

// decisionBytes reads st and returns the mean size of a FallbackStepped
// event's envelope as stored in a commit: a one-event commit less the
// commit's own {"events":[]}.
func decisionBytes(ctx context.Context, st events.Store) (float64, error) {
	reg := events.NewCatalogRegistry()
	var n, total int
	for ev, err := range st.Read(ctx, 0) {
		if err != nil {
			return 0, err
		}
		if _, ok := ev.Data.(events.FallbackStepped); !ok {
			continue
		}
		b, err := reg.EncodeCommit([]events.Event{ev})
		if err != nil {
			return 0, err
		}
		n++
		total += len(b) - len(`{"events":[]}`)
	}
	return float64(total) / float64(max(n, 1)), nil
}

// fileBytes is the size of the SQLite database path and its WAL, if any.
func fileBytes(path string) float64 {
	var n int64
	for _, f := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return float64(n)
}

// storeBytes is the total size of the regular files of the file store
// under dir (a server's jetstream directory), split into the engine
// snapshots' object store (its stream directory
// <account>/streams/OBJ_FLEDGER_SNAPSHOTS) and the rest.
func storeBytes(dir string) (ledger, snapshots float64, err error) {
	snapDir := "OBJ_" + events.SnapshotBucket
	var n, snap int64
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if parts := strings.Split(filepath.ToSlash(rel), "/"); len(parts) > 3 && parts[1] == "streams" && parts[2] == snapDir {
			snap += fi.Size()
			return nil
		}
		n += fi.Size()
		return nil
	})
	return float64(n), float64(snap), err
}
