package events

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Which replicas count as current in the store's status (/healthz): a
// replica the leader hears from and that is at most a few operations
// behind is; an offline one, one not heard from for peerUnseen, one never
// heard from since the leader took over (a former leader killed: its
// Active stays 0), and one peerBehind operations behind are not.
func TestPeerLag(t *testing.T) {
	for _, c := range []struct {
		name string
		p    jetstream.PeerInfo
		want string
	}{
		{"current", jetstream.PeerInfo{Current: true, Active: 200 * time.Millisecond}, ""},
		{"a few operations behind", jetstream.PeerInfo{Current: false, Active: 50 * time.Millisecond, Lag: 12}, ""},
		{"offline", jetstream.PeerInfo{Offline: true}, "offline"},
		{"not heard from for 4s", jetstream.PeerInfo{Current: true, Active: 4 * time.Second}, "not seen for 4s"},
		{"former leader killed", jetstream.PeerInfo{Current: false, Active: 0}, "not seen since the leader took over"},
		{"far behind", jetstream.PeerInfo{Current: false, Active: time.Second, Lag: 1008}, "behind by 1008 operations"},
	} {
		if got := peerLag(&c.p); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
