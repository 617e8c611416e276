// Package natstest starts in-process NATS JetStream servers for tests: a
// single node ([StartNode]) or a cluster of n nodes on loopback
// ([StartCluster]) whose nodes can be stopped and restarted to exercise
// stream leader elections and catch-up.
//
// The route connections between the nodes go through small TCP relays the
// harness owns, one per ordered pair of nodes, so [Cluster.Stop] can cut a
// node off before shutting it down: the server's own Shutdown first hands
// every leadership it holds to a peer (about 25 ms), which is what SIGTERM
// does, not what a crash or kill -9 does. Cut off first, the node's
// hand-over never arrives and the others elect new leaders only when
// their raft timeouts expire, as after a crash ([Cluster.Shutdown] is the
// graceful stop).
//
// Everything listens on 127.0.0.1 only, keeps its JetStream files under
// the test's t.TempDir(), logs nothing and is shut down by t.Cleanup. The
// servers keep the raft defaults (an election takes 4–9 s after a leader
// is lost); the waits here poll every [Poll] and give up after their
// bound, failing the test with what they were waiting for.
package natstest

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Account is the account a server without configured accounts puts every
// client in, and so every stream: the one [Cluster.StreamLeader] looks in.
const Account = server.DEFAULT_GLOBAL_ACCOUNT

// Poll is how often the waits check the servers.
const Poll = 20 * time.Millisecond

// Default bounds of the waits.
const (
	// ReadyTimeout bounds a cluster start (every node accepting clients
	// and routes, a JetStream meta leader elected and known to all) and
	// a node's restart.
	ReadyTimeout = 10 * time.Second
	// LeaderTimeout bounds the wait for a stream leader: long enough for
	// an election after the leader was lost (raft defaults: 4–9 s).
	LeaderTimeout = 20 * time.Second
)

// startTries is how many times a cluster start is tried on fresh ports.
const startTries = 3

// Option changes how [StartCluster] starts the nodes.
type Option func(*clusterConfig)

type clusterConfig struct {
	name      string
	ready     time.Duration
	configure func(i int, o *server.Options)
}

// WithName sets the cluster name (default "natstest").
func WithName(name string) Option { return func(c *clusterConfig) { c.name = name } }

// WithReadyTimeout sets how long one start attempt waits for the cluster
// to be ready (default [ReadyTimeout]).
func WithReadyTimeout(d time.Duration) Option { return func(c *clusterConfig) { c.ready = d } }

// WithServerOptions calls f on node i's options before each start and
// restart of the node (after the harness set its own), e.g. to set
// accounts or JetStream limits. f must not change the host, ports,
// routes, store directory or server name.
func WithServerOptions(f func(i int, o *server.Options)) Option {
	return func(c *clusterConfig) { c.configure = f }
}

// Cluster is a running JetStream cluster of in-process servers. Its
// methods are safe for concurrent use.
type Cluster struct {
	cfg clusterConfig
	// relays[i][j] carries node i's route connections to node j (nil for
	// i == j); sink is the cluster address every node advertises, which
	// accepts and drops connections, so gossip never makes a peer dial a
	// node directly, past the relays.
	relays [][]*relay
	sink   net.Listener

	mu    sync.Mutex
	nodes []*node
}

type node struct {
	name        string
	storeDir    string
	clusterPort int
	clientPort  int // 0 until first started
	srv         *server.Server
}

// StartCluster starts n JetStream nodes (n0…n(n-1)) on loopback and waits
// until every node accepts clients and routes and a JetStream meta leader
// is elected, followed by every node and knowing each online (so a stream
// of n replicas can be placed at once). Client ports are picked by the
// servers; route ports are reserved free ports, released just before the
// servers bind them, so another process can take one in between: a start
// that is not ready within the ready timeout is torn down and tried again
// on fresh ports (3 tries). Everything is shut down when the test ends.
func StartCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("natstest: cluster of %d nodes", n)
	}
	cfg := clusterConfig{name: "natstest", ready: ReadyTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	var lastErr error
	for try := 1; try <= startTries; try++ {
		c, err := tryStart(t, n, cfg)
		if err == nil {
			t.Cleanup(c.shutdown)
			return c
		}
		lastErr = err
		t.Logf("natstest: cluster start %d of %d: %v; retrying on fresh ports", try, startTries, err)
	}
	t.Fatalf("natstest: cluster of %d did not start: %v", n, lastErr)
	return nil
}

