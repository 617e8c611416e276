package natsserver

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// The users of the loopback listener. Without a listener the server has no
// users at all: nothing but this process can reach it.
const (
	// WriterUser is fledger's own user: the only one that may publish into
	// the stream's subjects (and use the rest of the JetStream API).
	WriterUser = "fledger"
	// ReaderUser may read the stream (stream info, direct and message
	// gets, consumers and their acks), subscribe to its subjects and send
	// the read-only service requests of [Config].ReaderRequests; it can
	// publish nothing else.
	ReaderUser = "fledger-reader"
	// WriterFile and ReaderFile, in the data directory, hold each user's
	// credentials and the listener's URL as a nats CLI context (usable as
	// nats --context DIR/nats-reader.json), mode 0600. The passwords are
	// generated on the first start with a listener and kept; the URL is
	// rewritten on every start.
	WriterFile = "nats-writer.json"
	ReaderFile = "nats-reader.json"
)

// Context is a credentials file: the nats CLI context format (a subset).
type Context struct {
	Description string `json:"description"`
	URL         string `json:"url"`
	User        string `json:"user"`
	Password    string `json:"password"`
}

// ReadContext reads dir/file (WriterFile or ReaderFile). An error wraps
// os.ErrNotExist when there is none: the directory's server never
// listened.
func ReadContext(dir, file string) (Context, error) {
	var c Context
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("natsserver: credentials: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("natsserver: credentials %s: %w", path, err)
	}
	if c.User == "" || c.Password == "" {
		return c, fmt.Errorf("natsserver: credentials %s: no user or password", path)
	}
	return c, nil
}

// SameListener reports whether url (one or more comma-separated NATS
// URLs) names the loopback listener recorded in c: a loopback host with
// c's port. Credentials read from a data directory are sent only then,
// never to another server.
func (c Context) SameListener(urls string) bool {
	want, err := url.Parse(c.URL)
	if err != nil || want.Port() == "" {
		return false
	}
	for _, u := range strings.Split(urls, ",") {
		u = strings.TrimSpace(u)
		if !strings.Contains(u, "://") {
			u = "nats://" + u
		}
		p, err := url.Parse(u)
		if err != nil || p.Port() != want.Port() {
			return false
		}
		if h := p.Hostname(); h != "localhost" {
			if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
				return false
			}
		}
	}
	return true
}

// passwords returns the writer and reader passwords: those given in cfg,
// else those stored in the data directory, else new random ones.
func passwords(dir string, cfg Config) (writer, reader string, err error) {
	pick := func(given, file string) (string, error) {
		if given != "" {
			return given, nil
		}
		c, err := ReadContext(dir, file)
		if err == nil {
			return c.Password, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return "", fmt.Errorf("natsserver: generate password: %w", err)
		}
		return base64.RawURLEncoding.EncodeToString(b), nil
	}
	if writer, err = pick(cfg.WriterPassword, WriterFile); err != nil {
		return "", "", err
	}
	if reader, err = pick(cfg.ReaderPassword, ReaderFile); err != nil {
		return "", "", err
	}
	if writer == reader {
		return "", "", errors.New("natsserver: the writer and reader passwords must differ")
	}
	return writer, reader, nil
}

// users are the listener's two users.
func users(cfg Config, writer, reader string) []*server.User {
	js := "$JS.API."
	pub := []string{
		js + "INFO", js + "STREAM.NAMES", js + "STREAM.LIST",
		"$SRV.PING", "$SRV.PING.>", "$SRV.INFO", "$SRV.INFO.>", "$SRV.STATS", "$SRV.STATS.>",
	}
	st := cfg.Stream
	pub = append(pub,
		js+"STREAM.INFO."+st, js+"STREAM.MSG.GET."+st,
		js+"DIRECT.GET."+st, js+"DIRECT.GET."+st+".>",
		js+"CONSUMER.CREATE."+st, js+"CONSUMER.CREATE."+st+".>",
		js+"CONSUMER.DURABLE.CREATE."+st+".>",
		js+"CONSUMER.INFO."+st+".>",
		js+"CONSUMER.NAMES."+st, js+"CONSUMER.LIST."+st,
		js+"CONSUMER.MSG.NEXT."+st+".>",
		"$JS.ACK."+st+".>", "$JS.FC."+st+".>")
	// The reader may delete consumers on the ledger: its ordered
	// consumers' leftovers and an export's durable consumer that
	// `export --follow --out FILE` moves to where the file ends (deleted
	// and made again; without this the move was refused and the export
	// hung). It deletes a position, never a message (the stream denies
	// deletes); an exporter whose consumer another deleted stops with
	// events.ErrCursorReplaced. The cluster's accounts.conf grants the same.
	pub = append(pub, js+"CONSUMER.DELETE."+st+".>")
	for _, b := range cfg.ReadObjectStores {
		pub = append(pub, ObjectStoreReadSubjects(b)...)
	}
	pub = append(pub, cfg.ReaderRequests...)
	sub := append([]string{"_INBOX.>"}, cfg.Subjects...)
	return []*server.User{
		{Username: WriterUser, Password: writer},
		{Username: ReaderUser, Password: reader, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: pub},
			Subscribe: &server.SubjectPermission{Allow: sub},
		}},
	}
}

// ObjectStoreReadSubjects are the subjects a user publishes to read the
// object store bucket (nats.go's jetstream package): open it (stream
// info), an object's info (a direct get of its last meta message), its
// chunks (an ordered consumer, created, flow-controlled, deleted when the
// get ends; List reads the meta subjects the same way). Nothing writes or
// creates the bucket. deploy/nats-cluster/accounts.conf grants the same
// to its reader on FLEDGER_SNAPSHOTS; the writer has in addition the
// bucket's creation, its purge and its $O subjects.
func ObjectStoreReadSubjects(bucket string) []string {
	st := "OBJ_" + bucket
	js := "$JS.API."
	return []string{js + "STREAM.INFO." + st, js + "DIRECT.GET." + st + ".>",
		js + "CONSUMER.CREATE." + st + ".>", js + "CONSUMER.DELETE." + st + ".>", "$JS.FC." + st + ".>"}
}

// writeContexts (re)writes both credentials files with the listener's URL,
// each through a 0600 temporary file renamed into place.
func writeContexts(dir, url, writer, reader string) error {
	for _, c := range []struct {
		file string
		ctx  Context
	}{
		{WriterFile, Context{Description: "fledger embedded server in " + dir + ": writer (fledger itself)", URL: url, User: WriterUser, Password: writer}},
		{ReaderFile, Context{Description: "fledger embedded server in " + dir + ": read-only", URL: url, User: ReaderUser, Password: reader}},
	} {
		b, _ := json.MarshalIndent(c.ctx, "", "  ")
		tmp, err := os.CreateTemp(dir, "."+c.file+".*")
		if err != nil {
			return fmt.Errorf("natsserver: write credentials: %w", err)
		}
		_, werr := tmp.Write(append(b, '\n'))
		if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("natsserver: write credentials: %w", err)
		}
		if err := os.Rename(tmp.Name(), filepath.Join(dir, c.file)); err != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("natsserver: write credentials: %w", err)
		}
	}
	return nil
}
