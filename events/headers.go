package events

import (
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// The headers naming what a stored commit holds, so that an operator
// reading the stream with the nats CLI (nats stream view / get) sees what
// a message is without decoding its body. They are metadata only: no
// reader decides anything by them (the commit body is the truth), and a
// commit stored without them (every commit before they were written)
// reads, projects and verifies the same. Ids are written as subject
// tokens ([EncodeToken]), so a header value is plain ASCII without
// white space or commas and can be pasted into a subject filter; lists
// are comma-separated, in commit order, without repeats, and end in
// "+N more" when they are cut to their length bound.
const (
	// HeaderSchema is the version of the commit format and of these
	// headers: [CommitSchema].
	HeaderSchema = "Fledger-Schema"
	// HeaderAgent is the agent whose subject the commit is stored under.
	HeaderAgent = "Fledger-Agent"
	// HeaderEvents lists the commit's event types, one per event in
	// commit order (a type appears once per event), at most
	// maxHeaderEvents of them.
	HeaderEvents = "Fledger-Events"
	// HeaderTurn lists the turns the commit belongs to ([TurnsOf]: the
	// events' correlation ids and turn keys). Absent when none.
	HeaderTurn = "Fledger-Turn"
	// HeaderSession lists the sessions the commit's events name
	// ([SessionsOf]). Absent when none.
	HeaderSession = "Fledger-Session"
)

// CommitSchema is the value of [HeaderSchema]: the commit format
// ({"basis", "events": [envelopes]}) and header set version.
const CommitSchema = "1"

// Bounds of the metadata headers.
const (
	// maxHeaderEvents is the most event types [HeaderEvents] names.
	maxHeaderEvents = 24
	// maxHeaderValue bounds each metadata header's value, in bytes.
	maxHeaderValue = 512
	// headerSlack is kept free in [headerRoom] for the headers added after
	// the commit is built (a group commit's batch headers) and the
	// encoding's line overhead.
	headerSlack = 512
)

// TurnsOf returns the turns evs belong to, in order of first mention,
// without repeats: each event's correlation id (the turn id of a
// turn-driven decision) and, for a turn event, its key. A turn's commits
// are those whose TurnsOf names it, on whichever subject they are stored
// (an outcome commit sits under its profile's subject).
func TurnsOf(evs []Event) []string {
	var out []string
	for i := range evs {
		if c := evs[i].CorrelationID; c != "" {
			out = appendNew(out, c)
		}
		if evs[i].Aggregate == AggTurn && evs[i].Key != "" {
			out = appendNew(out, evs[i].Key)
		}
	}
	return out
}

// SessionsOf returns the sessions evs name, in order of first mention,
// without repeats: a session event's key and the session of a
// TurnStarted, NoticeSent or FallbackStepped payload. A turn's later commits do not name
// its session; a session's turns are those whose TurnStarted names it.
func SessionsOf(evs []Event) []string {
	var out []string
	for i := range evs {
		if evs[i].Aggregate == AggSession && evs[i].Key != "" {
			out = appendNew(out, evs[i].Key)
		}
		if s := sessionOfPayload(evs[i].Data); s != "" {
			out = appendNew(out, s)
		}
	}
	return out
}

func sessionOfPayload(p Payload) string {
	switch d := p.(type) {
	case TurnStarted:
		return d.Session
	case *TurnStarted:
		return d.Session
	case NoticeSent:
		return d.Session
	case *NoticeSent:
		return d.Session
	case FallbackStepped:
		return d.SessionID
	case *FallbackStepped:
		return d.SessionID
	}
	return ""
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// setMetaHeaders sets the metadata headers of the commit of envs (data
// holds each event's typed payload, for its session) on h, which already
// holds the message's other headers, within the room those leave in
// [headerRoom].
func setMetaHeaders(h nats.Header, envs []Envelope, data []Event) {
	room := headerRoom - headerSlack - headerLen(h)
	set := func(key, val string) {
		if val == "" {
			return
		}
		n := len(key) + len(val) + 4 // "Key: val\r\n"
		if n > room {
			return
		}
		room -= n
		h.Set(key, val)
	}
	evs := make([]Event, len(envs))
	types := make([]string, len(envs))
	for i := range envs {
		evs[i].Envelope = envs[i]
		if i < len(data) {
			evs[i].Data = data[i].Data
		}
		types[i] = EncodeToken(envs[i].Type)
	}
	set(HeaderSchema, CommitSchema)
	if len(envs) > 0 {
		set(HeaderAgent, boundedList([]string{EncodeToken(envs[0].Agent)}, 1, maxHeaderValue))
	}
	set(HeaderEvents, boundedList(types, maxHeaderEvents, maxHeaderValue))
	set(HeaderTurn, boundedList(encodeAll(TurnsOf(evs)), maxHeaderEvents, maxHeaderValue))
	set(HeaderSession, boundedList(encodeAll(SessionsOf(evs)), maxHeaderEvents, maxHeaderValue))
}

func encodeAll(ids []string) []string {
	for i := range ids {
		ids[i] = EncodeToken(ids[i])
	}
	return ids
}

// headerLen is the encoded size of h's lines ("Key: value\r\n" each).
func headerLen(h nats.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// boundedList joins items with commas: at most maxItems of them and at
// most maxLen bytes, the rest counted in a final "+N more". Items hold no
// comma (they are subject tokens or type names).
func boundedList(items []string, maxItems, maxLen int) string {
	if all := strings.Join(items, ","); len(items) <= maxItems && len(all) <= maxLen {
		return all
	}
	var b strings.Builder
	for i, it := range items {
		rest := len(items) - i
		more := ",+" + strconv.Itoa(rest-1) + " more" // room to say what is left after this one
		sep := 0
		if i > 0 {
			sep = 1
		}
		if i == maxItems || b.Len()+sep+len(it)+len(more) > maxLen {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("+" + strconv.Itoa(rest) + " more")
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(it)
	}
	return b.String()
}
