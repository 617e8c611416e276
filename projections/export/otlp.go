package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ScopeName is the instrumentation scope of the exported log records.
const ScopeName = "github.com/fledger/fledger/projections/export"

// Protocols of [OTLPConfig].Protocol, as OTEL_EXPORTER_OTLP_PROTOCOL
// spells them.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// OTLPConfig configures [NewOTLP]. Every field is optional: a zero field
// leaves the setting to the OpenTelemetry SDK environment variables
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_EXPORTER_OTLP_[LOGS_]{ENDPOINT,HEADERS,PROTOCOL,COMPRESSION,TIMEOUT}
// …) and then to the specification's defaults; a set field overrides
// them.
type OTLPConfig struct {
	// Endpoint is the collector's URL. OTLP/HTTP: e.g.
	// "http://127.0.0.1:4318" (the path /v1/logs is added when the URL has
	// none) or "https://collector:4318/v1/logs". gRPC: e.g.
	// "http://127.0.0.1:4317" (http:// = no TLS). http:// sends in clear.
	// "" = OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else
	// OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/logs for HTTP), else
	// http://localhost:4318/v1/logs (HTTP) or http://localhost:4317 (gRPC),
	// both without TLS unless OTEL_EXPORTER_OTLP_[LOGS_]INSECURE is false.
	Endpoint string
	// Protocol is [ProtocolHTTP] or [ProtocolGRPC]; "" =
	// OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
	// else http/protobuf.
	Protocol string
	// Headers are sent with every request (e.g. an authorization header);
	// nil = OTEL_EXPORTER_OTLP_[LOGS_]HEADERS. Set, they replace those.
	Headers map[string]string
	// Compression is "gzip" or "none"; "" =
	// OTEL_EXPORTER_OTLP_[LOGS_]COMPRESSION, else none.
	Compression string
	// Timeout bounds one request; 0 = OTEL_EXPORTER_OTLP_[LOGS_]TIMEOUT
	// (milliseconds), else 10 s.
	Timeout time.Duration
	// RetryInitial, RetryMax and RetryElapsed configure the SDK exporter's
	// retry of retryable answers (HTTP 429, 502, 503, 504 and Retry-After;
	// gRPC Unavailable, ResourceExhausted with retry info, …): exponential
	// back-off with jitter from RetryInitial (default 1 s) to RetryMax
	// (default 10 s), giving up after RetryElapsed (default 1 min).
	RetryInitial, RetryMax, RetryElapsed time.Duration
	// Attempts is how many times Export tries a batch in all before it
	// fails (default 1: the caller, e.g. [Follow], retries). Each try is
	// the SDK's retrying export above; between tries (a collector that is
	// down, a budget spent) it waits a jittered back-off from
	// AttemptInitial (default 1 s) doubling to AttemptMax (default 10 s).
	Attempts                   int
	AttemptInitial, AttemptMax time.Duration
	// Batch is the most records sent in one request; default
	// [DefaultBatch].
	Batch int
	// ServiceName overrides the resource's service.name; "" =
	// OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES,
	// else "fledger".
	ServiceName string
	// ServiceVersion and ServiceInstanceID are the resource's
	// service.version and service.instance.id unless
	// OTEL_RESOURCE_ATTRIBUTES sets them; "" = not sent.
	ServiceVersion, ServiceInstanceID string
	// SuccessInfo logs candidate_succeeded records at INFO (9) instead of
	// WARN (13), the severity of every other decision.
	SuccessInfo bool
}

func (c *OTLPConfig) setDefaults() {
	if c.RetryInitial <= 0 {
		c.RetryInitial = time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 10 * time.Second
	}
	if c.RetryElapsed <= 0 {
		c.RetryElapsed = time.Minute
	}
	if c.Attempts <= 0 {
		c.Attempts = 1
	}
	if c.AttemptInitial <= 0 {
		c.AttemptInitial = time.Second
	}
	if c.AttemptMax <= 0 {
		c.AttemptMax = 10 * time.Second
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.Protocol == "" {
		c.Protocol = firstEnv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if c.Protocol == "" {
		c.Protocol = ProtocolHTTP
	}
}

// firstEnv returns the first non-empty of the environment variables keys.
func firstEnv(keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			return v
		}
	}
	return ""
}

