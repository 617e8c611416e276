package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/internal/natsserver"
)

// StreamName is the JetStream stream holding every fledger event.
const StreamName = "FLEDGER"

// AnySeq as the expected sequence appends without any expectation: the
// commit is stored whatever the subject's last sequence is (it is still
// de-duplicated by id).
const AnySeq uint64 = math.MaxUint64

// AppendResult is a stored commit's acknowledgement.
type AppendResult struct {
	// Seq is the stream sequence of the commit's message.
	Seq uint64
	// Duplicate is true when a commit with the same message id was already
	// stored: nothing new was written and Seq is the earlier message's. It
	// may have been stored by an earlier, unanswered send of this same
	// append (the store re-sends, see [WithRetryUnknown]) or by a re-send
	// of the caller's, so a caller that sent a commit once treats a
	// duplicate that is not Taken as its commit, stored.
	Duplicate bool
	// Taken is true when Duplicate and the stored commit is not this one
	// (its first event id differs): another writer already stored the
	// decision for this message id ([AppendRequest].MsgID), so this one
	// lost the race and must not act as if it were recorded.
	Taken bool
	// Events is the stored commit as every reader decodes it (Seq, Index
	// and Basis set), so a writer can fold what it wrote without reading
	// it back; nil when Taken.
	Events []Event
}

// AppendRequest is one commit to store ([Store].AppendCommit).
type AppendRequest struct {
	// Subject is the aggregate subject the commit is stored under (made by
	// [Subject], no wildcards).
	Subject string
	// Guard is the subject or filter whose last sequence must be Expected
	// ("" = Subject): the consistency boundary the decision depends on.
	Guard string
	// Expected is Guard's expected last sequence: 0 = no message yet,
	// [AnySeq] = no expectation.
	Expected uint64
	// MsgID is the JetStream Nats-Msg-Id ("" = the first event's id). A
	// decider that names the step it decides (e.g. "turn T after its
	// commit at N") makes two writers deciding the same step share one
	// id, so the server stores only the first within the stream's
	// de-duplication window, and the second gets Taken.
	MsgID string
	// Basis is the stream position the decision's state was folded to,
	// recorded in the commit ([Event].Basis; 0 = not recorded).
	Basis uint64
	// Events are the commit's events, in order (at least one).
	Events []Event
	// Urgent sends the commit at once, alone, instead of in the next
	// group commit: for a decision others are waiting on (a failure
	// holding its profile), whose latency bounds their throughput.
	Urgent bool
}

