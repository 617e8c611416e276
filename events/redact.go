package events

import (
	"errors"
	"net/url"
	"strings"
)

// redacted replaces a secret in URLs, messages and logs.
const redacted = "xxxxx"

// RedactURL returns urls — one NATS server URL or a comma-separated list,
// as [WithURL] takes, with or without the nats:// scheme — with every
// secret of their user information replaced by "xxxxx", for messages and
// logs: the password of user:password (the user is kept, as
// [net/url.URL.Redacted] does), and a user without a password, which NATS
// takes as an authentication token. The rest is kept as given, even
// where it would not parse (a raw '#' or '/' in a password).
func RedactURL(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if userinfo, start, at := userInfo(p); at >= 0 {
			user, _, hasPassword := strings.Cut(userinfo, ":")
			if hasPassword {
				parts[i] = p[:start] + user + ":" + redacted + p[at:]
			} else if userinfo != "" {
				parts[i] = p[:start] + redacted + p[at:]
			}
		}
	}
	return strings.Join(parts, ",")
}

// userInfo finds the user information of one URL: the text between the
// scheme's "://" (or the start: nats.go adds nats://) and the last '@',
// starting at start; at is the index of that '@' in p, -1 when there is
// none.
func userInfo(p string) (userinfo string, start, at int) {
	if i := strings.Index(p, "://"); i >= 0 {
		start = i + len("://")
	} else {
		start = len(p) - len(strings.TrimLeft(p, " \t"))
	}
	at = strings.LastIndex(p[start:], "@")
	if at < 0 {
		return "", start, -1
	}
	at += start
	return p[start:at], start, at
}

// urlError is a connection error of a URL that does not parse: its text
// (Go's parse error quotes the URL up to a '#' and the offending part,
// which may be a piece of a password) is replaced, errors.Is and As still
// see it.
type urlError struct {
	url string
	err *url.Error
}

func (e *urlError) Error() string {
	return "the URL " + RedactURL(e.url) + " does not parse; percent-encode the characters / ? # @ % in a password or token"
}

func (e *urlError) Unwrap() error { return e.err }

// redactedError is an error whose text had a URL with secrets replaced
// by its redacted form.
type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redactURLError returns err with the secrets of urls hidden: a URL parse
// error is replaced by a message of its own ([urlError]), and every URL
// of urls quoted whole in err's text is redacted ([RedactURL]).
func redactURLError(err error, urls string) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &urlError{url: urls, err: ue}
	}
	text := err.Error()
	for _, p := range strings.Split(urls, ",") {
		if p = strings.TrimSpace(p); p != "" {
			text = strings.ReplaceAll(text, p, RedactURL(p))
		}
	}
	if text == err.Error() {
		return err
	}
	return &redactedError{err: err, text: text}
}
