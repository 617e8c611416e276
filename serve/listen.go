package serve

import (
	"net"
	"strconv"
)

// ListenURL is the URL to print for a listener bound to addr (the --http
// flag as given): its host as written — "0.0.0.0" stays "0.0.0.0", not
// the "[::]" the listener reports — with the bound port (so ":0" shows
// the port chosen).
func ListenURL(addr string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + bound.String()
	}
	port := ""
	if ta, ok := bound.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
	} else if _, p, err := net.SplitHostPort(bound.String()); err == nil {
		port = p
	}
	return "http://" + net.JoinHostPort(host, port)
}