// Store is fledger's event store on a JetStream stream. One decision is
// one commit: the events are stored together as one message, so a reader
// sees all of them or none. Implementations are safe for concurrent use.
type Store interface {
	// Append stores evs as one commit under subject (an aggregate subject
	// made by [Subject], no wildcards), provided subject's last sequence is
	// expected: 0 means "subject has no message yet", [AnySeq] means no
	// expectation. The first event's id is the message's Nats-Msg-Id, so a
	// re-sent commit is stored once ([AppendResult].Duplicate). The subject
	// is the consistency boundary the decision guards; the events may
	// belong to other aggregates too (an AttemptFailed for the turn and the
	// ProfileFailureRecorded it caused, stored under the profile).
	//
	// Errors: a *[ConflictError] (errors.Is ErrConflict) when the
	// expectation fails — reload, decide again, retry; an *[EventError]
	// wrapping ErrUnknownType, ErrInvalidPayload, ErrInvalidEnvelope or
	// ErrTooLarge, refused before anything is published; ErrEmptyCommit;
	// ErrInvalidSubject; ErrClosed; or the NATS error. After a timeout or
	// a lost connection the outcome is unknown: re-send the same events
	// (same ids), which is stored once, rather than deciding again.
	Append(ctx context.Context, subject string, expected uint64, evs ...Event) (AppendResult, error)

	// AppendGuarded is Append with the expectation checked against guard
	// instead of subject: guard may be another subject or a filter with
	// wildcards (e.g. fledger.a.profile.> to serialise every profile of
	// agent a), sent as Nats-Expected-Last-Subject-Sequence-Subject.
	AppendGuarded(ctx context.Context, subject, guard string, expected uint64, evs ...Event) (AppendResult, error)

	// AppendCommit is Append with every setting of the commit spelled out:
	// guard, expectation, message id and the decision's basis. Concurrent
	// calls share fsyncs (group commit, see [WithGroupCommit]); a single
	// call is sent at once, never held back for company.
	AppendCommit(ctx context.Context, req AppendRequest) (AppendResult, error)

	// ReadSubject returns every event stored under filter (a subject, or a
	// filter with wildcards), in stream order, and the stream sequence of
	// the last message read: the value to pass as Append's expected. It
	// does not wait for more. A message that cannot be decoded (not a
	// fledger commit) is skipped, as every reader skips it — logged with
	// [WithLogger] — but its sequence still counts as the last one read,
	// so an append guarded by filter expects it.
	ReadSubject(ctx context.Context, filter string) ([]Event, uint64, error)

	// Read iterates over the whole stream in order from sequence from (0,
	// 1 or any sequence before the stream's first = the beginning: a
	// stream continuing an archived one starts past 1, and what lies
	// before is no gap) up to its last message, then ends. A message that
	// cannot be decoded is yielded as a *[DecodeError] (with Event.Seq set;
	// it names the subject, size and cause) and reading goes on with the
	// next one; so is a run of sequences missing inside the stream (a
	// DecodeError wrapping [ErrGap], Seq..Through). Other errors are
	// yielded once and end the iteration. For projections and replay.
	//
	// On JetStream the events of Read, ReadSubject and ReadRange share the
	// message they came from (envelope strings, Payload, the payloads'
	// strings): one of them kept alive keeps its message alive, so a
	// long-lived reader copies what it keeps (docs/events.md).
	Read(ctx context.Context, from uint64) iter.Seq2[Event, error]

	// Watch is Read that does not end: after the last message it waits for
	// new commits and yields them as they are appended (an ordered
	// consumer), until ctx is done or the caller stops. For keeping
	// projections and engine state current.
	Watch(ctx context.Context, from uint64) iter.Seq2[Event, error]

	// LastSeq returns the stream's last sequence (filter "") or the last
	// sequence of a subject or filter; 0 when there is no message.
	LastSeq(ctx context.Context, filter string) (uint64, error)

	// Follow yields every stored message from opts.From in stream order,
	// one [StoredCommit] each (undecodable messages and gaps included, with Err
	// set), then waits for new commits and yields them as they are stored,
	// until ctx is done or the caller stops. Lost connections, leader
	// elections and a consumer that stands still while the stream has
	// moved on are recovered inside, resuming after the last sequence
	// yielded; an error is yielded only when following cannot go on
	// (ErrClosed, a stream that is gone), and ends it. For the engine's
	// state and every other reader that folds the stream as it grows.
	Follow(ctx context.Context, opts FollowOptions) iter.Seq2[StoredCommit, error]

	// Cursor opens (creating it on first use) the durable cursor
	// opts.Name: a position on the stream that survives restarts and
	// advances only as commits are acknowledged. For exporters.
	Cursor(ctx context.Context, opts CursorOptions) (Cursor, error)

	// Ledger returns the identity of the stream the store holds (its
	// fingerprint) and its last sequence.
	Ledger(ctx context.Context) (Ledger, error)

	// ClientURL is the embedded server's loopback URL when it listens
	// ([WithListen]), else "". It holds no credentials: a client needs
	// [WriterUser]'s or [ReaderUser]'s ([WithListenerCredentials]).
	ClientURL() string

	// Close closes the connection and, for the embedded server, shuts it
	// down and releases the data directory. Safe to call more than once.
	Close() error
}

type store struct {
	cfg        config
	reg        *Registry
	srv        *natsserver.Server
	nc         *nats.Conn
	js         jetstream.JetStream
	stream     jetstream.Stream
	directSubj string
	group      *committer // nil without group commit
	// refused passes the server's permission violations to the
	// operations they concern (refusals.go).
	refused refusals

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
	// drops are the consumer deletes in flight (ordered_drop.go).
	drops pendingDrops
	// writes is what the appends say about the store's writes
	// (write_health.go).
	writes writeHealth
	// stalls counts the ordered reads that stalled (read_stalls.go).
	stalls readStalls
	// chunkCollected is when (Unix ns) this store last looked for
	// snapshot chunks no object names (snapshot_chunks.go).
	chunkCollected atomic.Int64
	// opened is what identifies the stream Open found or made: a stream
	// of the same name made later is another ledger, which this process
	// does not serve (stream_identity.go).
	opened   openedStream
	openedMu sync.Mutex
	// followErr is the last follower consumer-creation error (FollowIssue).
	followErr atomic.Value
}

// Open connects the store: with [WithURL] to an existing NATS server,
// otherwise to an embedded server started on [WithDataDir] (loopback only,
// file storage, fsync per write unless [WithSyncAlways] says otherwise).
// It creates the FLEDGER stream, or checks that an existing one is
// compatible (error wrapping [ErrStreamConfig] otherwise; it is never
// rewritten). A data directory held by another process gives an error
// wrapping [ErrLocked] that names the directory.
func Open(ctx context.Context, opts ...Option) (Store, error) {
	cfg, err := openConfig(opts)
	if err != nil {
		return nil, err
	}
	s := &store{cfg: cfg, reg: cfg.registry, closed: make(chan struct{})}
	if s.reg == nil {
		s.reg = NewCatalogRegistry()
	}
	if cfg.url == "" {
		err = s.connectEmbedded(cfg)
	} else {
		err = s.connectURL(cfg)
	}
	if err != nil {
		return nil, err
	}
	if err := s.openStream(ctx, cfg); err != nil {
		_ = s.Close()
		return nil, err
	}
	s.directSubj = "$JS.API.DIRECT.GET." + StreamName
	if cfg.groupCommit {
		s.startGroupCommit(cfg)
	}
	return s, nil
}