// ErrEndpoint is returned by [NewOTLP] for a malformed endpoint URL.
var ErrEndpoint = errors.New("export: invalid OTLP endpoint")

// ErrProtocol is returned by [NewOTLP] for a protocol other than
// http/protobuf and grpc (http/json is not supported).
var ErrProtocol = errors.New("export: unsupported OTLP protocol")

// OTLP is a [Sink] sending each record as an OpenTelemetry log record over
// OTLP/HTTP (protobuf) or OTLP/gRPC with the official Go SDK: an sdk/log
// BatchProcessor in front of the otlploghttp or otlploggrpc exporter,
// flushed synchronously at the end of every chunk of up to Batch records
// so that Export returns nil only after the collector accepted them. The
// processor never exports on its own (its interval is unbounded and its
// queue holds two chunks), so no record is ever sent — or lost — behind
// the caller's back.
//
// Each log record: event name model_fallback_decision, body the record's
// consoleMessage (or "model_fallback_decision <decision>
// <provider>/<model>"), timestamp = the decision time, observed timestamp
// = now, severity WARN (13; OpenClaw logs the decision at warn) or INFO
// (9) for a success with [OTLPConfig].SuccessInfo, attributes from
// [OTLPAttributes]. Resource: service.name, service.version,
// service.instance.id, telemetry.sdk.*, and OTEL_RESOURCE_ATTRIBUTES. Not
// safe for concurrent use.
type OTLP struct {
	cfg      OTLPConfig
	endpoint string
	proc     *sdklog.BatchProcessor
	provider *sdklog.LoggerProvider
	logger   log.Logger
	last     cursor
}

// NewOTLP builds the OTLP sink. Errors wrap [ErrEndpoint] or
// [ErrProtocol], or come from the SDK.
func NewOTLP(ctx context.Context, cfg OTLPConfig) (*OTLP, error) {
	cfg.setDefaults()
	var (
		exp      sdklog.Exporter
		err      error
		endpoint string
	)
	switch cfg.Protocol {
	case ProtocolHTTP:
		exp, endpoint, err = httpExporter(ctx, &cfg)
	case ProtocolGRPC:
		exp, endpoint, err = grpcExporter(ctx, &cfg)
	default:
		return nil, fmt.Errorf("%w: %q (want %s or %s)", ErrProtocol, cfg.Protocol, ProtocolHTTP, ProtocolGRPC)
	}
	if err != nil {
		return nil, err
	}
	res, err := otlpResource(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	proc := sdklog.NewBatchProcessor(exp,
		sdklog.WithExportInterval(time.Duration(math.MaxInt64)),
		sdklog.WithMaxQueueSize(2*cfg.Batch),
		sdklog.WithExportMaxBatchSize(2*cfg.Batch),
		sdklog.WithExportTimeout(cfg.RetryElapsed+2*requestTimeout(&cfg)),
	)
	// WithResource merges resource.Environment() under res; res already
	// holds the environment's attributes below the explicit overrides.
	provider := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(proc))
	return &OTLP{cfg: cfg, endpoint: endpoint, proc: proc, provider: provider, logger: provider.Logger(ScopeName)}, nil
}

// Endpoint is where the sink sends (for messages): the configured URL, or
// the one the environment or the default names.
func (o *OTLP) Endpoint() string { return o.endpoint }

// otlpResource builds the resource: fledger's defaults (service.name
// "fledger", service.version, service.instance.id), overridden by
// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, overridden by
// cfg.ServiceName; plus telemetry.sdk.*.
func otlpResource(ctx context.Context, cfg *OTLPConfig) (*resource.Resource, error) {
	defaults := []attribute.KeyValue{semconv.ServiceName("fledger")}
	if cfg.ServiceVersion != "" {
		defaults = append(defaults, semconv.ServiceVersion(cfg.ServiceVersion))
	}
	if cfg.ServiceInstanceID != "" {
		defaults = append(defaults, semconv.ServiceInstanceID(cfg.ServiceInstanceID))
	}
	opts := []resource.Option{
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithTelemetrySDK(),
		resource.WithAttributes(defaults...),
		resource.WithFromEnv(),
	}
	if cfg.ServiceName != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceName(cfg.ServiceName)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("export: otlp resource: %w", err)
	}
	return res, nil
}

