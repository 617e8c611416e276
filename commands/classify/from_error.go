package classify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// FromError builds a [ProviderError] from a Go error, so transport failures
// classify like their Node counterparts (reference §2.7 and the issue's
// constructor rules):
//
//   - a *ProviderError anywhere in the chain is used as the base (a gateway
//     wraps the provider's answer with %w);
//   - context.DeadlineExceeded, os.ErrDeadlineExceeded and net.Error
//     timeouts set Name [NameTimeout] → timeout;
//   - context.Canceled sets Name [NameAbort] → abort, unless the chain also
//     holds timeout evidence;
//   - io.ErrUnexpectedEOF and io.EOF (a connection closed mid-response) set
//     Code "ERR_STREAM_PREMATURE_CLOSE" → timeout;
//   - connection resets, refusals, broken pipes, unreachable hosts and DNS
//     failures set the Node errno code ("ECONNRESET", "ENOTFOUND", …) →
//     timeout;
//   - x509 and TLS certificate verification errors set a Node certificate
//     code ("CERT_HAS_EXPIRED", "ERR_TLS_CERT_ALTNAME_INVALID",
//     "UNABLE_TO_VERIFY_LEAF_SIGNATURE") → tls_certificate;
//   - an error with a Coordination() bool method returning true sets Name
//     [NameCoordination] → coordination.
//
// Message is err.Error(). Cause holds the unwrapped chain (errors.Unwrap,
// first branch of a joined error) to depth 25. A nil err gives nil.
func FromError(err error) *ProviderError {
	return fromError(err, 0)
}

func fromError(err error, depth int) *ProviderError {
	if err == nil {
		return nil
	}
	var pe *ProviderError
	if errors.As(err, &pe) && pe != nil {
		if pe == err {
			return pe
		}
		out := *pe
		out.Cause = pe.Cause
		if out.Message == "" {
			out.Message = err.Error()
		}
		markGo(&out, err)
		return &out
	}
	out := &ProviderError{Message: err.Error()}
	markGo(out, err)
	if depth < maxCauseDepth {
		if next := unwrapOne(err); next != nil {
			out.Cause = fromError(next, depth+1)
		}
	}
	return out
}

func unwrapOne(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != nil {
				return e
			}
		}
	}
	return nil
}

// markGo sets Name or Code from what the Go error chain says.
func markGo(out *ProviderError, err error) {
	var co interface{ Coordination() bool }
	if errors.As(err, &co) && co.Coordination() {
		if out.Name == "" || !coordinationNames[out.Name] {
			out.Name = NameCoordination
		}
		return
	}
	if code := tlsCode(err); code != "" {
		if out.Code == "" {
			out.Code = code
		}
		return
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		if out.Name == "" || out.Name == NameAbort {
			out.Name = NameTimeout
		}
		return
	}
	if code := errnoCode(err); code != "" {
		if out.Code == "" {
			out.Code = code
		}
		return
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		if out.Code == "" {
			out.Code = "ERR_STREAM_PREMATURE_CLOSE"
		}
		return
	}
	if errors.Is(err, context.Canceled) && out.Name == "" {
		out.Name = NameAbort
	}
}

func errnoCode(err error) string {
	for _, c := range []struct {
		errno syscall.Errno
		code  string
	}{
		{syscall.ECONNRESET, "ECONNRESET"},
		{syscall.ECONNREFUSED, "ECONNREFUSED"},
		{syscall.ECONNABORTED, "ECONNABORTED"},
		{syscall.EPIPE, "EPIPE"},
		{syscall.ETIMEDOUT, "ETIMEDOUT"},
		{syscall.EHOSTUNREACH, "EHOSTUNREACH"},
		{syscall.ENETUNREACH, "ENETUNREACH"},
		{syscall.EHOSTDOWN, "EHOSTDOWN"},
		{syscall.ENETRESET, "ENETRESET"},
	} {
		if errors.Is(err, c.errno) {
			return c.code
		}
	}
	if errors.Is(err, net.ErrClosed) {
		return "ECONNRESET"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsTimeout {
			return "ETIMEDOUT"
		}
		if dns.IsTemporary {
			return "EAI_AGAIN"
		}
		return "ENOTFOUND"
	}
	return ""
}

func tlsCode(err error) string {
	var hostErr x509.HostnameError
	if errors.As(err, &hostErr) {
		return "ERR_TLS_CERT_ALTNAME_INVALID"
	}
	var invalid x509.CertificateInvalidError
	if errors.As(err, &invalid) {
		if invalid.Reason == x509.Expired {
			return "CERT_HAS_EXPIRED"
		}
		return "CERT_UNTRUSTED"
	}
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) {
		return "UNABLE_TO_VERIFY_LEAF_SIGNATURE"
	}
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) {
		return "UNABLE_TO_VERIFY_LEAF_SIGNATURE"
	}
	var sysRoots x509.SystemRootsError
	if errors.As(err, &sysRoots) {
		return "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"
	}
	return ""
}