// headerRoom is the room left for message headers over the commit body.
const headerRoom = 4 << 10

// neededDupWindow is the shortest duplicate window the store's guarantees
// hold with: a turn step's message id de-duplicates racing writers only
// while the window covers the time from a decision's read to its append,
// which the timeout bounds (docs/engine.md "One outcome per step"), and a
// re-sent append ([WithRetryUnknown]) is stored once only while the window
// still holds its first send.
func (c config) neededDupWindow() time.Duration {
	return max(2*c.timeout, c.retryUnknown+c.timeout)
}

func (s *store) streamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              StreamName,
		Description:       "fledger event ledger: one message per decision (events.Commit JSON)",
		Subjects:          []string{SubjectPrefix + ".>"},
		Retention:         jetstream.LimitsPolicy,
		MaxConsumers:      -1,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		MaxAge:            0,
		MaxMsgsPerSubject: -1,
		Discard:           jetstream.DiscardNew,
		MaxMsgSize:        int32(s.cfg.maxCommitBytes + headerRoom),
		Storage:           jetstream.FileStorage,
		Replicas:          s.cfg.replicas,
		FirstSeq:          s.cfg.firstSeq,
		Duplicates:        s.cfg.dupWindow,
		DenyDelete:        true,
		DenyPurge:         true,
		AllowDirect:       true,
		// Group commit (publish.go): concurrent appends share one fsync
		// as an atomic batch.
		AllowAtomicPublish: true,
	}
}

// ensureStream creates the stream or checks the existing one against want.
// Settings that are the operator's choice (replicas, placement, a longer
// duplicate window, a larger message size) are accepted; the replica count
// differing from the one asked for is logged.
func ensureStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig, cfg config) (jetstream.Stream, error) {
	ctx, cancel := withTimeout(ctx, cfg.timeout)
	defer cancel()
	st, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = js.CreateStream(ctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = js.Stream(ctx, want.Name) // created concurrently: check it below
		} else if err == nil {
			return st, nil
		}
	}
	if err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == codeNoPeers {
			return nil, fmt.Errorf("events: create stream %s with %d replicas: %w (the cluster needs at least %d JetStream servers online)", want.Name, want.Replicas, err, want.Replicas)
		}
		if errors.As(err, &apiErr) && apiErr.ErrorCode == codeReplicasNotClustered {
			return nil, fmt.Errorf("%w: create stream %s with %d replicas: the NATS server is not part of a cluster (use --replicas 1, or a cluster)", ErrInvalidOption, want.Name, want.Replicas)
		}
		return nil, fmt.Errorf("events: stream %s: %w", want.Name, err)
	}
	have := st.CachedInfo().Config
	embedded := ""
	if cfg.url == "" {
		embedded = cfg.dataDir
	}
	if diffs := streamDiffs(have, want, cfg.neededDupWindow(), embedded); len(diffs) > 0 {
		other := "another server/data directory"
		if embedded != "" {
			other = "another data directory"
		}
		return nil, fmt.Errorf("%w: stream %s exists with %s; fledger will not change it — fix it with the nats CLI or use %s",
			ErrStreamConfig, want.Name, strings.Join(diffs, "; "), other)
	}
	if have.Replicas != want.Replicas && cfg.replicasSet && cfg.logger != nil {
		cfg.logger.Warn("the stream exists with another replica count than asked for; it is kept (change it with `nats stream edit "+want.Name+" --replicas N`)",
			"stream", want.Name, "replicas", have.Replicas, "asked", want.Replicas)
	}
	return st, nil
}