func tryStart(t testing.TB, n int, cfg clusterConfig) (*Cluster, error) {
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg}
	for i, p := range ports {
		c.nodes = append(c.nodes, &node{name: fmt.Sprintf("n%d", i), storeDir: t.TempDir(), clusterPort: p})
	}
	if err := c.startRelays(); err != nil {
		c.shutdown()
		return nil, err
	}
	for i := range c.nodes {
		if err := c.start(i); err != nil {
			c.shutdown()
			return nil, err
		}
	}
	if err := c.waitReady(cfg.ready); err != nil {
		c.shutdown()
		return nil, err
	}
	return c, nil
}

// freePorts reserves n loopback ports (released again before returning).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserve a port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// options builds node i's server options afresh (the server keeps and
// changes the options it is given, so a restart must not reuse them).
// Call with mu held.
func (c *Cluster) options(i int) *server.Options {
	nd := c.nodes[i]
	port := nd.clientPort
	if port == 0 {
		port = server.RANDOM_PORT
	}
	var routes []*url.URL
	for j, r := range c.relays[i] {
		if j != i {
			routes = append(routes, &url.URL{Scheme: "nats", Host: r.l.Addr().String()})
		}
	}
	o := &server.Options{
		ServerName: nd.name,
		Host:       "127.0.0.1",
		Port:       port,
		JetStream:  true,
		StoreDir:   nd.storeDir,
		NoLog:      true,
		NoSigs:     true,
		Cluster: server.ClusterOpts{Name: c.cfg.name, Host: "127.0.0.1", Port: nd.clusterPort,
			Advertise: c.sink.Addr().String()},
		Routes: routes,
	}
	if c.cfg.configure != nil {
		c.cfg.configure(i, o)
	}
	return o
}

// start starts node i (not running) without waiting for it.
func (c *Cluster) start(i int) error {
	c.mu.Lock()
	o := c.options(i)
	c.mu.Unlock()
	s, err := server.NewServer(o)
	if err != nil {
		return fmt.Errorf("node %s: %w", o.ServerName, err)
	}
	s.Start()
	c.mu.Lock()
	c.nodes[i].srv = s
	c.mu.Unlock()
	return nil
}

// waitReady waits until every running node accepts connections and
// routes, and a meta leader exists that every running node follows and
// that knows every running node online.
func (c *Cluster) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for i, s := range c.running() {
		if s == nil {
			continue
		}
		if !s.ReadyForConnections(time.Until(deadline)) {
			return fmt.Errorf("node n%d not ready for connections within %v", i, d)
		}
		c.mu.Lock()
		if c.nodes[i].clientPort == 0 {
			c.nodes[i].clientPort = s.Addr().(*net.TCPAddr).Port
		}
		c.mu.Unlock()
	}
	return waitFor(deadline, func() bool {
		var leader *server.Server
		up := 0
		for _, s := range c.running() {
			if s == nil {
				continue
			}
			up++
			if s.JetStreamIsLeader() {
				leader = s
			} else if !s.JetStreamIsCurrent() {
				return false
			}
		}
		// The leader places new streams only on peers it knows online
		// (else "no suitable peers for placement").
		return leader != nil && len(leader.JetStreamClusterPeers()) == up
	}, "no JetStream meta leader followed by every node, and knowing each online, within %v", d)
}

// running returns each node's server, nil for a stopped node.
func (c *Cluster) running() []*server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*server.Server, len(c.nodes))
	for i, nd := range c.nodes {
		out[i] = nd.srv
	}
	return out
}

func (c *Cluster) shutdown() {
	for i := range c.running() {
		c.stop(i, false)
	}
	for _, row := range c.relays {
		for _, r := range row {
			if r != nil {
				r.close()
			}
		}
	}
	if c.sink != nil {
		_ = c.sink.Close()
	}
}

// N is the number of nodes (running or stopped).
func (c *Cluster) N() int { return len(c.nodes) }

// URL is node i's client URL ("nats://127.0.0.1:port"); it stays the same
// across a restart.
func (c *Cluster) URL(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("nats://127.0.0.1:%d", c.nodes[i].clientPort)
}

// URLs is every node's client URL, comma-separated (as a NATS client and
// events.WithURL take them), stopped nodes included.
func (c *Cluster) URLs() string {
	urls := make([]string, c.N())
	for i := range urls {
		urls[i] = c.URL(i)
	}
	return strings.Join(urls, ",")
}

