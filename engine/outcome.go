package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/redact"
)

// Preview lengths of the stored provider error (runes).
const (
	messagePreviewRunes = 300
	bodyPreviewRunes    = 300
	fieldPreviewRunes   = 120
)

// outcomeOf classifies a call error at now into the decider's Outcome.
// Only redacted previews and a hash of the raw text leave this function:
// nothing secret is ever appended (design "Events").
func outcomeOf(err error, now time.Time, latencyMs int64) policy.Outcome {
	var unsafe *ReplayUnsafeError
	out := policy.Outcome{LatencyMs: latencyMs}
	if errors.As(err, &unsafe) {
		out.OutputStarted, out.ToolStarted = unsafe.OutputStarted, unsafe.ToolStarted
	}
	out.ToolBatchSettled = toolBatchSettled(err)
	var pe *classify.ProviderError
	if !errors.As(err, &pe) {
		pe = classify.FromError(err)
	}
	r := classify.ClassifyAt(pe, now)
	out.Reason, out.Status, out.Disposition = string(r.Reason), r.Status, string(r.Disposition)
	out.RetryAfterMs = r.RetryAfterMs
	if c := r.RequestSizeCeiling; c != nil {
		out.RequestSizeCeiling = true
		out.CeilingTokens = []int64{c.LimitTokens, c.RequestedTokens}
	}
	if rs := r.Reset; rs != nil {
		out.Reset = &events.ProviderReset{At: rs.At.UnixMilli(), Source: rs.Source, Field: rs.Field,
			Match: redact.Preview(rs.Match, fieldPreviewRunes), ZoneUnknown: rs.ZoneUnknown}
	}
	if w := r.LongWindow; w != nil {
		out.LongWindow = &events.UsageWindow{Kind: w.Kind, Field: w.Field, Match: redact.Preview(w.Match, fieldPreviewRunes)}
	}
	out.Error = errorRecord(pe)
	out.Code = out.Error.Code
	out.Evidence = events.Evidence{Rule: r.Evidence.Rule, Source: r.Evidence.Source,
		Field: r.Evidence.Field, Match: redact.Preview(r.Evidence.Match, fieldPreviewRunes)}
	return out
}

// errorRecord is the stored form of a provider error: redacted, bounded
// previews and "sha256:<hex>" of the unredacted message and body. When the
// outer error has no message or body, the first cause that has one is
// used.
// causeDepth bounds the cause chain errorRecord searches for text.
const causeDepth = 25

func errorRecord(pe *classify.ProviderError) events.ProviderErrorRecord {
	if pe == nil {
		return events.ProviderErrorRecord{}
	}
	msg, body := pe.Message, pe.Body
	// Walk at most causeDepth causes, as the classifier does (reference
	// §2.7: depth 25): a cyclic or 10 000-deep chain stays bounded.
	c := pe.Cause
	for depth := 0; c != nil && msg == "" && body == "" && depth < causeDepth; depth++ {
		msg, body = c.Message, c.Body
		c = c.Cause
	}
	rec := events.ProviderErrorRecord{
		Status:         pe.Status,
		Code:           redact.Preview(pe.Code, fieldPreviewRunes),
		Type:           redact.Preview(pe.Type, fieldPreviewRunes),
		Name:           redact.Preview(pe.Name, fieldPreviewRunes),
		MessagePreview: redact.Preview(msg, messagePreviewRunes),
		BodyPreview:    redact.Preview(body, bodyPreviewRunes),
	}
	if msg != "" || body != "" {
		// The hash groups equal errors without storing them. It is taken
		// over redacted text (the first hashPreviewRunes of each), never
		// the raw text: a hash of raw text would let anyone who reads the
		// stream confirm a guessed secret ("password=hunter2") offline.
		sum := sha256.Sum256([]byte(redact.Preview(msg, hashPreviewRunes) + "\x00" + redact.Preview(body, hashPreviewRunes)))
		rec.Hash = "sha256:" + hex.EncodeToString(sum[:])
	}
	return rec
}

// sameFailure reports whether a re-sent failure report (err) is the one
// recorded (rec): the same provider error — status, code, type, name, and
// the hash of its message and body when the record has one (a record
// written before hashes were kept is compared without) — and the same
// flags the decision read (output or tool started, tool batch settled).
func sameFailure(rec events.AttemptFailed, err error) bool {
	got := outcomeOf(err, time.Time{}, 0)
	e := rec.Error
	if e.Status != got.Error.Status || e.Code != got.Error.Code || e.Type != got.Error.Type || e.Name != got.Error.Name {
		return false
	}
	if rec.ReplayUnsafe != (got.OutputStarted || got.ToolStarted) || rec.ToolBatchSettled != got.ToolBatchSettled {
		return false
	}
	return e.Hash == "" || e.Hash == got.Error.Hash
}

// hashPreviewRunes bounds the redacted text ProviderErrorRecord.Hash is
// computed over, so a 10 MB body costs no more than a short one.
const hashPreviewRunes = 16384