// streamDiffs lists the settings of have that break the store's
// guarantees: where events go (subjects), that they stay (storage, no
// limits, discard new, deny delete and purge, not sealed), that an ack
// means stored (persist mode), that a re-send is stored once (the
// duplicate window, at least needDup), that reads work (direct get,
// message size) and, when one was asked for ([WithFirstSeq]), that the
// sequences continue the archived stream's. Replicas, placement, description and the like are the
// operator's choice and never refused. embedded is the data directory of
// an embedded server ("" for a server by URL), named in the fix of a
// first sequence: there is no server to remove the stream on.
func streamDiffs(have, want jetstream.StreamConfig, needDup time.Duration, embedded string) []string {
	var d []string
	add := func(ok bool, format string, args ...any) {
		if !ok {
			d = append(d, fmt.Sprintf(format, args...))
		}
	}
	add(len(have.Subjects) == 1 && have.Subjects[0] == want.Subjects[0], "subjects %v (want %v)", have.Subjects, want.Subjects)
	add(have.Storage == jetstream.FileStorage, "storage %v (want file)", have.Storage)
	add(have.Retention == jetstream.LimitsPolicy, "retention %v (want limits)", have.Retention)
	add(have.MaxMsgs <= 0 && have.MaxBytes <= 0 && have.MaxAge == 0 && have.MaxMsgsPerSubject <= 0,
		"limits max_msgs=%d max_bytes=%d max_age=%v max_msgs_per_subject=%d (events would be dropped; want none)",
		have.MaxMsgs, have.MaxBytes, have.MaxAge, have.MaxMsgsPerSubject)
	add(have.Discard == jetstream.DiscardNew, "discard %v (want new)", have.Discard)
	add(have.Duplicates >= needDup, "duplicate window %v (want at least %v: a re-sent append must still be recognised)", have.Duplicates, needDup)
	add(have.MaxMsgSize <= 0 || have.MaxMsgSize >= want.MaxMsgSize, "max message size %d (want >= %d)", have.MaxMsgSize, want.MaxMsgSize)
	add(have.DenyDelete && have.DenyPurge, "deny_delete=%v deny_purge=%v (want both)", have.DenyDelete, have.DenyPurge)
	add(have.AllowDirect, "allow_direct=false (want true)")
	add(!have.Sealed, "sealed")
	add(have.PersistMode != jetstream.AsyncPersistMode, "persist_mode async (acks before writes are flushed)")
	add(!have.AllowMsgTTL, "allow_msg_ttl=true (a message with a TTL header would be deleted; want false)")
	fix := fmt.Sprintf("one created empty by another start can be removed, `nats stream rm %s`", want.Name)
	if embedded != "" {
		fix = fmt.Sprintf("this data directory already holds a stream, created by an earlier start: move %s away (mv %s %s.old: it may hold the archived period) or use a fresh --data, then start again with --first-seq", embedded, embedded, embedded)
	}
	add(want.FirstSeq <= 1 || max(have.FirstSeq, 1) == want.FirstSeq,
		"first sequence %d (want %d: a stream continuing an archived one must be created with it; %s)",
		max(have.FirstSeq, 1), want.FirstSeq, fix)
	return d
}

// firstSeq is the stream's first sequence: its configured first_seq (a
// stream continuing an archived one, [WithFirstSeq]), else 1. It is fixed
// for the stream's life, which denies deletes and purges; a whole-stream
// read starting before it is no gap.
func (s *store) firstSeq() uint64 {
	return max(s.stream.CachedInfo().Config.FirstSeq, 1)
}

// readStart is the first sequence a whole-stream read asked to start at
// from (0 or 1 = the beginning) starts at: from, or the stream's first
// sequence when from is before it. Read, ReadRange, Follow and Watch
// share it, so none of them reports the sequences before a stream
// continuing an archived one ([WithFirstSeq]) as missing: they are the
// archive's.
func (s *store) readStart(from uint64) uint64 {
	return max(from, s.firstSeq())
}

func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

func (s *store) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// dropWait bounds how long Close waits for consumer deletes in flight.
const dropWait = 2 * time.Second

// Close implements [Store].
func (s *store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.stalls.close()
		if s.group != nil {
			s.group.close()
		}
		if s.nc != nil {
			s.waitDrops(dropWait)
			s.nc.Close()
		}
		if s.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			s.closeErr = s.srv.Shutdown(ctx)
			cancel()
		}
	})
	return s.closeErr
}

// ClientURL implements [Store].
func (s *store) ClientURL() string {
	if s.srv == nil {
		return ""
	}
	return s.srv.ClientURL()
}

// Append implements [Store].
func (s *store) Append(ctx context.Context, subject string, expected uint64, evs ...Event) (AppendResult, error) {
	return s.AppendCommit(ctx, AppendRequest{Subject: subject, Expected: expected, Events: evs})
}

// AppendGuarded implements [Store].
func (s *store) AppendGuarded(ctx context.Context, subject, guard string, expected uint64, evs ...Event) (AppendResult, error) {
	return s.AppendCommit(ctx, AppendRequest{Subject: subject, Guard: guard, Expected: expected, Events: evs})
}

// AppendCommit implements [Store].
func (s *store) AppendCommit(ctx context.Context, req AppendRequest) (AppendResult, error) {
	req, err := guarded(req)
	if err != nil {
		return AppendResult{}, err
	}
	return s.append(ctx, req)
}

// checkFilter accepts fledger.… subjects and filters.
func checkFilter(f string) error {
	if !strings.HasPrefix(f, SubjectPrefix+".") || strings.ContainsAny(f, " \t\r\n") || strings.Contains(f, "..") || strings.HasSuffix(f, ".") {
		return fmt.Errorf("%w: %q is not a fledger subject or filter", ErrInvalidSubject, f)
	}
	return nil
}

func (s *store) append(ctx context.Context, req AppendRequest) (AppendResult, error) {
	res, err := s.appendOnce(ctx, req)
	s.writes.note(ctx, err, time.Now())
	return res, err
}

