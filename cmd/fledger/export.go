package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/filelock"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/projections/export"
	"github.com/fledger/fledger/projections/metrics"
	"github.com/fledger/fledger/replay"
)

func init() { register(newExportCmd) }

// defaultMetricsAddr is the address the help suggests for --metrics:
// loopback only, on the port OpenTelemetry's Prometheus exporter uses.
const defaultMetricsAddr = "127.0.0.1:9464"

// exportFlags are `fledger export`'s flags.
type exportFlags struct {
	format, out, consumer, endpoint, metricsAddr string
	headers                                      []string
	// fromSeq is --from-seq (inclusive, 0 = the beginning); since is
	// --since TIME, resolved to the first commit stamped at or after it.
	fromSeq uint64
	since   string
	follow  bool
	batch   int

	otlpProtocol, otlpCompression, otlpServiceName string
	otlpTimeout                                    time.Duration
	otlpAttempts                                   int
	otlpSuccessInfo                                bool
}

// otlpFlags are the flags only --format otlp takes.
var otlpFlags = []string{"endpoint", "header", "otlp-protocol", "otlp-compression", "otlp-timeout",
	"otlp-service-name", "otlp-attempts", "otlp-success-info"}

func newExportCmd(g *globals) *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export model_fallback_decision records as JSON Lines or OpenTelemetry logs; serve Prometheus metrics",
		Long: `Export every model_fallback_decision record (one FallbackStepped event) in
stream order, with OpenClaw's field names plus seq, time (RFC 3339 UTC, ms)
and agent; previews are redacted. See docs/exporters.md.

--format jsonl writes one record per line to stdout, or appended to --out
FILE. --format otlp sends OpenTelemetry log records over OTLP/HTTP or
OTLP/gRPC, configured by the OpenTelemetry SDK environment variables
(OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_ENDPOINT,
…_HEADERS, …_PROTOCOL, …_COMPRESSION, …_TIMEOUT and their _LOGS_ forms)
unless the --endpoint, --header and --otlp-* flags override them; it
retries with jittered back-off while the collector is down or refuses.

Without --follow the export reads from --from-seq N (inclusive; default the
beginning), or from the first commit stamped at or after --since TIME, to
the stream's current end and exits. With --follow it tails the stream
through the durable JetStream consumer --consumer; a message is
acknowledged only after its records were written and flushed, or accepted
by the collector. Where a restarted --follow resumes:
  --out FILE   the file decides: it gets every record after its last
               complete line (an empty or new file: from --from-seq or
               --since, else the beginning), whatever position the
               consumer holds. Each file has its own consumer by default
               (fledger-export-jsonl-<8 hex digits of the SHA-256 of the
               file's absolute path>). A consumer standing elsewhere (e.g.
               a --consumer shared with another file) is moved there, with
               a note; one another exporter is reading is refused with an
               error (deliveries left unacknowledged are waited out first,
               up to the consumer's ack wait, 30s: a killed exporter's).
               The file is exactly-once across crashes.
  stdout, otlp the consumer decides: the export resumes where the last one
               on that consumer stopped (--from-seq and --since only set
               where a new consumer starts); a crash between delivery and
               acknowledgement may deliver that batch twice.
A file has one writer: a second export to it (one-shot or --follow) is
refused while one runs. A file holding records this ledger does not (its
last seq past the stream's end, or another record there: written from
another ledger, or before the data directory was wiped) is refused; one
whose last record is before the stream's first sequence (a stream created
with --first-seq after a rotation) is the archived period's and goes on
from the first sequence, with a note.
A stored message that is not a fledger commit is skipped and named on
stderr; --follow names the first 5, then sums the rest up once a minute.

--metrics ADDR serves Prometheus metrics at http://ADDR/metrics while the
export runs (e.g. ` + defaultMetricsAddr + `, loopback only; bind another
address only on purpose: the metrics name profiles and models).`,
		Example: `  fledger export --format jsonl
  fledger export --format jsonl --follow --out decisions.jsonl
  fledger export --format otlp --endpoint http://127.0.0.1:4318 --follow --metrics 127.0.0.1:9464
  OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 OTEL_SERVICE_NAME=fledger-eu fledger export --format otlp
  fledger export --format otlp --otlp-protocol grpc --endpoint http://127.0.0.1:4317 --follow
  fledger export --from-seq 120
  fledger export --since 1h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return untilInterrupted(cmd.Context(), f.follow, "the export", runExport(cmd, g, &f))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "jsonl", "output format: jsonl | otlp")
	fl.Uint64Var(&f.fromSeq, "from-seq", 0, "first stream sequence to export (inclusive); with --follow, only for an empty --out file or a new consumer")
	fl.StringVar(&f.since, "since", "", "export from the first commit stamped at or after this RFC 3339 time, or this long ago (e.g. 1h); with --follow, only for an empty --out file or a new consumer")
	fl.BoolVar(&f.follow, "follow", false, "keep exporting new records through a durable consumer until interrupted")
	fl.StringVar(&f.consumer, "consumer", "", "durable consumer name for --follow (default: with --out FILE fledger-export-jsonl-<8 hex of sha256(FILE's absolute path)>, one per file; else fledger-export-<format>)")
	fl.StringVar(&f.out, "out", "", "jsonl: append to FILE (exactly-once across restarts; with --follow the file decides where the export resumes) instead of stdout")
	fl.StringVar(&f.endpoint, "endpoint", "", "otlp: collector URL, e.g. http://127.0.0.1:4318 (HTTP; /v1/logs is added when no path is given) or http://127.0.0.1:4317 (gRPC) (default $OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, $OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318/v1/logs / http://localhost:4317, no TLS unless $OTEL_EXPORTER_OTLP_INSECURE=false)")
	fl.StringArrayVar(&f.headers, "header", nil, "otlp: request header KEY=VALUE (repeatable; replaces $OTEL_EXPORTER_OTLP_HEADERS)")
	fl.StringVar(&f.otlpProtocol, "otlp-protocol", "", "otlp: http/protobuf | grpc (default $OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fl.StringVar(&f.otlpCompression, "otlp-compression", "", "otlp: gzip | none (default $OTEL_EXPORTER_OTLP_COMPRESSION, else none)")
	fl.DurationVar(&f.otlpTimeout, "otlp-timeout", 0, "otlp: timeout of one request (default $OTEL_EXPORTER_OTLP_TIMEOUT in ms, else 10s)")
	fl.StringVar(&f.otlpServiceName, "otlp-service-name", "", "otlp: resource service.name (default $OTEL_SERVICE_NAME, service.name in $OTEL_RESOURCE_ATTRIBUTES, else fledger)")
	fl.IntVar(&f.otlpAttempts, "otlp-attempts", defaultOTLPAttempts, "otlp: tries per batch, with jittered back-off, before the export fails (default 1 with --follow, which retries without end)")
	fl.BoolVar(&f.otlpSuccessInfo, "otlp-success-info", false, "otlp: log candidate_succeeded records at INFO (9) instead of WARN (13)")
	fl.IntVar(&f.batch, "batch", export.DefaultBatch, "most commits per batch handed to the sink (and records per OTLP request)")
	fl.StringVar(&f.metricsAddr, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics, e.g. "+defaultMetricsAddr+" (use a loopback address unless you mean to expose them); \"\" = off")
	cmd.MarkFlagsMutuallyExclusive("from-seq", "since")
	_ = cmd.RegisterFlagCompletionFunc("format", completeValues("jsonl", "otlp"))
	_ = cmd.RegisterFlagCompletionFunc("otlp-protocol", completeValues("http/protobuf", "grpc"))
	_ = cmd.RegisterFlagCompletionFunc("otlp-compression", completeValues("gzip", "none"))
	return withMomentRule(cmd)
}

func runExport(cmd *cobra.Command, g *globals, f *exportFlags) (rerr error) {
	ctx := cmd.Context()
	if f.batch <= 0 {
		return fmt.Errorf("export: --batch must be positive")
	}
	switch f.format {
	case "jsonl":
		for _, n := range otlpFlags {
			if cmd.Flags().Changed(n) {
				return fmt.Errorf("export: --%s is for --format otlp", n)
			}
		}
	case "otlp":
		if f.otlpAttempts <= 0 {
			return fmt.Errorf("export: --otlp-attempts must be positive")
		}
		if f.follow && !cmd.Flags().Changed("otlp-attempts") {
			f.otlpAttempts = 1 // Follow retries the batch itself, without end
		}
		if f.out != "" {
			return fmt.Errorf("export: --out is for --format jsonl")
		}
	default:
		return fmt.Errorf("export: unknown --format %q (want jsonl or otlp)", f.format)
	}
	since, err := sinceMoment.parse(f.since, time.Now())
	if err != nil {
		return err
	}
	st, err := openLedger(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	if !since.IsZero() {
		// The first commit stamped at or after since follows the last
		// one stamped before it.
		before, err := replay.SeqAt(ctx, st, since.Add(-time.Nanosecond))
		if err != nil {
			return err
		}
		f.fromSeq = before + 1
	}

	_, statErr := os.Stat(f.out)
	created := f.out != "" && os.IsNotExist(statErr)
	sink, closeSink, err := exportSink(ctx, cmd, g, f)
	if err != nil {
		return err
	}
	defer func() {
		// An export refused before it wrote a record (a consumer in use,
		// a file of another ledger) leaves no empty file it created —
		// removed while this export still holds the file's lock, so it is
		// never another exporter's file that goes.
		if fi, serr := os.Stat(f.out); rerr != nil && created && serr == nil && fi.Size() == 0 {
			_ = os.Remove(f.out)
		}
		closeSink()
	}()

	if f.metricsAddr != "" {
		stop, err := serveMetrics(ctx, cmd, st, f.metricsAddr)
		if err != nil {
			return err
		}
		defer stop()
	}

	errOut := cmd.ErrOrStderr()
	if !f.follow {
		var bad []projections.Quarantined
		_, err := export.RangeReport(ctx, st, f.fromSeq, sink, f.batch, export.RangeNotes{
			Quarantined: func(de *events.DecodeError) { bad = append(bad, projections.QuarantinedOf(de)) },
			Continued:   func(c export.Continued) { fmt.Fprintf(errOut, "fledger export: note: %s\n", c) },
		})
		warnQuarantined(errOut, "export", bad)
		return err
	}
	consumer, owned := f.consumer, false
	switch {
	case consumer != "":
	case f.out != "":
		// The file's own consumer: this exporter holds the file's lock,
		// so it is the consumer's one reader — where the system locks.
		if consumer, err = export.FileConsumer(f.out); err != nil {
			return err
		}
		owned = filelock.Supported
	default:
		consumer = "fledger-export-" + f.format
	}
	warn := newFollowWarnings(errOut, "export")
	defer warn.every(ctx, followSummaryEvery)()
	if h, ok := sink.(export.Holder); ok {
		if last, ok := h.Holds(); ok && last.Seq > 0 && f.fromSeq > 0 {
			warn.printf("note: %s holds records up to seq %d: the export resumes after them (--from-seq and --since are for an empty or new file)", f.out, last.Seq)
		}
	}
	err = export.Follow(ctx, st, sink, export.FollowConfig{
		Consumer:     consumer,
		Owned:        owned,
		Since:        f.fromSeq,
		Batch:        f.batch,
		OnError:      func(err error) { warn.printf("%v", err) },
		OnQuarantine: warn.add,
		OnContinue:   func(c export.Continued) { warn.printf("note: %s", c) },
		OnMove: func(stood events.CursorState, to uint64) {
			warn.printf("consumer %s had acknowledged up to seq %d (%d unacknowledged), not where %s resumes: moved it to seq %d",
				consumer, stood.Acked, stood.Pending, f.out, to)
		},
	})
	switch {
	case errors.Is(err, events.ErrCursorInUse):
		return fmt.Errorf("export: --out %s: consumer %s is in use by another exporter; the file decides where its export resumes, so it needs the consumer to itself: stop the other exporter, or give this file its own consumer (without --consumer each file has one) (%w)", f.out, consumer, err)
	case errors.Is(err, events.ErrStreamGone):
		return fmt.Errorf("export: the stream this export followed was removed (or replaced by a rotation): the output holds every record it acknowledged; once the fresh stream exists, start the export again on the same --out and it continues after the archived range (docs/operations.md \"Start a fresh stream\") (%w)", err)
	case errors.Is(err, events.ErrCursorReplaced):
		return fmt.Errorf("export: consumer %s was moved by another exporter (one given the same --consumer), so this export stopped: the output holds every record it acknowledged; give each exporter its own consumer, then start this one again (%w)", consumer, err)
	}
	return err
}

// exportSink builds the sink --format names and its closer.
func exportSink(ctx context.Context, cmd *cobra.Command, g *globals, f *exportFlags) (export.Sink, func(), error) {
	if f.format == "otlp" {
		var hdr map[string]string // nil: $OTEL_EXPORTER_OTLP_HEADERS
		for _, h := range f.headers {
			k, v, ok := strings.Cut(h, "=")
			if !ok || k == "" {
				return nil, nil, fmt.Errorf("export: --header %q: want KEY=VALUE", h)
			}
			if hdr == nil {
				hdr = map[string]string{}
			}
			hdr[k] = v
		}
		v, _ := buildVersion()
		o, err := export.NewOTLP(ctx, export.OTLPConfig{
			Endpoint: f.endpoint, Protocol: f.otlpProtocol, Headers: hdr, Compression: f.otlpCompression,
			Timeout: f.otlpTimeout, Batch: f.batch, Attempts: f.otlpAttempts,
			ServiceName: f.otlpServiceName, ServiceVersion: v, ServiceInstanceID: serviceInstanceID(g),
			SuccessInfo: f.otlpSuccessInfo,
		})
		if err != nil {
			return nil, nil, err
		}
		return o, func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = o.Shutdown(sctx)
		}, nil
	}
	if f.out != "" {
		j, err := export.OpenJSONLFile(f.out)
		if err != nil {
			return nil, nil, err
		}
		return j, func() { _ = j.Close() }, nil
	}
	j := export.NewJSONL(cmd.OutOrStdout())
	return j, func() { _ = j.Close() }, nil
}

// defaultOTLPAttempts is --otlp-attempts' default for a one-shot export.
const defaultOTLPAttempts = 5

// instanceIDFile, in the embedded server's data directory, holds the
// OTLP resource's service.instance.id.
const instanceIDFile = "service-instance-id"

// serviceInstanceID is the OTLP resource's service.instance.id, stable
// per ledger host: on the embedded server, a random UUID created once and
// kept in <data>/service-instance-id; with --nats (or when that file
// cannot be written), a UUID derived from the host name (and --data when
// given), so the same host reports the same id on every run.
func serviceInstanceID(g *globals) string {
	if g.NATSURL == "" {
		p := filepath.Join(g.DataDir, instanceIDFile)
		if b, err := os.ReadFile(p); err == nil {
			if id, err := uuid.Parse(strings.TrimSpace(string(b))); err == nil {
				return id.String()
			}
		}
		// Created exclusively: of two exports starting on a new data
		// directory at once, one writes the id and the other reads it.
		id := uuid.New().String()
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			_, werr := f.WriteString(id + "\n")
			if cerr := f.Close(); werr == nil && cerr == nil {
				return id
			}
		} else if os.IsExist(err) {
			if b, err := os.ReadFile(p); err == nil {
				if id, err := uuid.Parse(strings.TrimSpace(string(b))); err == nil {
					return id.String()
				}
			}
		}
	}
	host, _ := os.Hostname()
	name := "fledger:" + host
	if g.DataSet {
		if abs, err := filepath.Abs(g.DataDir); err == nil {
			name += ":" + abs
		}
	}
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String()
}

// serveMetrics folds the stream into Prometheus metrics in the background
// and serves them at addr/metrics until stop is called.
func serveMetrics(ctx context.Context, cmd *cobra.Command, st events.Store, addr string) (stop func(), err error) {
	m := metrics.New(metrics.WithStore(st), metrics.WithProcessMetrics())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("export: --metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	fctx, cancel := context.WithCancel(ctx)
	errOut := cmd.ErrOrStderr()
	go func() {
		if err := m.Follow(fctx, st); err != nil {
			fmt.Fprintln(errOut, "fledger export: metrics:", err)
		}
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(errOut, "fledger export: metrics:", err)
		}
	}()
	fmt.Fprintf(errOut, "fledger export: metrics at http://%s/metrics\n", ln.Addr())
	return func() {
		cancel()
		sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		defer c()
		_ = srv.Shutdown(sctx)
	}, nil
}