// requestTimeout is the effective per-request timeout.
func requestTimeout(cfg *OTLPConfig) time.Duration {
	if cfg.Timeout > 0 {
		return cfg.Timeout
	}
	if v := firstEnv("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	return 10 * time.Second
}

// parseEndpoint checks an explicit endpoint URL.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q (want http(s)://host:port[/path])", ErrEndpoint, raw)
	}
	return u, nil
}

// checkEnvEndpoints refuses an OTEL_EXPORTER_OTLP_(LOGS_)ENDPOINT that is
// not an http(s) URL, as --endpoint is refused: the SDK would log it and
// send to its default port instead (127.0.0.1:4317 for "127.0.0.1:14317").
func checkEnvEndpoints() error {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v := firstEnv(k); v != "" {
			if _, err := parseEndpoint(v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return nil
}

// envEndpoint names the endpoint the SDK takes from the environment, for
// messages: the signal-specific variable as is, the generic one with
// path appended (HTTP); ok is false when neither is set.
func envEndpoint(path string) (endpoint string, ok bool) {
	if v := firstEnv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"); v != "" {
		return v, true
	}
	if v := firstEnv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		return strings.TrimRight(v, "/") + path, true
	}
	return "", false
}

// The endpoints an exporter sends to when neither the config nor the
// environment names one: the OTLP specification's defaults, plain http on
// localhost (a collector's default receivers have no TLS). Variables so
// that a test can point them at its own server.
var (
	defaultHTTPEndpoint = "http://localhost:4318/v1/logs"
	defaultGRPCEndpoint = "http://localhost:4317"
)

// defaultEndpoint is def (an http:// URL), or def over TLS (https://)
// when OTEL_EXPORTER_OTLP_LOGS_INSECURE, else OTEL_EXPORTER_OTLP_INSECURE,
// is "false": whoever set it asked for TLS. The SDK's own default
// (localhost without a scheme, TLS unless INSECURE is true) is never
// used: it sent TLS to the plain-http port the log line named.
func defaultEndpoint(def string) string {
	if strings.EqualFold(firstEnv("OTEL_EXPORTER_OTLP_LOGS_INSECURE", "OTEL_EXPORTER_OTLP_INSECURE"), "false") {
		return "https://" + strings.TrimPrefix(def, "http://")
	}
	return def
}

// resolveEndpoint is the endpoint an exporter sends to: cfg.Endpoint
// when given (path, when set, filling an empty path), else the one the
// SDK takes from the environment (checked like cfg.Endpoint; fromEnv:
// the SDK is left to read it), else [defaultEndpoint] of def.
func resolveEndpoint(cfg *OTLPConfig, path, def string) (endpoint string, fromEnv bool, err error) {
	if cfg.Endpoint == "" {
		if err := checkEnvEndpoints(); err != nil {
			return "", false, err
		}
		if e, ok := envEndpoint(path); ok {
			return e, true, nil
		}
		return defaultEndpoint(def), false, nil
	}
	u, err := parseEndpoint(cfg.Endpoint)
	if err != nil {
		return "", false, err
	}
	if path != "" && (u.Path == "" || u.Path == "/") {
		u.Path = path
	}
	return u.String(), false, nil
}

func httpExporter(ctx context.Context, cfg *OTLPConfig) (sdklog.Exporter, string, error) {
	opts := []otlploghttp.Option{
		otlploghttp.WithRetry(otlploghttp.RetryConfig{
			Enabled:         true,
			InitialInterval: cfg.RetryInitial,
			MaxInterval:     cfg.RetryMax,
			MaxElapsedTime:  cfg.RetryElapsed,
		}),
	}
	endpoint, fromEnv, err := resolveEndpoint(cfg, "/v1/logs", defaultHTTPEndpoint)
	if err != nil {
		return nil, "", err
	}
	if !fromEnv {
		opts = append(opts, otlploghttp.WithEndpointURL(endpoint))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, otlploghttp.WithTimeout(cfg.Timeout))
	}
	if cfg.Headers != nil {
		opts = append(opts, otlploghttp.WithHeaders(cfg.Headers))
	}
	switch cfg.Compression {
	case "":
	case "gzip":
		opts = append(opts, otlploghttp.WithCompression(otlploghttp.GzipCompression))
	case "none":
		opts = append(opts, otlploghttp.WithCompression(otlploghttp.NoCompression))
	default:
		return nil, "", fmt.Errorf("export: otlp compression %q (want gzip or none)", cfg.Compression)
	}
	exp, err := otlploghttp.New(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("export: otlp exporter: %w", err)
	}
	return exp, endpoint, nil
}