func (s *store) appendOnce(ctx context.Context, req AppendRequest) (AppendResult, error) {
	if s.isClosed() {
		return AppendResult{}, ErrClosed
	}
	if s.cfg.user == ReaderUser {
		return AppendResult{}, ErrReadOnly
	}
	msg, envs, err := s.commitMsg(req)
	if err != nil {
		return AppendResult{}, err
	}
	subject, guard, expected, body := req.Subject, req.Guard, req.Expected, msg.Data
	id := msg.Header.Get(jetstream.MsgIDHeader)
	// An unanswered send is re-sent with the same message id and
	// expectation until answered (WithRetryUnknown): the server stores it
	// once, and a send stored before reports a conflict found below.
	var ack *jetstream.PubAck
	send := func() error {
		return s.retrying(ctx, "append", subject, func(actx context.Context) error {
			var perr error
			ack, perr = s.publish(actx, msg, req.Urgent)
			return perr
		})
	}
	err = send()
	pctx, cancel := withTimeout(ctx, s.cfg.timeout)
	defer cancel()
	// stored answers a commit stored at seq. Unless another commit took
	// the message id, what is stored is this very commit (an earlier send
	// of this call that went unanswered, or a caller's re-send), so its
	// events are this one's, decoded at seq.
	stored := func(seq uint64, dup bool) AppendResult {
		res := AppendResult{Seq: seq, Duplicate: dup}
		if dup && id != envs[0].ID {
			res.Taken = s.takenBy(pctx, seq, envs[0].ID)
		}
		if !res.Taken {
			if evs, derr := s.reg.DecodeCommit(body, seq, subject); derr == nil {
				res.Events = evs
			}
		}
		return res
	}
	for spurious := 0; ; spurious++ {
		if err == nil {
			return stored(ack.Sequence, ack.Duplicate), nil
		}
		var apiErr *jetstream.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequenceConstant || spurious == maxSpurious {
			break
		}
		// A replicated stream answers 10164, without the actual sequence,
		// also when a message on the guard is merely in flight (an
		// earlier, unanswered send of this very commit, say, that will be
		// dropped as a duplicate). Ask the leader: the guard still at the
		// expectation means nothing else was stored — send again.
		seq, ok, ferr := s.findSent(pctx, subject, guard, expected, id)
		if ferr == nil && ok {
			return stored(seq, true), nil
		}
		last, lerr := s.leaderLast(pctx, guard)
		if ferr != nil || lerr != nil || last != expected {
			break
		}
		time.Sleep(time.Duration(10+10*spurious) * time.Millisecond)
		err = send()
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		// The server checks the expectation before de-duplication, so a
		// re-sent commit whose first send was stored reports a conflict:
		// look for its id among the guard's messages after expected, and
		// the subject's (a commit guarded by another subject is stored
		// under its own).
		seq, ok, ferr := s.findSent(pctx, subject, guard, expected, id)
		if ferr != nil {
			// Whether the conflict is a send of ours stored before is
			// not known: say so rather than report a conflict.
			return AppendResult{}, &UnavailableError{Op: "append", Subject: subject, Outcome: OutcomeUnknown, Attempts: 1,
				Err: fmt.Errorf("looking for the commit's id after a conflict: %w", ferr)}
		}
		if ok {
			return stored(seq, true), nil
		}
		return AppendResult{}, s.conflictError(pctx, subject, guard, expected, apiErr)
	}
	return AppendResult{}, fmt.Errorf("events: append to %s: %w", subject, err)
}

// conflictError is the *ConflictError of an append the server refused
// with apiErr (10071 or 10164) because guard's last sequence was not
// expected, with the actual last sequence when it is known: 10071 names
// it in its description; after 10164, which does not, the leader is asked
// for it (and it is known only when it differs from expected).
func (s *store) conflictError(ctx context.Context, subject, guard string, expected uint64, apiErr *jetstream.APIError) *ConflictError {
	ce := &ConflictError{Subject: subject, Guard: guard, Expected: expected, Code: int(apiErr.ErrorCode)}
	if apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant {
		if last, lerr := s.leaderLast(ctx, guard); lerr == nil && last != expected {
			ce.Actual, ce.ActualKnown = last, true
		}
	}
	if apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		if i := strings.LastIndexByte(apiErr.Description, ':'); i >= 0 {
			if n, perr := strconv.ParseUint(strings.TrimSpace(apiErr.Description[i+1:]), 10, 64); perr == nil {
				ce.Actual, ce.ActualKnown = n, true
			}
		}
	}
	return ce
}

