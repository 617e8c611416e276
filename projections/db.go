package projections

// SchemaVersion is the version of the projection tables this code writes.
// A database with a lower version is rebuilt from sequence 1 when opened
// (with a log line); one with a higher version is refused with
// [ErrNewerSchema]. Bump it whenever a table, a column or the meaning of
// a value changes.
//
// Version 2: the database is bound to the ledger it is built from
// (projection_meta ledger_stream, ledger_created, ledger_first_id; see
// [DB.Bind]). A version 1 database carries no fingerprint, may hold a mix
// of two ledgers, and is rebuilt.
//
// Version 3: the quarantined table (stored messages that are not fledger
// commits, and sequences missing from the stream).
//
// Version 4: usage_stats gains the subscription block (blockedUntil,
// blockedReason, blockedSource, blockedModel; issue 17). A version 3
// database is rebuilt from sequence 1, which fills them from the events.
const SchemaVersion = 4

// tables lists the projection tables in dump order with their primary key
// order (the dump's row order).
var tables = []struct {
	name    string
	orderBy string
}{
	{"checkpoint", "id"},
	{"usage_stats", "agent, profileId"},
	{"session_selection", "agent, sessionKey"},
	{"turns", "agent, turnId"},
	{"fallback_decisions", "seq, idx"},
	{"skipped_events", "type"},
	{"quarantined", "seq"},
}

// timeColumns are the columns holding Unix ms; dumps and JSON render them
// as RFC 3339 UTC with milliseconds (null when 0).
var timeColumns = map[string]bool{
	"lastUsed": true, "lastProbeAt": true, "lastFailureAt": true,
	"cooldownUntil": true, "disabledUntil": true, "blockedUntil": true, "updatedAt": true,
	"lastResetAt": true, "at": true, "startedAt": true, "endedAt": true,
}

