-- The projection schema of version 5, as the table files declare it:
-- TestSchema_IsVersion5 checks that the generated schema creates exactly
-- this (sqlite_master, rootpages included).
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
	startSeq          INTEGER NOT NULL,
	openedAt          INTEGER NOT NULL,
	class             TEXT NOT NULL,
	PRIMARY KEY (agent, turnId)
);
CREATE INDEX turns_session ON turns (agent, sessionId, startedAt);
CREATE INDEX turns_started ON turns (startedAt);
CREATE INDEX turns_agent_opened ON turns (agent, openedAt);
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
CREATE TABLE profile_windows (
	agent      TEXT NOT NULL,
	profileId  TEXT NOT NULL,
	setSeq     INTEGER NOT NULL,
	setIdx     INTEGER NOT NULL,
	kind       INTEGER NOT NULL CHECK (kind IN (0, 1, 2)),
	provider   TEXT NOT NULL,
	state      TEXT NOT NULL,
	reason     TEXT NOT NULL,
	model      TEXT NOT NULL,
	source     TEXT NOT NULL,
	fromAt     INTEGER NOT NULL,
	untilAt    INTEGER NOT NULL,
	endedAt    INTEGER NOT NULL,
	endsAt     INTEGER NOT NULL,
	clearedSeq INTEGER NOT NULL,
	closeSeq   INTEGER NOT NULL,
	closeIdx   INTEGER NOT NULL,
	PRIMARY KEY (agent, profileId, setSeq, setIdx, kind)
) WITHOUT ROWID;
CREATE INDEX profile_windows_ends ON profile_windows (agent, endsAt);
CREATE TABLE agent_spans (
	agent   TEXT PRIMARY KEY,
	firstAt INTEGER NOT NULL,
	lastAt  INTEGER NOT NULL,
	lastSeq INTEGER NOT NULL
) WITHOUT ROWID;