func grpcExporter(ctx context.Context, cfg *OTLPConfig) (sdklog.Exporter, string, error) {
	opts := []otlploggrpc.Option{
		otlploggrpc.WithRetry(otlploggrpc.RetryConfig{
			Enabled:         true,
			InitialInterval: cfg.RetryInitial,
			MaxInterval:     cfg.RetryMax,
			MaxElapsedTime:  cfg.RetryElapsed,
		}),
	}
	endpoint, fromEnv, err := resolveEndpoint(cfg, "", defaultGRPCEndpoint)
	if err != nil {
		return nil, "", err
	}
	if !fromEnv {
		opts = append(opts, otlploggrpc.WithEndpointURL(endpoint))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, otlploggrpc.WithTimeout(cfg.Timeout))
	}
	if cfg.Headers != nil {
		opts = append(opts, otlploggrpc.WithHeaders(cfg.Headers))
	}
	switch cfg.Compression {
	case "", "none":
		if cfg.Compression == "none" {
			opts = append(opts, otlploggrpc.WithCompressor(""))
		}
	case "gzip":
		opts = append(opts, otlploggrpc.WithCompressor("gzip"))
	default:
		return nil, "", fmt.Errorf("export: otlp compression %q (want gzip or none)", cfg.Compression)
	}
	exp, err := otlploggrpc.New(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("export: otlp exporter: %w", err)
	}
	return exp, endpoint, nil
}

// Export implements [Sink]: it emits the records not yet accepted, in
// chunks of up to Batch, and after each chunk flushes the processor and
// waits for the collector's answer (after the exporter's own retries). A
// chunk the collector accepted is not sent again when the caller offers
// the batch once more after a later chunk failed. With Attempts > 1 a
// failed batch is tried again after a jittered back-off; the last error
// names the endpoint and the number of attempts.
func (o *OTLP) Export(ctx context.Context, recs []Record) error {
	delay := o.cfg.AttemptInitial
	for try := 1; ; try++ {
		err := o.export(ctx, recs)
		if err == nil {
			return nil
		}
		if try >= o.cfg.Attempts || ctx.Err() != nil || permanentOTLP(err) {
			if o.cfg.Attempts > 1 {
				return fmt.Errorf("export: otlp %s: gave up after %d attempts: %w", o.endpoint, try, err)
			}
			return fmt.Errorf("export: otlp %s: %w", o.endpoint, err)
		}
		// Equal jitter: half the back-off fixed, half random.
		wait := delay/2 + rand.N(delay/2+1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("export: otlp %s: %w", o.endpoint, err)
		case <-t.C:
		}
		delay = min(2*delay, o.cfg.AttemptMax)
	}
}

// permanentOTLP reports an answer the OTLP specification says not to
// retry: an HTTP 4xx other than 429 (the exporter's error text carries the
// status), or a gRPC InvalidArgument, Unauthenticated, PermissionDenied,
// Unimplemented or NotFound.
func permanentOTLP(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.Unauthenticated, codes.PermissionDenied, codes.Unimplemented, codes.NotFound:
		return true
	}
	m := httpStatusInText.FindStringSubmatch(err.Error())
	return m != nil && m[1] != "429"
}

// httpStatusInText finds an HTTP 4xx status as the exporters write it
// ("… 400 Bad Request", "status 401").
var httpStatusInText = regexp.MustCompile(`\b(4\d\d) [A-Z][a-z]`)