// Server is node i's running server, nil when it is stopped.
func (c *Cluster) Server(i int) *server.Server { return c.running()[i] }

// Stop stops node i abruptly, as a crash or kill -9 would: its routes to
// every peer are cut, then it is shut down (no lame-duck mode), so the
// leaderships it held are lost rather than handed over and the others
// elect new leaders when their raft timeouts expire (4–9 s). Its clients
// are disconnected. Stopping a stopped node does nothing.
func (c *Cluster) Stop(i int) { c.stop(i, true) }

// Shutdown stops node i gracefully, as SIGTERM does: the server hands each
// leadership it holds to a current peer before it stops, so the others
// have new leaders within milliseconds.
func (c *Cluster) Shutdown(i int) { c.stop(i, false) }

func (c *Cluster) stop(i int, cut bool) {
	c.mu.Lock()
	s := c.nodes[i].srv
	c.nodes[i].srv = nil
	c.mu.Unlock()
	if s == nil {
		return
	}
	if cut {
		c.cut(i, true)
	}
	s.Shutdown()
	s.WaitForShutdown()
}

// cut cuts (or restores) every route relay to and from node i.
func (c *Cluster) cut(i int, off bool) {
	for j := range c.nodes {
		if j != i {
			c.relays[i][j].setCut(off)
			c.relays[j][i].setCut(off)
		}
	}
}

// Restart starts the stopped node i again with the same name, store
// directory, client and route ports, so it rejoins the cluster and
// catches up its streams from the others ([Cluster.WaitCaughtUp]). It
// waits until the node accepts connections and routes and follows the
// meta leader; it fails the test otherwise.
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	if c.Server(i) != nil {
		t.Fatalf("natstest: restart of node n%d, which is running", i)
	}
	var err error
	c.cut(i, false)
	// The node's ports were free while it was down: another process may
	// have taken one. Retry a few times before giving up, the route port
	// a fresh one (the peers reach it through the relays).
	for try := 0; try < startTries; try++ {
		if try > 0 {
			ports, perr := freePorts(1)
			if perr != nil {
				err = perr
				continue
			}
			c.mu.Lock()
			c.nodes[i].clusterPort = ports[0]
			c.mu.Unlock()
		}
		if err = c.start(i); err == nil {
			if err = c.waitReady(c.cfg.ready); err == nil {
				return
			}
			c.stop(i, false)
		}
		t.Logf("natstest: restart of node n%d: %v", i, err)
	}
	t.Fatalf("natstest: node n%d did not restart: %v", i, err)
}

// StreamLeader returns the index of the node leading stream (in
// [Account]), waiting up to [LeaderTimeout] for one; it fails the test
// when there is none.
func (c *Cluster) StreamLeader(t testing.TB, stream string) int {
	t.Helper()
	return c.WaitStreamLeader(t, stream, -1)
}

// WaitStreamLeader waits up to [LeaderTimeout] until a running node other
// than exclude (-1: any) leads stream, and returns its index: after
// [Cluster.Stop] of the leader, the node elected in its place.
func (c *Cluster) WaitStreamLeader(t testing.TB, stream string, exclude int) int {
	t.Helper()
	leader := -1
	err := waitFor(time.Now().Add(LeaderTimeout), func() bool {
		for i, s := range c.running() {
			if s != nil && i != exclude && s.JetStreamIsStreamLeader(Account, stream) {
				leader = i
				return true
			}
		}
		return false
	}, "no leader of stream %s (other than node %d) within %v", stream, exclude, LeaderTimeout)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	return leader
}

// StreamState is node i's own copy of stream's state (its messages, first
// and last sequences), false when node i is stopped or holds no replica.
func (c *Cluster) StreamState(i int, stream string) (server.StreamState, bool) {
	s := c.Server(i)
	if s == nil {
		return server.StreamState{}, false
	}
	acc, err := s.JszAccount(&server.JSzOptions{Account: Account, Streams: true})
	if err != nil || acc == nil {
		return server.StreamState{}, false
	}
	for _, st := range acc.Streams {
		if st.Name == stream {
			return st.State, true
		}
	}
	return server.StreamState{}, false
}

