// Package export is the read side that emits model_fallback_decision
// records: every FallbackStepped event on the stream, in stream order, as a
// [Record]: a projections.DecisionRecord, OpenClaw's field names
// (reference §8) plus the stream position, the decision time and the
// agent — the same record GET /v1/decisions and `fledger decisions --json`
// write.
//
// A [Sink] receives records in batches: [JSONL] writes JSON Lines to a
// writer or a file, [OTLP] sends OpenTelemetry log records over OTLP/HTTP or
// OTLP/gRPC with the official Go SDK. [Range] exports a stream range once;
// [Follow] tails the stream through a durable JetStream pull consumer and
// acknowledges each message only after the sink delivered its records, so
// a restarted exporter resumes where the last one stopped.
//
// Delivery guarantees (docs/exporters.md "Resume semantics"): at the
// JetStream level delivery is at least once — a crash after the sink
// delivered a batch and before the acknowledgement reached the server
// redelivers that batch. A [JSONL] file sink opened with [OpenJSONLFile]
// closes that gap: it reads the position of its last complete line and
// drops records at or before it, so the file holds every record exactly
// once, in order. Such a file (a [Holder]) also decides where [Follow]
// resumes, not the consumer's position: a consumer standing elsewhere is
// moved to the file's last record (a new file gets the whole range), and
// one another exporter reads is refused. For stdout and OTLP the
// consumer's position decides.
package export