func (o *OTLP) export(ctx context.Context, recs []Record) error {
	var pending []*Record
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := o.proc.ForceFlush(ctx); err != nil {
			return err
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
		lr, err := logRecord(r, now, o.cfg.SuccessInfo)
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

// SuccessDecision is the decision [OTLPConfig].SuccessInfo logs at INFO.
const SuccessDecision = "candidate_succeeded"

// logRecord converts r to an OpenTelemetry log record.
func logRecord(r *Record, now time.Time, successInfo bool) (log.Record, error) {
	var lr log.Record
	lr.SetEventName(EventName)
	if r.Time != 0 {
		lr.SetTimestamp(time.UnixMilli(int64(r.Time)))
	}
	lr.SetObservedTimestamp(now)
	if successInfo && r.Decision == SuccessDecision {
		lr.SetSeverity(log.SeverityInfo)
		lr.SetSeverityText("INFO")
	} else {
		lr.SetSeverity(log.SeverityWarn)
		lr.SetSeverityText("WARN")
	}
	body := r.ConsoleMessage
	if body == "" {
		body = EventName + " " + r.Decision + " " + r.CandidateProvider + "/" + r.CandidateModel
	}
	lr.SetBody(attribute.StringValue(body))
	attrs, err := OTLPAttributes(r)
	if err != nil {
		return lr, err
	}
	lr.AddAttributes(attrs...)
	return lr, nil
}

// Semantic-convention attribute keys [OTLPAttributes] adds. The gen_ai.*
// names are from the OpenTelemetry GenAI semantic conventions (status:
// development), the others from the stable registry.
const (
	AttrGenAIProviderName  = "gen_ai.provider.name"
	AttrGenAIRequestModel  = "gen_ai.request.model"
	AttrGenAIResponseModel = "gen_ai.response.model"
	AttrGenAIAgentID       = "gen_ai.agent.id"
	AttrSessionID          = "session.id"
	AttrErrorType          = "error.type"
	AttrHTTPStatusCode     = "http.response.status_code"
)

// OTLPAttributes returns the attributes of r's log record: every field of
// [Attributes] except event and time (they are the log record's event
// name and timestamp), then the semantic-convention attributes for what
// they cover: gen_ai.provider.name = candidateProvider,
// gen_ai.request.model = candidateModel (the model this attempt asked),
// gen_ai.response.model = candidateModel on candidate_succeeded,
// gen_ai.agent.id = agent, session.id = sessionId, error.type = code,
// else reason, on candidate_failed, http.response.status_code
// = status when there is one.
func OTLPAttributes(r *Record) ([]attribute.KeyValue, error) {
	all, err := Attributes(r)
	if err != nil {
		return nil, err
	}
	out := make([]attribute.KeyValue, 0, len(all)+7)
	for _, kv := range all {
		if kv.Key != "event" && kv.Key != "time" {
			out = append(out, kv)
		}
	}
	str := func(k, v string) {
		if v != "" {
			out = append(out, attribute.String(k, v))
		}
	}
	str(AttrGenAIProviderName, r.CandidateProvider)
	str(AttrGenAIRequestModel, r.CandidateModel)
	if r.Decision == SuccessDecision {
		str(AttrGenAIResponseModel, r.CandidateModel)
	}
	str(AttrGenAIAgentID, r.Agent)
	str(AttrSessionID, r.SessionID)
	if r.Decision == "candidate_failed" {
		if r.Code != "" {
			str(AttrErrorType, r.Code)
		} else {
			str(AttrErrorType, r.Reason)
		}
	}
	if r.Status > 0 {
		out = append(out, attribute.Int(AttrHTTPStatusCode, r.Status))
	}
	return out, nil
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
	// The record's own fields in its JSON order (a map value would sort
	// them); nested objects are map values.
	if _, err := dec.Token(); err != nil { // '{'
		return nil, fmt.Errorf("export: record seq %d: %w", r.Seq, err)
	}
	var kvs []attribute.KeyValue
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("export: record seq %d: %w", r.Seq, err)
		}
		v, err := jsonValue(dec)
		if err != nil {
			return nil, fmt.Errorf("export: record seq %d: %w", r.Seq, err)
		}
		kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(kt.(string)), Value: v})
	}
	return kvs, nil
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
