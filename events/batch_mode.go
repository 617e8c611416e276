package events

import (
	"fmt"
	"strings"

	"github.com/fledger/fledger/internal/natsserver"
)

// Whether group commit sends a flush of several commits as one ADR-50
// atomic batch or pipelined depends on the server (publish.go): an atomic
// batch costs a fixed few milliseconds of staging whatever its size, which
// pays where every write is fsynced on its own and where the stream is
// replicated, and costs several times over where the server does not
// fsync every write. Measured with 64 appenders each waiting for its own
// ack (docs/performance.md, "Group commit on other servers"): fledger's
// embedded server (fsync per write) 6–10k appends/s in batches, 3.4k
// pipelined; a 3-node R3 cluster 19.6k in batches, 16.2k pipelined; a
// standalone `nats-server -js` with its default sync interval 5.3–5.7k in
// batches against 20.8–21.1k pipelined — fewer than 8 appenders got.

// AtomicBatches chooses how group commit sends a flush of several
// commits ([WithAtomicBatches]).
type AtomicBatches string

const (
	// BatchesAuto (the default) sends atomic batches where they are known
	// to pay: fledger's embedded server when it fsyncs every write (also
	// reached through `serve --nats-listen`: server name
	// [EmbeddedServerName]) and a replicated stream; it pipelines on a
	// one-replica stream of any other server, whose fsync policy a client
	// cannot see.
	BatchesAuto AtomicBatches = "auto"
	// BatchesOn sends atomic batches from groupBatchMin commits (a server
	// that fsyncs every write: jetstream sync_always).
	BatchesOn AtomicBatches = "on"
	// BatchesOff always pipelines.
	BatchesOff AtomicBatches = "off"
)

// EmbeddedServerName is the server name of fledger's embedded NATS
// server, which fsyncs every write.
const EmbeddedServerName = natsserver.ServerName

// ParseAtomicBatches reads auto, on or off.
func ParseAtomicBatches(s string) (AtomicBatches, error) {
	switch m := AtomicBatches(strings.ToLower(strings.TrimSpace(s))); m {
	case BatchesAuto, BatchesOn, BatchesOff:
		return m, nil
	}
	return "", fmt.Errorf("%q: want auto, on or off", s)
}

// WithAtomicBatches chooses how group commit sends a flush of several
// concurrent commits: [BatchesAuto] (the default), [BatchesOn] or
// [BatchesOff]. A stream without atomic batch publish is pipelined
// whatever the choice.
func WithAtomicBatches(m AtomicBatches) Option {
	return func(c *config) error {
		if _, err := ParseAtomicBatches(string(m)); err != nil {
			return invalid("atomic batches %v", err)
		}
		c.atomicBatches = m
		return nil
	}
}

// batchServer is what the choice of [AtomicBatches] reads of the store.
type batchServer struct {
	allowAtomic bool   // the stream allows atomic batch publish
	replicas    int    // the stream's replica count
	embedded    bool   // the store runs the embedded server itself
	syncAlways  bool   // that embedded server fsyncs every write
	serverName  string // the name of the server the store is connected to
}

// chooseBatches decides whether group commit sends atomic batches under
// mode on server, and says why.
func chooseBatches(mode AtomicBatches, srv batchServer) (bool, string) {
	switch {
	case !srv.allowAtomic:
		return false, "the stream was created without atomic batch publish"
	case mode == BatchesOn:
		return true, "atomic batches on"
	case mode == BatchesOff:
		return false, "atomic batches off"
	case srv.replicas > 1:
		return true, fmt.Sprintf("a stream of %d replicas", srv.replicas)
	case srv.embedded && srv.syncAlways:
		return true, "the embedded server fsyncs every write"
	case srv.embedded:
		return false, "the embedded server does not fsync every write"
	case srv.serverName == EmbeddedServerName:
		return true, "fledger's embedded server (fsync every write) through its listener"
	}
	return false, "a one-replica stream on a server whose fsync policy fledger cannot see (--atomic-batches on if it fsyncs every write)"
}
