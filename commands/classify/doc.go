// Package classify decides what a provider failure means for failover: a
// [Reason] (the sixteen-name set), a visible HTTP status, a [Disposition]
// (failover, compaction, abort, refusal, coordination), the provider's
// requested wait, a request-size [Ceiling] when there is one, and the
// [Evidence] that decided it.
//
// The rules follow OpenClaw 2026.9.6 (shared/spec/openclaw-reference.md §1,
// §2, §12) where OpenClaw is right, and the seeds and POLICY.md where they
// differ; every deliberate difference is listed in docs/classification.md
// with the real error that shows why.
//
// # Pipeline
//
// For each error in the cause chain (outermost first, at most 25 levels,
// cycle-safe), [Classify] runs reference §2.1:
//
//  1. the status: explicit, else the message's leading "HTTP 410:"/"402 …";
//  2. the message rules (rules.go ids msg01…msg29, first match wins) over
//     the message, merged with the same rules over the details: the body and
//     every message found in JSON inside the message or body (OpenRouter
//     metadata.raw, Gemini's JSON-in-JSON, Python reprs, Bedrock
//     event-stream dumps);
//  3. the provider plugin (OpenRouter, Together, xAI, Ollama);
//  4. TLS certificate errors with no status; with still no status, the
//     provider's own status written inside the text ("Error code: 400",
//     "<400>", {"error":{"code":429}}), which only fills a gap; HTML error
//     pages by status only;
//  5. the structured code verdict (code field, non-numeric status, codes in
//     embedded JSON) and the provider code tables (provider_codes.go, one
//     rule id per provider's documentation): a definitive provider code
//     beats the message verdict (except a context overflow) and the status
//     default; a generic one (InvalidParameter, ValidationException) only
//     fills in when no message rule decided;
//  6. a request-size ceiling, then the status rules (status.*); a wrapper's
//     explicit 5xx around the provider's own 4xx is judged by the 4xx.
//
// The first error in the chain with a verdict other than context_overflow
// decides (reference §2.7); then error names (TimeoutError, AbortError);
// then unclassified or empty_response. Refusals (content filters, safety
// blocks: refusal codes, coined moderation codes, the refusal lexicon) set
// the disposition whatever the reason; a refusal nothing else classified
// has reason format.
//
// Rules are data: marker tables (tables.go), code and type tables
// (codes.go, provider_codes.go), each row commented with the provider that
// sends it. All phrases compile into one Aho–Corasick automaton, so a
// message is lower-cased and scanned once; regexes and structural shapes
// (shapes.go) run only when their gate phrases are present, on bounded
// windows.
//
// # Purity and limits
//
// Classify reads no clock and writes no shared state; the same input always
// gives the same Result. [ClassifyAt] takes the decision time for HTTP-date
// Retry-After values. Each field is scanned over its first 64 KiB and last
// 8 KiB; embedded JSON is read to depth 25 and at most 1 MiB of work per
// text, so a 10 MB message or a 10 000-deep cause chain costs a bounded
// amount.
//
// Evidence previews leave the package redacted with
// [github.com/fledger/fledger/internal/redact].
package classify
