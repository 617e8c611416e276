package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
)

// ScopeName is the instrumentation scope of the exported log records.
const ScopeName = "github.com/fledger/fledger/projections/export"

// OTLPConfig configures [NewOTLP]. Only Endpoint is required.
type OTLPConfig struct {
	// Endpoint is the collector's OTLP/HTTP URL, e.g.
	// "http://127.0.0.1:4318" (the path /v1/logs is added when the URL has
	// none) or "https://collector:4318/v1/logs". http:// sends in clear.
	Endpoint string
	// Headers are sent with every request (e.g. an authorization header).
	Headers map[string]string
	// Timeout bounds one HTTP request; default 10 s.
	Timeout time.Duration
	// RetryInitial, RetryMax and RetryElapsed configure the SDK exporter's
	// retry of retryable responses (429, 502, 503, 504, and a Retry-After
	// the collector sends): exponential back-off from RetryInitial (default
	// 1 s) to RetryMax (default 10 s), giving up after RetryElapsed
	// (default 1 min); then Export fails and the caller ([Follow]) tries the
	// batch again later without acknowledging it.
	RetryInitial, RetryMax, RetryElapsed time.Duration
	// Batch is the most records sent in one request; default
	// [DefaultBatch].
	Batch int
	// ServiceName is the resource's service.name; default "fledger".
	ServiceName string
}

func (c *OTLPConfig) setDefaults() {
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.RetryInitial <= 0 {
		c.RetryInitial = time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 10 * time.Second
	}
	if c.RetryElapsed <= 0 {
		c.RetryElapsed = time.Minute
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.ServiceName == "" {
		c.ServiceName = "fledger"
	}
}

// ErrEndpoint is returned by [NewOTLP] for a missing or malformed endpoint
// URL.
var ErrEndpoint = errors.New("export: invalid OTLP endpoint")

// OTLP is a [Sink] sending each record as an OpenTelemetry log record over
// OTLP/HTTP (protobuf) with the official Go SDK: an sdk/log BatchProcessor
// in front of the otlploghttp exporter, flushed synchronously at the end of
// every chunk of up to Batch records so that Export returns nil only after
// the collector accepted them. The processor never exports on its own
// (its interval is unbounded and its queue holds two chunks), so no record
// is ever sent — or lost — behind the caller's back.
//
// Each log record: event name and body "model_fallback_decision"-based
// (body = the record's consoleMessage, or "model_fallback_decision
// <decision> <candidate>"), timestamp = the decision time, observed
// timestamp = now, severity WARN (OpenClaw logs the decision at warn), and
// one attribute per record field with its JSON name and type (strings,
// int64, bool, string slices for tags, a slice of maps for
// previousAttempts). Resource: service.name. Not safe for concurrent use.
type OTLP struct {
	cfg      OTLPConfig
	proc     *sdklog.BatchProcessor
	provider *sdklog.LoggerProvider
	logger   log.Logger
	last     cursor
}

// NewOTLP builds the OTLP sink. Errors wrap [ErrEndpoint], or come from
// the SDK exporter.
func NewOTLP(ctx context.Context, cfg OTLPConfig) (*OTLP, error) {
	cfg.setDefaults()
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q (want http(s)://host:port[/path])", ErrEndpoint, cfg.Endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/logs"
	}
	opts := []otlploghttp.Option{
		otlploghttp.WithEndpointURL(u.String()),
		otlploghttp.WithTimeout(cfg.Timeout),
		otlploghttp.WithRetry(otlploghttp.RetryConfig{
			Enabled:         true,
			InitialInterval: cfg.RetryInitial,
			MaxInterval:     cfg.RetryMax,
			MaxElapsedTime:  cfg.RetryElapsed,
		}),
	}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlploghttp.WithHeaders(cfg.Headers))
	}
	exp, err := otlploghttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("export: otlp exporter: %w", err)
	}
	proc := sdklog.NewBatchProcessor(exp,
		sdklog.WithExportInterval(time.Duration(math.MaxInt64)),
		sdklog.WithMaxQueueSize(2*cfg.Batch),
		sdklog.WithExportMaxBatchSize(2*cfg.Batch),
		sdklog.WithExportTimeout(cfg.RetryElapsed+cfg.Timeout),
	)
	res := resource.NewSchemaless(attribute.String("service.name", cfg.ServiceName))
	provider := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(proc))
	return &OTLP{cfg: cfg, proc: proc, provider: provider, logger: provider.Logger(ScopeName)}, nil
}

