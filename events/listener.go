package events

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fledger/fledger/internal/natsserver"
)

// The users of the embedded server's loopback listener ([WithListen]).
// Without a listener there are none: only the process itself can connect.
const (
	// WriterUser is fledger's own user, the only one that may publish
	// into fledger.> (and use the rest of the JetStream API): the store
	// that started the server, and another fledger process writing to
	// the same ledger ([WithListenerCredentials] with [ReadWrite]).
	WriterUser = natsserver.WriterUser
	// ReaderUser may read the stream (stream info, direct and message
	// gets, consumers and their acks), subscribe to fledger.> and send the
	// requests of [WithReaderRequests]; it can publish nothing else.
	ReaderUser = natsserver.ReaderUser
	// WriterCredentialsFile and ReaderCredentialsFile, in the data
	// directory, hold each user's password and the listener's URL as a
	// nats CLI context file (nats --context DIR/nats-reader.json), mode
	// 0600. Passwords are generated on the first start with a listener and
	// kept; the URL is rewritten on every start.
	WriterCredentialsFile = natsserver.WriterFile
	ReaderCredentialsFile = natsserver.ReaderFile
)

// Access is which user of an embedded listener [WithListenerCredentials]
// connects as.
type Access int

const (
	// ReadOnly connects as [ReaderUser].
	ReadOnly Access = iota
	// ReadWrite connects as [WriterUser].
	ReadWrite
)

// WithListenPasswords sets the passwords of the listener's [WriterUser] and
// [ReaderUser] instead of those stored in the data directory (generated on
// the first start); either may be "" to keep the stored one. They are
// written to the credentials files too. Ignored without [WithListen].
func WithListenPasswords(writer, reader string) Option {
	return func(c *config) error {
		if writer != "" && writer == reader {
			return invalid("the writer and reader passwords must differ")
		}
		c.writerPW, c.readerPW = writer, reader
		return nil
	}
}

// WithReaderRequests lets the listener's [ReaderUser] also publish to these
// subjects: requests to read-only service endpoints (serve's
// MicroReadSubjects). Ignored without [WithListen].
func WithReaderRequests(subjects ...string) Option {
	return func(c *config) error {
		for _, s := range subjects {
			if s == "" || strings.HasPrefix(s, SubjectPrefix+".") || s == ">" {
				return invalid("reader request subject %q", s)
			}
		}
		c.readerRequests = append(c.readerRequests, subjects...)
		return nil
	}
}

// WithListenerCredentials authenticates the [WithURL] connection with the
// credentials an embedded server started on dataDir with [WithListen]
// stored there: [WriterUser]'s for ReadWrite, [ReaderUser]'s for ReadOnly.
// They are used only when the URL names that listener (a loopback host and
// the port recorded in the file) and no user or credentials file is given;
// otherwise, or when the directory holds no such file (or it cannot be
// read), the option does nothing. This is how a second fledger process reaches a ledger whose
// server another one runs: the same --data, and --nats the listener's URL.
func WithListenerCredentials(dataDir string, access Access) Option {
	return func(c *config) error {
		if dataDir == "" {
			return invalid("empty data directory")
		}
		if access != ReadOnly && access != ReadWrite {
			return invalid("access %d", access)
		}
		c.credsDir, c.credsAccess = dataDir, access
		return nil
	}
}

// listenerCredentials reads the user and password WithListenerCredentials
// names, or "" when they do not apply to url.
func listenerCredentials(dir string, access Access, url string) (user, password string, err error) {
	file := ReaderCredentialsFile
	if access == ReadWrite {
		file = WriterCredentialsFile
	}
	ctx, err := natsserver.ReadContext(dir, file)
	if errors.Is(err, os.ErrNotExist) {
		// None: the directory's server never listened, so connect
		// without; a listener then refuses with an authorization
		// violation.
		return "", "", nil
	}
	if err != nil {
		// There, but not a credentials file (damaged, hand-edited):
		// say so rather than connect without and be told to use the
		// very directory given.
		return "", "", fmt.Errorf("events: %w", err)
	}
	if !ctx.SameListener(url) {
		return "", "", nil
	}
	if access == ReadOnly && ctx.User != ReaderUser || access == ReadWrite && ctx.User != WriterUser {
		return "", "", fmt.Errorf("events: credentials %s are for user %q", filepath.Join(dir, file), ctx.User)
	}
	return ctx.User, ctx.Password, nil
}
