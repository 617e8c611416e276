package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
)

// projectionFlags are the flags every query command on the projections
// shares.
type projectionFlags struct {
	db          string
	noCatchUp   bool
	json        bool
	skipUnknown bool
	rebuild     bool
	batch       int
	// at (--at TIME) reads the state as of that moment: a rebuild into a
	// temporary database (tmpDir, removed by close).
	at     string
	tmpDir string
	// hint is the complete rebuild command for the database in use (set
	// by openProjections); it replaces the generic one in *DBErrors.
	hint string
	// wantLedger asks openProjections to read the stream's ledger into
	// ledger (a command that names stream sequences: decisions
	// --from-seq/--to-seq); zero otherwise, and with --no-catch-up.
	wantLedger bool
	ledger     events.Ledger
	// agent is the command's --agent, when it has one: --at then cuts
	// that agent's history at the time, not the whole stream's.
	agent string
}

func (pf *projectionFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&pf.db, "db", "", "projection database (default <--data>/"+projections.DefaultFile+"; with --nats projections-nats-<hash of the URL>.sqlite in --data when given, else in the user cache directory, e.g. ~/.cache/fledger)")
	f.BoolVar(&pf.noCatchUp, "no-catch-up", false, "query the projection as it is, without first catching up to the stream's last sequence")
	f.BoolVar(&pf.json, "json", false, "print JSON Lines (one object per row) instead of a table")
	f.BoolVar(&pf.skipUnknown, "skip-unknown", false, "skip events of unknown types (logged, counted in skipped_events) instead of failing")
	f.BoolVar(&pf.rebuild, "rebuild", false, "delete the projection database and rebuild it from sequence 1 (the stream is not touched; a file that is not a fledger projection database, or one another process has open, is refused)")
	f.IntVar(&pf.batch, "batch", projections.DefaultBatchEvents, "events per catch-up transaction")
	f.StringVar(&pf.at, "at", "", "read the state as of this time (RFC 3339): rebuilds the projections into a temporary database up to the last commit at or before it")
	// Every *DBError the command returns (open, catch-up, query) names
	// the complete rebuild command of this invocation.
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			err := run(c, args)
			var de *projections.DBError
			if pf.hint != "" && errors.As(err, &de) && de.Rebuild == "" {
				de.Rebuild = pf.hint
				if pf.db != "" && errors.Is(err, projections.ErrOtherLedger) {
					// --db named another ledger's database: rebuilding it
					// here would overwrite that ledger's projections.
					de.Rebuild += "`, which overwrites that file with this ledger's projections; to keep it, drop --db (this ledger has its own default database) or give a new path, e.g. `--db new.sqlite"
				}
			}
			return err
		}
	}
}

// close closes db and removes the temporary database of --at.
func (pf *projectionFlags) close(db *projections.DB) {
	_ = db.Close()
	if pf.tmpDir != "" {
		_ = os.RemoveAll(pf.tmpDir)
	}
}

// atTime parses --at ("" = zero).
func (pf *projectionFlags) atTime() (time.Time, error) {
	return atMoment.parse(pf.at, time.Time{})
}

// atMoment is --at: a time; the state at a stream sequence is a rebuild
// to it.
var atMoment = moment{flag: "--at", seq: "fledger replay --out FILE --to-seq"}

// openProjectionsAt rebuilds the projections into a temporary database up
// to the last commit before the first one stamped after --at
// (replay.SeqAt) and opens it.
func openProjectionsAt(cmd *cobra.Command, g *globals, pf *projectionFlags) (*projections.DB, error) {
	if pf.rebuild || pf.noCatchUp || pf.db != "" {
		return nil, fmt.Errorf("--at rebuilds a temporary database; it does not combine with --db, --rebuild or --no-catch-up")
	}
	at, err := pf.atTime()
	if err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	st, err := openLedger(ctx, g)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	m, err := replay.MomentAtAgent(ctx, st, at, pf.agent)
	if err != nil {
		return nil, err
	}
	if w := m.Warning("--at", at); w != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "fledger %s: warning: %s\n", cmd.Name(), w)
	}
	seq := m.Seq
	if pf.tmpDir, err = os.MkdirTemp("", "fledger-at-"); err != nil {
		return nil, err
	}
	path := filepath.Join(pf.tmpDir, projections.DefaultFile)
	if seq > 0 {
		log := slog.New(quietQuarantine{slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn})})
		if _, err := replay.Rebuild(ctx, st, path, replay.RebuildOptions{ToSeq: seq, Projector: []projections.ProjectorOption{
			projections.WithBatchEvents(pf.batch), projections.WithSkipUnknown(pf.skipUnknown), projections.WithProjectorLogger(log)}}); err != nil {
			_ = os.RemoveAll(pf.tmpDir)
			return nil, err
		}
	}
	db, err := projections.Open(ctx, path)
	if err != nil {
		_ = os.RemoveAll(pf.tmpDir)
		return nil, err
	}
	return db, nil
}

