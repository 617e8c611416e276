package events

// MaxExactInt is 2^53−1, the largest integer every JSON reader holds
// exactly: JavaScript (Number.MAX_SAFE_INTEGER), jq and any reader whose
// numbers are float64 round integers above it (issue 19).
//
// Every integer fledger stores or prints as a JSON number stays within
// ±MaxExactInt: times are Unix ms (2^53 ms is the year 287396);
// durations, retry-after and resets are capped at about a year by the
// classifier and the config bounds; counts, attempts, statuses and rule
// revisions are small; stream sequences would need 2^53 messages; a
// latency a caller reports and a credential expiry in a config are
// refused above it, and so are token counts read from a provider's text.
// The two uint64 values that use the whole range, TurnStarted.seed and
// RetryScheduled.jitter_seed, are written as decimal strings (TurnStarted
// v3, RetryScheduled v2; docs/events.md "Versions and upcasters").
const MaxExactInt = 1<<53 - 1

// FirstSeqHeadroom is the least room [WithFirstSeq] leaves between a
// stream's first sequence and MaxExactInt: 2^50 sequences, about 3,500
// years at 10k commits/s. A stream continuing an archived one starts at
// the archive's last sequence + 1, far below; a first sequence close to
// MaxExactInt would make the stream's sequences (seq, from_seq,
// next_from_seq) pass it, and JSON readers would round them.
const FirstSeqHeadroom = 1 << 50

// MaxFirstSeq is the largest first sequence [WithFirstSeq] accepts.
const MaxFirstSeq = MaxExactInt - FirstSeqHeadroom