// WaitCaughtUp waits up to [LeaderTimeout] until node i's replica of
// stream holds every message up to lastSeq, and fails the test otherwise.
func (c *Cluster) WaitCaughtUp(t testing.TB, stream string, i int, lastSeq uint64) {
	t.Helper()
	var have uint64
	err := waitFor(time.Now().Add(LeaderTimeout), func() bool {
		st, ok := c.StreamState(i, stream)
		have = st.LastSeq
		return ok && st.LastSeq >= lastSeq
	}, "node %d's replica of stream %s did not catch up to sequence %d within %v", i, stream, lastSeq, LeaderTimeout)
	if err != nil {
		t.Fatalf("natstest: %v (it has %d)", err, have)
	}
}

// WaitStreamGone waits up to [LeaderTimeout] until no running node has
// stream assigned or holds a replica of it (after its deletion), and
// fails the test otherwise.
func (c *Cluster) WaitStreamGone(t testing.TB, stream string) {
	t.Helper()
	err := waitFor(time.Now().Add(LeaderTimeout), func() bool {
		for i, s := range c.running() {
			if s == nil {
				continue
			}
			if _, ok := c.StreamState(i, stream); ok || s.JetStreamIsStreamAssigned(Account, stream) {
				return false
			}
		}
		return true
	}, "stream %s still on a node %v after its deletion", stream, LeaderTimeout)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
}

// StartNode starts one JetStream server on 127.0.0.1 (a port the server
// picks, files under t.TempDir()), as a NATS server given to a command
// with --nats would be, and returns its client URL. It is shut down when
// the test ends.
func StartNode(t testing.TB) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		ServerName: "single",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   t.TempDir(),
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(ReadyTimeout) {
		t.Fatalf("natstest: server not ready for connections within %v", ReadyTimeout)
	}
	if err := waitFor(time.Now().Add(ReadyTimeout), s.JetStreamEnabled, "JetStream not enabled within %v", ReadyTimeout); err != nil {
		t.Fatalf("natstest: %v", err)
	}
	return s.ClientURL()
}

// waitFor polls ok every [Poll] until it is true or deadline passes, then
// returns the error format and args say.
func waitFor(deadline time.Time, ok func() bool, format string, args ...any) error {
	for {
		if ok() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf(format, args...)
		}
		time.Sleep(Poll)
	}
}

// startRelays opens the sink and a relay for every ordered pair of nodes.
func (c *Cluster) startRelays() error {
	var err error
	if c.sink, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	go func(l net.Listener) {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}(c.sink)
	c.relays = make([][]*relay, len(c.nodes))
	for i := range c.nodes {
		c.relays[i] = make([]*relay, len(c.nodes))
		for j := range c.nodes {
			if i == j {
				continue
			}
			target := func() string {
				c.mu.Lock()
				defer c.mu.Unlock()
				return fmt.Sprintf("127.0.0.1:%d", c.nodes[j].clusterPort)
			}
			if c.relays[i][j], err = newRelay(target); err != nil {
				return err
			}
		}
	}
	return nil
}

// relay is a loopback TCP relay to a node's route port. While cut, it
// closes the connections it carries and every new one at once.
type relay struct {
	l      net.Listener
	target func() string

	mu    sync.Mutex
	off   bool
	conns map[net.Conn]struct{}
}

func newRelay(target func() string) (*relay, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &relay{l: l, target: target, conns: map[net.Conn]struct{}{}}
	go r.serve()
	return r, nil
}

func (r *relay) serve() {
	for {
		in, err := r.l.Accept()
		if err != nil {
			return
		}
		go r.carry(in)
	}
}

func (r *relay) carry(in net.Conn) {
	out, err := net.DialTimeout("tcp", r.target(), 2*time.Second)
	if err != nil {
		_ = in.Close()
		return
	}
	if !r.track(in, out) {
		_ = in.Close()
		_ = out.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	_ = in.Close()
	_ = out.Close()
	<-done
	r.mu.Lock()
	delete(r.conns, in)
	delete(r.conns, out)
	r.mu.Unlock()
}

// track registers a carried pair; false when the relay is cut.
func (r *relay) track(conns ...net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.off {
		return false
	}
	for _, c := range conns {
		r.conns[c] = struct{}{}
	}
	return true
}

func (r *relay) setCut(off bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.off = off
	if off {
		for c := range r.conns {
			_ = c.Close()
		}
	}
}

func (r *relay) close() {
	_ = r.l.Close()
	r.setCut(true)
}