// commitMsg checks req and builds its message: the commit body (its
// envelopes checked, validated and encoded) with the message id, stream
// and expectation headers, and the metadata headers naming what it holds
// (headers.go; no reader depends on them). req.Guard must be set.
func (s *store) commitMsg(req AppendRequest) (*nats.Msg, []Envelope, error) {
	body, envs, err := commitBody(&s.cfg, s.reg, req)
	if err != nil {
		return nil, nil, err
	}
	msg := &nats.Msg{Subject: req.Subject, Data: body, Header: nats.Header{}}
	id := req.MsgID
	if id == "" {
		id = envs[0].ID
	}
	msg.Header.Set(jetstream.MsgIDHeader, id)
	msg.Header.Set(jetstream.ExpectedStreamHeader, StreamName)
	if req.Expected != AnySeq {
		msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(req.Expected, 10))
		if req.Guard != req.Subject {
			msg.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, req.Guard)
		}
	}
	setMetaHeaders(msg.Header, envs, req.Events)
	return msg, envs, nil
}

// takenBy reports whether the commit stored at seq is another one than the
// commit whose first event id is firstID (a message id shared by two
// writers deciding the same step). A commit that cannot be read back is
// taken as another one: the caller then re-reads the stream, which is
// safe either way.
func (s *store) takenBy(ctx context.Context, seq uint64, firstID string) bool {
	m, err := s.leaderNext(ctx, seq, "")
	if err != nil || m == nil || m.Seq != seq {
		return true
	}
	var c struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if json.Unmarshal(m.Data, &c) != nil || len(c.Events) == 0 {
		return true
	}
	return c.Events[0].ID != firstID
}

// maxSpurious bounds how many times an append answered 10164 while its
// guard is still at the expectation is sent again (see append).
const maxSpurious = 5

// dupScanLimit bounds how many later messages of the guard are searched for
// a re-sent commit's id after a conflict.
const dupScanLimit = 64

// findMsgID looks for the message id among guard's messages after
// sequence after. It reads through the stream leader (not a direct get,
// which a follower may answer before it holds the message the leader just
// compared against).
func (s *store) findMsgID(ctx context.Context, guard string, after uint64, id string) (uint64, bool, error) {
	from := after + 1
	for range dupScanLimit {
		m, err := s.leaderNext(ctx, from, guard)
		if err != nil {
			return 0, false, err
		}
		if m == nil {
			return 0, false, nil
		}
		if m.MsgID == id {
			return m.Seq, true, nil
		}
		from = m.Seq + 1
	}
	return 0, false, nil
}

// msgGet is a stream message-get API request.
type msgGet struct {
	Seq     uint64 `json:"seq,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
}

// findSent looks for message id among the messages stored after
// expected on guard, then on subject when the commit is guarded by
// another subject: where an earlier send of the commit would be.
func (s *store) findSent(ctx context.Context, subject, guard string, expected uint64, id string) (uint64, bool, error) {
	seq, ok, err := s.findMsgID(ctx, guard, expected, id)
	if err != nil || ok || subjectMatches(guard, subject) {
		return seq, ok, err // searched already: the guard covers the subject
	}
	return s.findMsgID(ctx, subject, expected, id)
}

// leaderNext is the first message at or after seq on filter ("" = the
// message at seq); nil when there is none.
func (s *store) leaderNext(ctx context.Context, seq uint64, filter string) (*leaderMsg, error) {
	m, err := s.leaderGet(ctx, msgGet{Seq: seq, NextFor: filter})
	if err != nil {
		return nil, fmt.Errorf("events: read %s from sequence %d: %w", filter, seq, err)
	}
	return m, nil
}

// leaderGet sends a stream message-get API request, which the stream
// leader answers (the jetstream package would use a direct get, which any
// replica answers); nil when no message matches.
func (s *store) leaderGet(ctx context.Context, q msgGet) (*leaderMsg, error) {
	req, _ := json.Marshal(q)
	rctx, cancel := withTimeout(ctx, s.cfg.timeout)
	defer cancel()
	resp, err := s.nc.RequestWithContext(rctx, "$JS.API.STREAM.MSG.GET."+StreamName, req)
	if err != nil {
		return nil, err
	}
	var r struct {
		Message *struct {
			Seq  uint64 `json:"seq"`
			Hdrs []byte `json:"hdrs"`
			Data []byte `json:"data"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return nil, err
	}
	if r.Error != nil {
		if r.Error.Code == 404 {
			return nil, nil
		}
		return nil, r.Error
	}
	if r.Message == nil {
		return nil, nil
	}
	return &leaderMsg{Seq: r.Message.Seq, MsgID: headerValue(r.Message.Hdrs, jetstream.MsgIDHeader), Data: r.Message.Data}, nil
}

// replicated reports whether the stream has more than one replica (its
// reads must then be checked against the leader, see scan).
func (s *store) replicated() bool {
	return s.stream.CachedInfo().Config.Replicas > 1
}

