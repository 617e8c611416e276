package events

import (
	"bytes"
	"fmt"
	"os"
)

// checkCredsFile refuses, before connecting, a credentials file that is
// not one: the nats library reads it only once the server asks, and then
// says only that it found no nkey seed. A nats CLI context file (JSON,
// what the embedded listener writes as nats-reader.json) is the likely
// mix-up, and its message says what to give instead.
func checkCredsFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("events: NATS credentials file: %w", err)
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return fmt.Errorf("events: NATS credentials file %s is JSON (a nats CLI context file?), not a .creds file: "+
			"give the .creds file with the user JWT and nkey seed, or the user and password it holds (--nats-user, --nats-password); "+
			"with the embedded server's --data, fledger reads its nats-*.json itself", path)
	}
	return nil
}
