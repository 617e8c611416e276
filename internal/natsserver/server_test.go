package natsserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	// The listener refuses anonymous clients; the writer gets in, on the
	// port and in process.
	if nc, err := nats.Connect(url, nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("anonymous connection: %v, want an authorization violation", err)
	}
	for _, o := range []nats.Option{nats.InProcessServer(s), nats.NoReconnect()} {
		nc, err := nats.Connect(url, o, nats.UserInfo(natsserver.WriterUser, s.WriterPassword()))
		if err != nil {
			t.Fatal(err)
		}
		nc.Close()
	}
}

// The credentials are generated once, kept across restarts, stored 0600
// with the listener's URL, and given ones win.
func TestStart_ListenerCredentialsFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := natsserver.Start(natsserver.Config{DataDir: dir, Listen: true})
	if err != nil {
		t.Fatal(err)
	}
	url1 := s.ClientURL()
	w1, err := natsserver.ReadContext(dir, natsserver.WriterFile)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := natsserver.ReadContext(dir, natsserver.ReaderFile)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Shutdown(context.Background())
	for _, f := range []string{natsserver.WriterFile, natsserver.ReaderFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v mode %v, want 0600", f, err, fi.Mode().Perm())
		}
	}
	if w1.User != natsserver.WriterUser || r1.User != natsserver.ReaderUser || w1.URL != url1 ||
		len(w1.Password) < 20 || w1.Password == r1.Password || w1.Password != s.WriterPassword() {
		t.Fatalf("writer %+v reader %+v url %s", w1, r1, url1)
	}
	if !r1.SameListener(url1) || !r1.SameListener(strings.Replace(url1, "127.0.0.1", "localhost", 1)) ||
		r1.SameListener("nats://example.com:"+url1[strings.LastIndex(url1, ":")+1:]) || r1.SameListener("nats://127.0.0.1:1") {
		t.Fatalf("SameListener wrong for %s", url1)
	}
	s, err = natsserver.Start(natsserver.Config{DataDir: dir, Listen: true, ReaderPassword: "given-reader-pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	w2, _ := natsserver.ReadContext(dir, natsserver.WriterFile)
	r2, _ := natsserver.ReadContext(dir, natsserver.ReaderFile)
	if w2.Password != w1.Password || r2.Password != "given-reader-pw" || w2.URL != s.ClientURL() {
		t.Fatalf("after restart: writer %+v reader %+v", w2, r2)
	}
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo(natsserver.ReaderUser, "given-reader-pw"))
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}