// Export implements [Sink]: it emits the records not yet accepted, in
// chunks of up to Batch, and after each chunk flushes the processor and
// waits for the collector's answer (after the exporter's own retries). A
// chunk the collector accepted is not sent again when the caller offers
// the batch once more after a later chunk failed.
func (o *OTLP) Export(ctx context.Context, recs []Record) error {
	var pending []*Record
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := o.proc.ForceFlush(ctx); err != nil {
			return fmt.Errorf("export: otlp: %w", err)
		}
		o.last.advance(pending[len(pending)-1])
		pending = pending[:0]
		return nil
	}
	now := time.Now()
	for i := range recs {
		r := &recs[i]
		if o.last.delivered(r) {
			continue
		}
		lr, err := logRecord(r, now)
		if err != nil {
			return err
		}
		o.logger.Emit(ctx, lr)
		pending = append(pending, r)
		if len(pending) == o.cfg.Batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// Shutdown flushes what is left and shuts the pipeline down.
func (o *OTLP) Shutdown(ctx context.Context) error { return o.provider.Shutdown(ctx) }

// logRecord converts r to an OpenTelemetry log record.
func logRecord(r *Record, now time.Time) (log.Record, error) {
	var lr log.Record
	lr.SetEventName(EventName)
	if t, err := time.Parse(TimeLayout, r.Time); err == nil {
		lr.SetTimestamp(t)
	}
	lr.SetObservedTimestamp(now)
	lr.SetSeverity(log.SeverityWarn)
	lr.SetSeverityText("WARN")
	body := r.ConsoleMessage
	if body == "" {
		body = EventName + " " + r.Decision + " " + r.CandidateProvider + "/" + r.CandidateModel
	}
	lr.SetBody(attribute.StringValue(body))
	attrs, err := Attributes(r)
	if err != nil {
		return lr, err
	}
	lr.AddAttributes(attrs...)
	return lr, nil
}

// Attributes returns r's fields as typed OpenTelemetry attributes, in the
// record's JSON field order and with its JSON names (the same fields a
// JSONL line has): strings, int64 for integers, bool, a string slice for
// tags and a slice of maps for previousAttempts.
func Attributes(r *Record) ([]attribute.KeyValue, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("export: encode record seq %d: %w", r.Seq, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := jsonValue(dec)
	if err != nil {
		return nil, fmt.Errorf("export: record seq %d: %w", r.Seq, err)
	}
	return v.AsMap(), nil
}

// jsonValue reads one JSON value from dec as an attribute value, keeping
// object key order.
func jsonValue(dec *json.Decoder) (attribute.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return attribute.Value{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var kvs []attribute.KeyValue
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return attribute.Value{}, err
				}
				v, err := jsonValue(dec)
				if err != nil {
					return attribute.Value{}, err
				}
				kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(kt.(string)), Value: v})
			}
			_, err := dec.Token() // '}'
			return attribute.MapValue(kvs...), err
		case '[':
			var vs []attribute.Value
			for dec.More() {
				v, err := jsonValue(dec)
				if err != nil {
					return attribute.Value{}, err
				}
				vs = append(vs, v)
			}
			_, err := dec.Token() // ']'
			return attribute.SliceValue(vs...), err
		}
	case string:
		return attribute.StringValue(t), nil
	case bool:
		return attribute.BoolValue(t), nil
	case json.Number:
		if !strings.ContainsAny(t.String(), ".eE") {
			if i, err := t.Int64(); err == nil {
				return attribute.Int64Value(i), nil
			}
		}
		f, err := t.Float64()
		return attribute.Float64Value(f), err
	case nil:
		return attribute.StringValue(""), nil
	}
	return attribute.Value{}, fmt.Errorf("unexpected JSON token %v", tok)
}