// path is --db, else the default database of the stream the global flags
// select: <--data>/projections.sqlite for the embedded server, and
// projections-nats-<hash>.sqlite for --nats URL, so projections of a remote
// stream never share a file with the local ledger's (or with another
// server's). That file is in --data when --data is given, else in
// [natsCacheDir] — never in the current directory. The ledger fingerprint
// check (projections.DB.Bind) still guards every catch-up, e.g. a stream
// recreated under the same URL.
func (pf *projectionFlags) path(g *globals) string {
	if pf.db != "" {
		return pf.db
	}
	if g.NATSURL != "" {
		dir := g.DataDir
		if !g.DataSet {
			if d, err := natsCacheDir(); err == nil {
				dir = d
			}
		}
		return filepath.Join(dir, natsDBFile(g.NATSURL))
	}
	return filepath.Join(g.DataDir, projections.DefaultFile)
}

// natsCacheDir is where --nats projection databases live without --data:
// <user cache directory>/fledger ($XDG_CACHE_HOME/fledger or
// ~/.cache/fledger on Linux, ~/Library/Caches/fledger on macOS,
// %LocalAppData%\fledger on Windows). They are caches: rebuilt from the
// stream when removed.
func natsCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "fledger"), nil
}

// natsDBFile is the default projection database file name for --nats
// url: projections-nats-<12 hex of sha256(servers, stream)>.sqlite, the
// servers being the comma-separated URLs without credentials, lower-cased
// (changing the user or password keeps the file).
func natsDBFile(url string) string {
	parts := strings.Split(url, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if u, err := neturl.Parse(p); err == nil && u.User != nil {
			u.User = nil
			p = u.String()
		}
		parts[i] = strings.ToLower(p)
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, ",") + "\x00" + events.StreamName))
	return "projections-nats-" + hex.EncodeToString(sum[:6]) + ".sqlite"
}

// rebuildCommand is the complete command that rebuilds the database of
// this invocation from the same stream: absolute --data (with --nats only
// when it was given: it places the database), the --nats
// connection flags (a password in the URL or --nats-password is shown as a
// placeholder, never printed), and --db when it was given.
func (pf *projectionFlags) rebuildCommand(g *globals) string {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	args := []string{"fledger"}
	if g.NATSURL == "" || g.DataSet {
		args = append(args, "--data", projections.ShellQuote(abs(g.DataDir)))
	}
	if g.NATSURL != "" {
		args = append(args, "--nats", projections.ShellQuote(events.RedactURL(g.NATSURL)))
		for _, f := range []struct{ flag, val string }{
			{"--nats-user", g.NATSUser}, {"--nats-creds", g.NATSCreds}, {"--nats-tls-ca", g.NATSTLSCA},
			{"--nats-tls-cert", g.NATSTLSCert}, {"--nats-tls-key", g.NATSTLSKey},
		} {
			if f.val == "" {
				continue
			}
			v := f.val
			if f.flag != "--nats-user" {
				v = abs(v)
			}
			args = append(args, f.flag, projections.ShellQuote(v))
		}
		if g.NATSPassword != "" {
			args = append(args, "--nats-password", "<password>")
		}
	}
	args = append(args, "stats", "--rebuild")
	if pf.db != "" {
		args = append(args, "--db", projections.ShellQuote(abs(pf.db)))
	}
	return strings.Join(args, " ")
}

// openProjections opens the projection database (rebuilding it first with
// --rebuild) and, unless --no-catch-up, folds the stream into it up to the
// stream's last sequence, with a progress bar on a terminal when that takes
// more than a second. Close the database when done.
//
// Messages the projections quarantined (not fledger commits) and missing
// sequences are named in a warning on stderr every time: the rows shown
// are every real row, without them.
func openProjections(cmd *cobra.Command, g *globals, pf *projectionFlags) (*projections.DB, error) {
	db, err := openProjectionsOnly(cmd, g, pf)
	if err != nil {
		return nil, err
	}
	q, err := db.Quarantined(cmd.Context())
	if err != nil {
		pf.close(db)
		return nil, err
	}
	warnQuarantined(cmd.ErrOrStderr(), cmd.Name(), q)
	return db, nil
}