// leaderLast is the last sequence of filter ("" = the stream) as the
// stream leader knows it: stream info, or a last-by-subject message get
// (not a direct get, which a lagging follower may answer).
func (s *store) leaderLast(ctx context.Context, filter string) (uint64, error) {
	if filter == "" {
		info, err := s.stream.Info(ctx)
		if err != nil {
			return 0, fmt.Errorf("events: last sequence: %w", err)
		}
		if err := s.replaced(ctx, info); err != nil {
			// An engine syncs before each decision: none is taken on the
			// state of a stream that is gone, to be appended to its
			// successor.
			return 0, fmt.Errorf("events: last sequence: %w", err)
		}
		if info.State.Msgs == 0 {
			return 0, nil // an empty stream created with a first_seq reports first_seq-1
		}
		return info.State.LastSeq, nil
	}
	m, err := s.leaderGet(ctx, msgGet{LastFor: filter})
	if err != nil {
		return 0, fmt.Errorf("events: last sequence of %s: %w", filter, err)
	}
	if m == nil {
		return 0, nil
	}
	return m.Seq, nil
}

// behind waits a moment before a scan asks again from seq: the replica
// that answered did not yet hold the leader's last sequence target. It
// gives up a timeout after the scan first fell behind (until).
func (s *store) behind(ctx context.Context, from, target uint64, until *time.Time) error {
	if until.IsZero() {
		*until = time.Now().Add(s.cfg.timeout)
	} else if time.Now().After(*until) {
		return fmt.Errorf("events: read from sequence %d: the replicas answering still hold less than the leader's last sequence %d: %w", from, target, context.DeadlineExceeded)
	}
	select {
	case <-time.After(10 * time.Millisecond):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("events: read from sequence %d: the replica answering holds less than the leader's last sequence %d: %w", from, target, ctx.Err())
	}
}

// leaderMsg is what findMsgID needs of a stored message.
type leaderMsg struct {
	Seq   uint64
	MsgID string
	Data  []byte
}

