package events

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCredsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	creds := "-----BEGIN NATS USER JWT-----\neyJ0\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\nSUAM\n------END USER NKEY SEED------\n"
	for _, tc := range []struct {
		name, path, err string
	}{
		{"creds", write("u.creds", creds), ""},
		{"context", write("nats-reader.json", ` {"url":"nats://127.0.0.1:4222","user":"fledger-reader","password":"p"}`), "is JSON (a nats CLI context file?), not a .creds file"},
		{"missing", filepath.Join(dir, "nosuch.creds"), "no such file"},
	} {
		err := checkCredsFile(tc.path)
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}
