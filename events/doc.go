// Package events is fledger's event vocabulary and its JetStream event store.
//
// Every fact fledger knows is an [Envelope] carrying one typed payload from
// the catalog (catalog_*.go, documented in docs/events.md). Payload types
// are registered with a [Registry] under a type name and schema version,
// with [Upcaster] functions from older versions; the codec refuses anything
// the registry does not know. Build events with [New].
//
// One decision is one atomic append: a [Commit] of one or more envelopes
// stored as a single JetStream message by [Store.Append], guarded by the
// expected last sequence of a subject (optimistic concurrency, a
// *[ConflictError] when it fails) and de-duplicated by the first event's id.
// [Open] starts an embedded NATS server on a data directory (or connects to
// one with [WithURL]) and creates or checks the FLEDGER stream.
//
// Subjects name the aggregate an append guards:
// fledger.<agent>.<aggregate>.<key>, with agent and key encoded so that no
// input can add a token or a wildcard (see [Subject], [EncodeToken]).
//
// Times in payloads are Unix milliseconds in UTC (int64), the unit OpenClaw's
// usageStats use; 0 means "not set". Envelope times are RFC 3339 UTC with
// millisecond precision.
//
// Errors wrap the sentinels in errors.go (ErrConflict, ErrUnknownType,
// ErrInvalidPayload, ErrTooLarge, ErrDecode, ErrLocked, …); test them with
// errors.Is and reach the details with errors.As.
package events