// headerValue reads one header from a stored message's raw NATS/1.0
// header block.
func headerValue(hdrs []byte, key string) string {
	for _, line := range strings.Split(string(hdrs), "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// schemaError wraps a validator's error as an EventError naming the field.
func schemaError(i int, typ string, err error) error {
	field := ""
	var fe interface{ FieldPath() string }
	if errors.As(err, &fe) {
		field = fe.FieldPath()
	}
	return &EventError{Index: i, Type: typ, Field: field, Reason: err.Error(), Err: ErrInvalidPayload}
}

// directBatch is the JetStream direct-get batch request.
type directBatch struct {
	Seq      uint64 `json:"seq,omitempty"`
	NextFor  string `json:"next_by_subj,omitempty"`
	Batch    int    `json:"batch,omitempty"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

const (
	readBatch    = 1000
	readMaxBytes = 8 << 20
)

// scan reads messages with sequence >= from matching filter ("" = all) in
// order with batched direct gets, calling fn for each until fn returns
// false or no message is pending. It does not wait for new messages.
func (s *store) scan(ctx context.Context, from uint64, filter string, batch int, fn func(seq uint64, subject string, m *nats.Msg) bool) error {
	if s.isClosed() {
		return ErrClosed
	}
	if from == 0 {
		from = 1
	}
	if batch <= 0 || batch > readBatch {
		batch = readBatch
	}
	inbox, ch, sub, err := s.replyInbox(batch)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	// A direct get is answered by any replica, and a follower may not yet
	// hold what the leader just acknowledged: on a replicated stream the
	// scan reads up to the leader's last sequence (of filter) taken now,
	// asking again while a replica's answer ends short of it.
	var target uint64
	if s.replicated() {
		var err error
		if target, err = s.leaderLast(ctx, filter); err != nil {
			return err
		}
	}
	var behindUntil time.Time // when a replica that stays behind gives up
	for {
		req, _ := json.Marshal(directBatch{Seq: from, NextFor: filter, Batch: batch, MaxBytes: readMaxBytes})
		if err := s.nc.PublishRequest(s.directSubj, inbox, req); err != nil {
			return fmt.Errorf("events: read: %w", err)
		}
		var last uint64
		for {
			// The timeout bounds each wait for the server, not the time fn
			// takes: a slow reader (a projection writing SQLite on a busy
			// machine) must not make the next message time out.
			m, err := nextReply(ctx, ch, s.cfg.timeout)
			if err != nil {
				return fmt.Errorf("events: read from sequence %d: %w", from, err)
			}
			if st := m.Header.Get("Status"); st != "" {
				var done bool
				if from, done, err = s.batchEnd(ctx, m, st, from, last, target, &behindUntil); err != nil || done {
					return err
				}
				break
			}
			seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
			if err != nil {
				return fmt.Errorf("events: read: bad %s header %q", jetstream.SequenceHeader, m.Header.Get(jetstream.SequenceHeader))
			}
			last = seq
			if !fn(seq, m.Header.Get(jetstream.SubjectHeader), m) {
				return nil
			}
		}
	}
}

// replyInbox subscribes a fresh reply inbox for scan's direct gets.
// One batch is in flight at a time, so a channel of one batch (plus its
// status message) never drops a message; a SubscribeSync channel would
// allocate 64 Ki slots per scan, which dominated the cost of every
// conflict's duplicate check.
func (s *store) replyInbox(batch int) (string, chan *nats.Msg, *nats.Subscription, error) {
	inbox := s.nc.NewRespInbox()
	ch := make(chan *nats.Msg, batch+2)
	sub, err := s.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return "", nil, nil, fmt.Errorf("events: read: %w", err)
	}
	_ = sub.SetPendingLimits(-1, -1)
	return inbox, ch, sub, nil
}

// nextReply waits for the next message on ch, at most timeout unless ctx
// has a deadline of its own: the timeout bounds each wait for the server,
// not the whole scan.
func nextReply(ctx context.Context, ch chan *nats.Msg, timeout time.Duration) (*nats.Msg, error) {
	mctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	select {
	case m := <-ch:
		return m, nil
	case <-mctx.Done():
		return nil, mctx.Err()
	}
}

// batchEnd handles the status message st that ends one of scan's batches
// (last is the batch's last sequence, 0 when it had none). It returns the
// sequence to ask from next and whether the scan is done: it is once the
// answer is past target (the leader's last sequence when the scan began,
// 0 unreplicated) and the replica holds nothing more; a replica that ends
// short of target is asked again after a pause (behind). 404 says no
// message is at or after from; 204 ends a batch, with the messages still
// pending in Nats-Num-Pending.
func (s *store) batchEnd(ctx context.Context, m *nats.Msg, st string, from, last, target uint64, behindUntil *time.Time) (uint64, bool, error) {
	switch st {
	case "404":
		if from > target {
			return from, true, nil
		}
		if err := s.behind(ctx, from, target, behindUntil); err != nil {
			return from, false, err
		}
	case "204":
		np, _ := strconv.ParseUint(m.Header.Get("Nats-Num-Pending"), 10, 64)
		if last > 0 {
			from = last + 1
		}
		if np == 0 || last == 0 { // all this replica holds
			if from > target {
				return from, true, nil
			}
			if err := s.behind(ctx, from, target, behindUntil); err != nil {
				return from, false, err
			}
		}
	default:
		return from, false, fmt.Errorf("events: read from sequence %d: server status %s %s", from, st, m.Header.Get("Description"))
	}
	return from, false, nil
}

// ReadSubject implements [Store].
func (s *store) ReadSubject(ctx context.Context, filter string) ([]Event, uint64, error) {
	if err := checkFilter(filter); err != nil {
		return nil, 0, err
	}
	var (
		out  []Event
		last uint64
	)
	// A read the stream does not answer (an election) starts again.
	err := s.retryingEach(ctx, "read", filter, 0, func(ctx context.Context) error {
		out, last = nil, 0
		return s.readSubject(ctx, filter, &out, &last)
	})
	if err != nil {
		return nil, 0, err
	}
	return out, last, nil
}

func (s *store) readSubject(ctx context.Context, filter string, out *[]Event, last *uint64) error {
	return s.readDecoded(ctx, 1, filter, func(d *decodedMsg) bool {
		*last = d.seq
		if d.err != nil {
			// Quarantined: not a fledger commit (docs/events.md).
			if s.cfg.logger != nil {
				s.cfg.logger.Warn("events: skipping a stored message that is not a fledger commit", "filter", filter, "err", d.err)
			}
			return true
		}
		*out = append(*out, d.evs...)
		return true
	})
}

// Read implements [Store]. Messages are decoded ahead of the caller on
// several goroutines (readahead.go) and yielded in stream order.
func (s *store) Read(ctx context.Context, from uint64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		y := eventYielder{yield: yield}
		if err := s.readDecoded(ctx, from, "", y.msg); err != nil && !y.stopped {
			yield(Event{}, err)
		}
	}
}

// eventYielder yields decoded messages as Read does: each event, or the
// message's error; stopped records that the caller stopped.
type eventYielder struct {
	yield   func(Event, error) bool
	stopped bool
}

func (y *eventYielder) msg(d *decodedMsg) bool {
	if d.err != nil {
		if !y.yield(Event{Seq: d.seq, Index: -1}, d.err) {
			y.stopped = true
			return false
		}
		return true
	}
	for _, ev := range d.evs {
		if !y.yield(ev, nil) {
			y.stopped = true
			return false
		}
	}
	return true
}

// LastSeq implements [Store].
func (s *store) LastSeq(ctx context.Context, filter string) (uint64, error) {
	if s.isClosed() {
		return 0, ErrClosed
	}
	if filter != "" {
		if err := checkFilter(filter); err != nil {
			return 0, err
		}
	}
	var last uint64
	err := s.retrying(ctx, "last sequence", filter, func(ctx context.Context) error {
		var err error
		last, err = s.leaderLast(ctx, filter)
		return err
	})
	return last, err
}
