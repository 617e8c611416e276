package events

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// followPullOpts are the pull settings the store's followers (Watch,
// Follow) use: a heartbeat every second and pulls that expire
// after five, so a consumer whose server went away (a stream leader
// killed in a cluster) is noticed after two missed heartbeats and
// recreated on the new leader within seconds, not the 10 s the library
// defaults take.
func followPullOpts() []jetstream.PullMessagesOpt {
	return []jetstream.PullMessagesOpt{jetstream.PullExpiry(followExpiry), jetstream.PullHeartbeat(followHeartbeat)}
}

// The followers' pull expiry and heartbeat (followPullOpts).
const (
	followExpiry    = 5 * time.Second
	followHeartbeat = time.Second
)

// followConsumeOpts are followPullOpts for Consume.
func followConsumeOpts() []jetstream.PullConsumeOpt {
	return []jetstream.PullConsumeOpt{jetstream.PullExpiry(followExpiry), jetstream.PullHeartbeat(followHeartbeat)}
}

// Unwrap is the store st wraps, through every wrapper that has an
// Unwrap() Store method (a test's failing store, say), or st itself:
// what [Status] asks.
func Unwrap(st Store) Store {
	for {
		u, ok := st.(interface{ Unwrap() Store })
		if !ok {
			return st
		}
		st = u.Unwrap()
	}
}

// lookThrough returns the first of st and the stores it wraps (through
// Unwrap() Store methods, outermost first) that implements I: a wrapper
// may answer for the store it wraps.
func lookThrough[I any](st Store) (I, bool) {
	for {
		if x, ok := st.(I); ok {
			return x, true
		}
		u, ok := st.(interface{ Unwrap() Store })
		if !ok {
			var zero I
			return zero, false
		}
		st = u.Unwrap()
	}
}

// StreamStatus is what [Status] found out about the store's stream.
type StreamStatus struct {
	// Connected: the store's NATS connection is up; Server is the server
	// it is connected to.
	Connected bool
	Server    string
	// Leader is the server leading the stream ("" = none: an election, or
	// the stream could not be asked within the time given).
	Leader string
	// Replicas is the stream's replica count; Current how many of them
	// (the leader included) hold the stream up to date; Lagging names the
	// others, with why ("offline", "behind by N operations").
	Replicas int
	Current  int
	Lagging  []string
	// LastSeq is the stream's last sequence.
	LastSeq uint64
	// Err is why the stream could not be asked (nil when it answered).
	Err error
}

// Status asks the stream how it is, within ctx (give it a short deadline:
// a health check must answer whatever the store does). It never blocks
// past ctx; what it could not learn is left empty, with Err saying why.
func Status(ctx context.Context, st Store) StreamStatus {
	st = Unwrap(st)
	if m, ok := st.(*memStore); ok {
		return m.status()
	}
	s, ok := st.(*store)
	if !ok {
		return StreamStatus{Connected: true}
	}
	out := StreamStatus{Connected: s.nc.Status() == nats.CONNECTED}
	if out.Connected {
		out.Server = s.nc.ConnectedServerName()
	}
	if s.isClosed() {
		out.Connected, out.Err = false, ErrClosed
		return out
	}
	if !out.Connected {
		out.Err = fmt.Errorf("events: not connected to NATS (%s)", s.nc.Status())
		return out
	}
	info, err := s.stream.Info(ctx)
	switch {
	case errors.Is(err, ErrStreamGone):
		out.Err = fmt.Errorf("events: the %s stream is not on the server any more (deleted, or a rotation under way): restart fledger once the fresh stream exists: %w", StreamName, err)
		return out
	case err != nil:
		out.Err = fmt.Errorf("events: stream info: %w", err)
		return out
	}
	if err := s.replaced(ctx, info); err != nil {
		out.Err = err
		return out
	}
	out.Replicas = max(info.Config.Replicas, 1)
	out.LastSeq = info.State.LastSeq
	if info.Cluster == nil {
		out.Leader, out.Current = out.Server, 1
		return out
	}
	out.Leader = info.Cluster.Leader
	if out.Leader != "" {
		out.Current = 1
	}
	peers := append([]*jetstream.PeerInfo(nil), info.Cluster.Replicas...)
	sort.Slice(peers, func(i, j int) bool { return peers[i].Name < peers[j].Name })
	for _, p := range peers {
		if why := peerLag(p); why != "" {
			out.Lagging = append(out.Lagging, p.Name+" "+why)
		} else {
			out.Current++
		}
	}
	return out
}

// peerLag says why a replica does not count as current ("" = it does):
// offline; not heard from for peerUnseen; not heard from at all since the
// leader took over (Active 0 and not current: a node killed while it led,
// which the new leader never heard from, so its Active never grows); or
// peerBehind operations or more behind.
func peerLag(p *jetstream.PeerInfo) string {
	switch {
	case p.Offline:
		return "offline"
	case p.Active > peerUnseen:
		return fmt.Sprintf("not seen for %v", p.Active.Round(time.Second))
	case !p.Current && p.Active == 0:
		return "not seen since the leader took over"
	case !p.Current && p.Lag >= peerBehind:
		return fmt.Sprintf("behind by %d operations", p.Lag)
	}
	return ""
}

// A replica counts as lagging when the leader has not heard from it for
// peerUnseen (a node killed: the group marks it offline much later), or
// when it is peerBehind operations or more behind; a follower a few
// operations behind under load is current.
const (
	peerUnseen = 3 * time.Second
	peerBehind = 1000
)

// IsReadOnly reports whether st is connected as the read-only user
// ([ReaderUser]): its appends are refused ([ErrReadOnly]), so a command
// that writes should refuse to start on it.
func IsReadOnly(st Store) bool {
	s, ok := st.(*store)
	return ok && s.cfg.user == ReaderUser
}
