package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/internal/bench"
)

func init() { register(newBenchCmd) }

func newBenchCmd(_ *globals) *cobra.Command {
	var (
		o       bench.Options
		asJSON  bool
		noTrace bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure this machine's raw limits and fledger's speed next to them, in one run",
		Long: `bench starts fresh embedded servers in a temporary directory (never --data)
and measures, in one process: the raw limits first (JetStream sync and async
publish with and without fsync per write, fsync, SQLite batched upsert,
ordered-consumer read bytes only and with decode), then fledger's
figures next to them (classification over every fixture vector,
decide-and-append latency and attempts/s for a realistic mix, projection
rebuild events/s and its live-heap growth, engine start-up, the engine
state's heap and snapshot bytes per session and per open turn, storage
growth per turn), with the ratio of each to its limit and
the design's bars; then a concurrency sweep on fresh sync-always servers:
turns/s, p50/p99 per turn, commits and conflicts at 1, 8, 64 and 256
concurrent turns through the Go engine and at 1, 8, 16, 64 and 256 HTTP
clients through an in-process fledger serve on 127.0.0.1, next to the raw
sync and async publish rates at the same concurrency (--concurrency-only:
the sweep alone, about 13 s with --quick, 45 s without). It exits 0 even
when a bar is missed: it is a measurement, printed MISS. The machine may
be shared: read the ratios.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !noTrace {
				o.Progress = cmd.ErrOrStderr()
			}
			rep, err := bench.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			if asJSON {
				return bench.WriteJSON(cmd.OutOrStdout(), rep)
			}
			return bench.WriteText(cmd.OutOrStdout(), rep)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Quick, "quick", false, "small sizes (rebuild of 100 000 events; under a minute on 2 cores)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.IntVar(&o.Events, "events", 0, "rebuild stream size in events (default 1 000 000, --quick 100 000)")
	f.StringVar(&o.Fixtures, "fixtures", "", "fixtures directory (default: fixtures/ found above the working directory)")
	f.StringVar(&o.TempDir, "tmp", os.TempDir(), "directory for the temporary data directories")
	f.BoolVar(&noTrace, "silent", false, "do not print progress to stderr")
	f.BoolVar(&o.ConcurrencyOnly, "concurrency-only", false, "run only the concurrency sweep (engine and HTTP at 1…256 concurrent turns, raw publish at the same concurrency)")
	f.BoolVar(&o.NoConcurrency, "no-concurrency", false, "leave the concurrency sweep out")
	f.DurationVar(&o.LevelTime, "level-time", 0, "concurrency sweep: wall time of new turns per level (default 2s, --quick 500ms)")
	f.StringVar(&o.RebuildProfile, "rebuild-cpuprofile", "", "write a CPU profile of the projection rebuild alone to this file (go tool pprof)")
	cmd.MarkFlagsMutuallyExclusive("concurrency-only", "no-concurrency")
	return cmd
}
