package natsserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/internal/natsserver"
)

func TestStart_LocksTheDataDirUntilShutdown(t *testing.T) {
	dir := t.TempDir()
	s, err := natsserver.Start(natsserver.Config{DataDir: dir, SyncAlways: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.ClientURL() != "" {
		t.Fatalf("server listens on %s without Listen", s.ClientURL())
	}
	_, err = natsserver.Start(natsserver.Config{DataDir: dir})
	if !errors.Is(err, natsserver.ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second start: %v, want ErrLocked naming %s", err, dir)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err = natsserver.Start(natsserver.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("start after shutdown: %v", err)
	}
	_ = s.Shutdown(context.Background())
	_ = s.Shutdown(context.Background()) // idempotent
}

func TestStart_ListensOnLoopbackOnlyWhenAsked(t *testing.T) {
	s, err := natsserver.Start(natsserver.Config{DataDir: t.TempDir(), Listen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	url := s.ClientURL()
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("ClientURL %q is not loopback", url)
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	nc, err = nats.Connect("", nats.InProcessServer(s))
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}
