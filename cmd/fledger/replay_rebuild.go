package main

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
)

// rebuildJSON is `replay --json` of a rebuild: the database written and
// what was folded into it, up to stream sequence last_seq.
type rebuildJSON struct {
	Database    string  `json:"database"`
	Events      int     `json:"events"`
	Commits     int     `json:"commits"`
	LastSeq     uint64  `json:"last_seq"`
	Quarantined int     `json:"quarantined"`
	ElapsedMs   int64   `json:"elapsed_ms"`
	EventsPerS  float64 `json:"events_per_s"`
}

// runReplayRebuild rebuilds every projection into a fresh database up to
// o.toSeq, with a progress bar on a terminal, and prints where and how fast.
func runReplayRebuild(cmd *cobra.Command, w io.Writer, st events.Store, o *replayFlags) error {
	ctx := cmd.Context()
	path := o.out
	if path == "" {
		dir, err := os.MkdirTemp("", "fledger-replay-")
		if err != nil {
			return err
		}
		path = filepath.Join(dir, projections.DefaultFile)
	}
	errOut := cmd.ErrOrStderr()
	var bar *progressbar.ProgressBar
	progress := func(done, to uint64) {
		if !projIsTerminal(errOut) {
			return
		}
		if bar == nil {
			bar = progressbar.NewOptions64(int64(to), progressbar.OptionSetWriter(errOut),
				progressbar.OptionSetDescription("replaying"), progressbar.OptionShowCount(),
				progressbar.OptionSetItsString("seq"), progressbar.OptionShowIts(),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		_ = bar.Set64(int64(done))
	}
	log := slog.New(quietQuarantine{slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: slog.LevelWarn})})
	res, err := replay.Rebuild(ctx, st, path, replay.RebuildOptions{ToSeq: o.toSeq, Projector: []projections.ProjectorOption{
		projections.WithBatchEvents(o.batch), projections.WithSkipUnknown(o.skipUnknown),
		projections.WithProgress(progress), projections.WithProjectorLogger(log)}})
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	secs := res.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(res.Events) / secs
	}
	if res.Quarantined > 0 {
		if db, err := projections.Open(ctx, res.Path); err == nil {
			q, _ := db.Quarantined(ctx)
			_ = db.Close()
			warnQuarantined(errOut, "replay", q)
		}
	}
	if o.jsonOut {
		return replay.WriteJSON(w, rebuildJSON{Database: res.Path, Events: res.Events, Commits: res.Commits, LastSeq: res.To,
			Quarantined: res.Quarantined, ElapsedMs: res.Elapsed.Milliseconds(), EventsPerS: math.Round(rate)})
	}
	fmt.Fprintf(w, "database %s\n", res.Path)
	fmt.Fprintf(w, "replayed %d events (%d commits) up to seq %d in %s (%.0f events/s)\n",
		res.Events, res.Commits, res.To, res.Elapsed.Round(time.Millisecond), rate)
	return nil
}
