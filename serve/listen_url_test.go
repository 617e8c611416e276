package serve_test

import (
	"net"
	"testing"

	"github.com/fledger/fledger/serve"
)

// ListenURL keeps the host the listener was given and takes the port it
// was bound to.
func TestListenURL_KeepsGivenHostTakesBoundPort(t *testing.T) {
	for _, c := range []struct {
		given string
		bound net.Addr
		want  string
	}{
		{"0.0.0.0:7401", &net.TCPAddr{IP: net.IPv6zero, Port: 7401}, "http://0.0.0.0:7401"},
		{"127.0.0.1:0", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50123}, "http://127.0.0.1:50123"},
		{"[::1]:7400", &net.TCPAddr{IP: net.IPv6loopback, Port: 7400}, "http://[::1]:7400"},
		{"localhost:7400", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7400}, "http://localhost:7400"},
	} {
		if got := serve.ListenURL(c.given, c.bound); got != c.want {
			t.Errorf("ListenURL(%q, %v) = %q, want %q", c.given, c.bound, got, c.want)
		}
	}
}