func openProjectionsOnly(cmd *cobra.Command, g *globals, pf *projectionFlags) (*projections.DB, error) {
	if err := atLeast("--batch", pf.batch, 1, "the number of events per transaction", ""); err != nil {
		return nil, err
	}
	if pf.at != "" {
		return openProjectionsAt(cmd, g, pf)
	}
	ctx := cmd.Context()
	errOut := cmd.ErrOrStderr()
	log := slog.New(quietQuarantine{slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: slog.LevelInfo})})
	path := pf.path(g)
	pf.hint = pf.rebuildCommand(g)
	if pf.db == "" || !pf.noCatchUp {
		// Before the database is opened (so created): no projection file
		// appears in a data directory that holds no ledger.
		if err := g.checkLedger(); err != nil {
			return nil, err
		}
	}
	// The ledger is opened before the database is touched: a stream that
	// cannot be reached leaves no empty projection file behind, and
	// --rebuild deletes nothing.
	var st events.Store
	if !pf.noCatchUp {
		var err error
		if st, err = openLedger(ctx, g); err != nil {
			return nil, err
		}
		defer st.Close()
		if pf.wantLedger {
			if l, err := st.Ledger(ctx); err == nil {
				pf.ledger = l
			}
		}
	}
	if pf.rebuild {
		removed, err := projections.Remove(ctx, path)
		if err != nil {
			return nil, err
		}
		if removed {
			log.Info("projection database deleted: rebuilding from the start of the stream", "db", path)
		} else {
			log.Info("no projection database yet: building it from the start of the stream", "db", path)
		}
	}
	db, err := projections.Open(ctx, path, projections.WithLogger(log))
	if err != nil {
		return nil, err
	}
	if pf.noCatchUp {
		return db, nil
	}
	if err := catchUpProjections(ctx, st, pf, db, log, errOut); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

func catchUpProjections(ctx context.Context, st events.Store, pf *projectionFlags, db *projections.DB, log *slog.Logger, errOut io.Writer) error {
	// Bind the database to this stream before anything else: a database
	// built from another ledger (or ahead of this stream) is refused, not
	// mixed, and an empty one adopts this ledger's fingerprint.
	ledger, err := st.Ledger(ctx)
	if err != nil {
		return err
	}
	if err := db.Bind(ctx, ledger); err != nil {
		return err
	}
	target := ledger.LastSeq
	from, err := db.Checkpoint(ctx)
	if err != nil {
		return err
	}
	if from >= target {
		return nil
	}
	start := time.Now()
	var bar *progressbar.ProgressBar
	progress := func(done, to uint64) {
		if bar == nil {
			if time.Since(start) < time.Second || !projIsTerminal(errOut) {
				return
			}
			bar = progressbar.NewOptions64(int64(to-from),
				progressbar.OptionSetWriter(errOut),
				progressbar.OptionSetDescription("catching up projections"),
				progressbar.OptionShowCount(),
				progressbar.OptionSetItsString("seq"),
				progressbar.OptionShowIts(),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish())
		}
		_ = bar.Set64(int64(done - from))
	}
	p := projections.NewProjector(db, projections.WithBatchEvents(pf.batch), projections.WithSkipUnknown(pf.skipUnknown),
		projections.WithProgress(progress), projections.WithProjectorLogger(log))
	res, err := p.CatchUp(ctx, st, target)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	if res.Elapsed > time.Second {
		log.Info("projections caught up", "from", res.From, "to", res.To, "events", res.Events,
			"elapsed", res.Elapsed.Round(time.Millisecond), "events_per_s", int(float64(res.Events)/res.Elapsed.Seconds()))
	}
	return nil
}

// quietQuarantine drops the projector's log line per quarantined message:
// the command names them all in one warning (warnQuarantined).
type quietQuarantine struct{ slog.Handler }

func (q quietQuarantine) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, projections.QuarantineLogPrefix) {
		return nil
	}
	return q.Handler.Handle(ctx, r)
}

// projIsTerminal reports whether w is a character device (a terminal).
func projIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// projJSONLines writes each row as one JSON line.
func projJSONLines[T any](w io.Writer, rows []T) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if err := enc.Encode(rows[i]); err != nil {
			return err
		}
	}
	return nil
}

// projNow parses --now (RFC 3339), defaulting to the wall clock.
func projNow(s string) (time.Time, error) {
	if s == "" {
		return time.Now(), nil
	}
	return moment{flag: "--now"}.parse(s, time.Time{})
}

// projDash renders "" as "-" in tables.
func projDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return cellText(s)
}

// projTime renders Unix ms for tables (RFC 3339 UTC, seconds) or "-".
func projTime(t projections.UnixMillis) string {
	if t == 0 {
		return "-"
	}
	return time.UnixMilli(int64(t)).UTC().Format("2006-01-02T15:04:05Z")
}
