package classify

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

type netTimeout struct{}

func (netTimeout) Error() string   { return "i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

type lockLost struct{}

func (lockLost) Error() string      { return "session lock lost to another runner" }
func (lockLost) Coordination() bool { return true }

func urlErr(err error) error {
	return &url.Error{Op: "Post", URL: "https://api.example.com/v1/messages", Err: err}
}

func TestFromError_GoErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want Reason
		disp Disposition
	}{
		{"context canceled is an abort", fmt.Errorf("call: %w", context.Canceled), ReasonUnknown, DispositionAbort},
		{"deadline exceeded is a timeout", urlErr(context.DeadlineExceeded), ReasonTimeout, DispositionFailover},
		{"os deadline is a timeout", fmt.Errorf("read: %w", os.ErrDeadlineExceeded), ReasonTimeout, DispositionFailover},
		{"net timeout", urlErr(&net.OpError{Op: "read", Net: "tcp", Err: netTimeout{}}), ReasonTimeout, DispositionFailover},
		{"unexpected EOF", fmt.Errorf("stream: %w", io.ErrUnexpectedEOF), ReasonTimeout, DispositionFailover},
		{"EOF mid response", urlErr(io.EOF), ReasonTimeout, DispositionFailover},
		{"connection reset", urlErr(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), ReasonTimeout, DispositionFailover},
		{"connection refused", urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), ReasonTimeout, DispositionFailover},
		{"dns not found", urlErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "api.example.com", IsNotFound: true}}), ReasonTimeout, DispositionFailover},
		{"unknown authority", urlErr(x509.UnknownAuthorityError{}), ReasonTLSCertificate, DispositionFailover},
		{"hostname mismatch", urlErr(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "api.example.com"}), ReasonTLSCertificate, DispositionFailover},
		{"expired certificate", urlErr(x509.CertificateInvalidError{Cert: &x509.Certificate{}, Reason: x509.Expired}), ReasonTLSCertificate, DispositionFailover},
		{"coordination method", fmt.Errorf("turn: %w", lockLost{}), ReasonUnknown, DispositionCoordination},
		{"canceled but deadline joined", errors.Join(context.Canceled, context.DeadlineExceeded), ReasonTimeout, DispositionFailover},
		{"plain error", errors.New("something odd"), ReasonUnclassified, DispositionFailover},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pe := FromError(c.err)
			got := Classify(pe)
			if got.Reason != c.want || got.Disposition != c.disp {
				t.Fatalf("%+v → %s/%s (rule %s), want %s/%s", pe, got.Reason, got.Disposition, got.Evidence.Rule, c.want, c.disp)
			}
		})
	}
}

func TestFromError_FindsWrappedProviderError(t *testing.T) {
	inner := &ProviderError{Provider: "openai", Status: 429, Message: "Rate limit reached", Headers: map[string]string{"retry-after": "2"}}
	err := fmt.Errorf("attempt 2: %w", inner)
	pe := FromError(err)
	if pe.Status != 429 || pe.Provider != "openai" {
		t.Fatalf("%+v", pe)
	}
	got := Classify(pe)
	if got.Reason != ReasonRateLimit || got.RetryAfterMs != 2000 {
		t.Fatalf("%+v", got)
	}
	if FromError(inner) != inner {
		t.Fatal("a *ProviderError is returned as is")
	}
	if FromError(nil) != nil {
		t.Fatal("nil")
	}
}

func TestFromError_DeepChainIsBounded(t *testing.T) {
	var err error = errors.New("root")
	for i := 0; i < 10000; i++ {
		err = fmt.Errorf("w%d: %w", i%10, err)
	}
	pe := FromError(err)
	depth := 0
	for c := pe; c != nil; c = c.Cause {
		depth++
	}
	if depth > maxCauseDepth+1 {
		t.Fatalf("depth %d", depth)
	}
	start := time.Now()
	if r := Classify(pe).Reason; !r.Valid() {
		t.Fatal(r)
	}
	t.Logf("classified in %v", time.Since(start))
}