// schema creates every table of [SchemaVersion]. Strings are ” and
// numbers 0 when unset, never NULL, so rows compare and dump stably.
const schema = `
CREATE TABLE projection_meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE checkpoint (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	seq     INTEGER NOT NULL,
	commits INTEGER NOT NULL,
	events  INTEGER NOT NULL
);
INSERT INTO checkpoint (id, seq, commits, events) VALUES (1, 0, 0, 0);

CREATE TABLE usage_stats (
	agent          TEXT NOT NULL,
	profileId      TEXT NOT NULL,
	provider       TEXT NOT NULL,
	lastUsed       INTEGER NOT NULL,
	lastProbeAt    INTEGER NOT NULL,
	errorCount     INTEGER NOT NULL,
	lastFailureAt  INTEGER NOT NULL,
	failureCounts  TEXT NOT NULL,
	cooldownUntil  INTEGER NOT NULL,
	cooldownReason TEXT NOT NULL,
	cooldownModel  TEXT NOT NULL,
	disabledUntil  INTEGER NOT NULL,
	disabledReason TEXT NOT NULL,
	blockedUntil   INTEGER NOT NULL,
	blockedReason  TEXT NOT NULL,
	blockedSource  TEXT NOT NULL,
	blockedModel   TEXT NOT NULL,
	updatedAt      INTEGER NOT NULL,
	lastSeq        INTEGER NOT NULL,
	PRIMARY KEY (agent, profileId)
) WITHOUT ROWID;

CREATE TABLE session_selection (
	agent                       TEXT NOT NULL,
	sessionKey                  TEXT NOT NULL,
	providerOverride            TEXT NOT NULL,
	modelOverride               TEXT NOT NULL,
	modelOverrideSource         TEXT NOT NULL,
	autoOriginProvider          TEXT NOT NULL,
	autoOriginModel             TEXT NOT NULL,
	fallbacksOverride           TEXT NOT NULL,
	hasFallbacksOverride        INTEGER NOT NULL,
	authProfileOverride         TEXT NOT NULL,
	authProfileOverrideProvider TEXT NOT NULL,
	authProfileOverrideSource   TEXT NOT NULL,
	fallbackNoticeSelectedModel TEXT NOT NULL,
	fallbackNoticeActiveModel   TEXT NOT NULL,
	fallbackNoticeReason        TEXT NOT NULL,
	compactionCount             INTEGER NOT NULL,
	lastReset                   TEXT NOT NULL,
	lastResetAt                 INTEGER NOT NULL,
	updatedAt                   INTEGER NOT NULL,
	lastSeq                     INTEGER NOT NULL,
	PRIMARY KEY (agent, sessionKey)
) WITHOUT ROWID;

CREATE TABLE turns (
	agent             TEXT NOT NULL,
	turnId            TEXT NOT NULL,
	sessionId         TEXT NOT NULL,
	chat              TEXT NOT NULL,
	requestedProvider TEXT NOT NULL,
	requestedModel    TEXT NOT NULL,
	selectionSource   TEXT NOT NULL,
	strict            INTEGER NOT NULL,
	configHash        TEXT NOT NULL,
	answeredProvider  TEXT NOT NULL,
	answeredModel     TEXT NOT NULL,
	answeredProfileId TEXT NOT NULL,
	attempts          INTEGER NOT NULL,
	outcome           TEXT NOT NULL,
	reason            TEXT NOT NULL,
	disposition       TEXT NOT NULL,
	startedAt         INTEGER NOT NULL,
	endedAt           INTEGER NOT NULL,
	durationMs        INTEGER NOT NULL,
	lastSeq           INTEGER NOT NULL,
	PRIMARY KEY (agent, turnId)
) WITHOUT ROWID;
CREATE INDEX turns_session ON turns (agent, sessionId, startedAt);
CREATE INDEX turns_started ON turns (startedAt);

CREATE TABLE fallback_decisions (
	seq                           INTEGER NOT NULL,
	idx                           INTEGER NOT NULL,
	at                            INTEGER NOT NULL,
	agent                         TEXT NOT NULL,
	turnId                        TEXT NOT NULL,
	sessionId                     TEXT NOT NULL,
	decision                      TEXT NOT NULL,
	requestedProvider             TEXT NOT NULL,
	requestedModel                TEXT NOT NULL,
	candidateProvider             TEXT NOT NULL,
	candidateModel                TEXT NOT NULL,
	candidateRouteOrigin          TEXT NOT NULL,
	attempt                       INTEGER NOT NULL,
	total                         INTEGER NOT NULL,
	reason                        TEXT NOT NULL,
	status                        INTEGER NOT NULL,
	code                          TEXT NOT NULL,
	errorPreview                  TEXT NOT NULL,
	errorHash                     TEXT NOT NULL,
	nextCandidateProvider         TEXT NOT NULL,
	nextCandidateModel            TEXT NOT NULL,
	nextCandidateRouteOrigin      TEXT NOT NULL,
	isPrimary                     INTEGER NOT NULL,
	requestedModelMatched         INTEGER NOT NULL,
	fallbackConfigured            INTEGER NOT NULL,
	allowTransientCooldownProbe   INTEGER NOT NULL,
	profileCount                  INTEGER NOT NULL,
	previousAttempts              TEXT NOT NULL,
	consoleMessage                TEXT NOT NULL,
	fallbackStepType              TEXT NOT NULL,
	fallbackStepFromModel         TEXT NOT NULL,
	fallbackStepToModel           TEXT NOT NULL,
	fallbackStepFromFailureReason TEXT NOT NULL,
	fallbackStepFromFailureDetail TEXT NOT NULL,
	fallbackStepChainPosition     INTEGER NOT NULL,
	fallbackStepFinalOutcome      TEXT NOT NULL,
	PRIMARY KEY (seq, idx)
) WITHOUT ROWID;
CREATE INDEX fallback_decisions_turn ON fallback_decisions (turnId);
CREATE INDEX fallback_decisions_session ON fallback_decisions (sessionId, at);
CREATE INDEX fallback_decisions_at ON fallback_decisions (at);

CREATE TABLE skipped_events (
	type     TEXT PRIMARY KEY,
	count    INTEGER NOT NULL,
	firstSeq INTEGER NOT NULL,
	lastSeq  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE quarantined (
	seq     INTEGER PRIMARY KEY,
	lastSeq INTEGER NOT NULL,
	kind    TEXT NOT NULL,
	subject TEXT NOT NULL,
	size    INTEGER NOT NULL,
	reason  TEXT NOT NULL
) WITHOUT ROWID;
`

// dropSchema removes every projection table (a rebuild).
const dropSchema = `
DROP TABLE IF EXISTS quarantined;
DROP TABLE IF EXISTS skipped_events;
DROP TABLE IF EXISTS fallback_decisions;
DROP TABLE IF EXISTS turns;
DROP TABLE IF EXISTS session_selection;
DROP TABLE IF EXISTS usage_stats;
DROP TABLE IF EXISTS checkpoint;
DROP TABLE IF EXISTS projection_meta;
`
