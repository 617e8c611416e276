// Package events is fledger's event vocabulary and its JetStream event store.
//
// Every fact fledger knows is an [Envelope] carrying one typed payload from
// the catalog (catalog_*.go). Payload types register themselves with the
// package [Registry] under a type name and schema version; the codec refuses
// anything the registry does not know. One decision is one atomic append: a
// [Commit] of one or more envelopes stored as a single JetStream message.
//
// Subjects name the aggregate an append guards:
// fledger.<agent>.<aggregate>.<key>, with agent and key encoded so that no
// input can add a token or a wildcard (see [Subject]).
//
// Times in payloads are Unix milliseconds in UTC (int64), the unit OpenClaw's
// usageStats use; 0 means "not set". Envelope times are RFC 3339 UTC with
// millisecond precision.
package events
