package events_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/fledger/fledger/events"
)

// freePorts reserves n loopback ports (closed again before use).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require_NoError(t, err)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		defer l.Close()
	}
	return ports
}

// startCluster starts a 3-node JetStream cluster on loopback and returns
// the client URL of the first node. The route ports are reserved and then
// released before the servers bind them, so another process can take one
// in between on a busy machine: a start whose nodes do not become ready is
// torn down and tried again on fresh ports (3 tries).
func startCluster(t *testing.T) string {
	t.Helper()
	var lastErr error
	for try := 0; try < 3; try++ {
		url, stop, err := tryStartCluster(t)
		if err == nil {
			t.Cleanup(stop)
			return url
		}
		lastErr = err
		t.Logf("cluster start %d: %v; retrying on fresh ports", try+1, err)
	}
	t.Fatalf("cluster: %v", lastErr)
	return ""
}

func tryStartCluster(t *testing.T) (string, func(), error) {
	routes := freePorts(t, 3)
	var urls []*url.URL
	for _, p := range routes {
		urls = append(urls, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	var servers []*server.Server
	stop := func() {
		for _, s := range servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	}
	for i, p := range routes {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i),
			Host:       "127.0.0.1",
			Port:       server.RANDOM_PORT,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: "fledger-test", Host: "127.0.0.1", Port: p},
			Routes:     urls,
		}
		s, err := server.NewServer(opts)
		if err != nil {
			stop()
			return "", nil, err
		}
		servers = append(servers, s)
		s.Start()
	}
	for i, s := range servers {
		if !s.ReadyForConnections(30 * time.Second) {
			stop()
			return "", nil, fmt.Errorf("node n%d not ready for connections", i)
		}
	}
	return servers[0].ClientURL(), stop, nil
}

// TestCluster_ReplicatedConflictIsTheSameTypedError checks the R3 path:
// the stream is created with 3 replicas, and a stale expectation, which a
// replicated stream reports as 10164 without the actual sequence, is the
// same *ConflictError.
func TestCluster_ReplicatedConflictIsTheSameTypedError(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	url := startCluster(t)
	ctx := ctxT(t)
	var (
		s   events.Store
		err error
	)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		s, err = events.Open(actx, events.WithURL(url), events.WithReplicas(3))
		cancel()
		if err == nil {
			break
		}
		t.Logf("waiting for the cluster: %v", err)
	}
	require_NoError(t, err)
	defer s.Close()
	_, err = s.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	require_NoError(t, err)
	_, err = s.Append(ctx, profileSubj, 0, failure("turn-2", 1)...)
	var ce *events.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, events.ErrConflict) {
		t.Fatalf("error %v, want a *ConflictError", err)
	}
	if ce.Code != events.CodeWrongLastSequenceConstant && ce.Code != events.CodeWrongLastSequence {
		t.Fatalf("conflict code %d", ce.Code)
	}
	t.Logf("replicated conflict: %v", err)
	// A re-sent commit is still stored once.
	evs := failure("turn-3", 1)
	first, err := s.Append(ctx, profileSubj, 1, evs...)
	require_NoError(t, err)
	again, err := s.Append(ctx, profileSubj, 1, evs...)
	require_NoError(t, err)
	if !again.Duplicate || again.Seq != first.Seq {
		t.Fatalf("re-send on R3: %+v, want duplicate of %d", again, first.Seq)
	}

	// Concurrent writers on one subject: conflicts (10071, or 10164 while
	// another append of the subject is in flight) are retried; nothing is
	// lost.
	subj := events.MustSubject("main", events.AggProfile, "r3")
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	const writers, each = 4, 10
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ev := events.New("main", "r3", t0, events.ProfileCleared{ProfileID: "r3"})
				for {
					last, err := s.LastSeq(ctx, subj)
					if err != nil {
						t.Error(err)
						return
					}
					_, err = s.Append(ctx, subj, last, ev)
					if err == nil {
						break
					}
					var ce *events.ConflictError
					if !errors.As(err, &ce) {
						t.Error(err)
						return
					}
					mu.Lock()
					codes[ce.Code]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	got, _, err := s.ReadSubject(ctx, subj)
	require_NoError(t, err)
	if len(got) != writers*each {
		t.Fatalf("R3: %d events stored, want %d", len(got), writers*each)
	}
	t.Logf("R3 conflicts by code: %v", codes)
}
