package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// A token's surrounding white space is trimmed (a Kubernetes secret's
// trailing newline); one that is only white space or still holds white
// space or a control character is refused at start, naming the flag or
// variable and never printing the token.
func TestBindToken_TrimsAndRefusesWhiteSpace(t *testing.T) {
	for _, c := range []struct {
		name, flag, env string
		want            string
		err             string
	}{
		{name: "none", want: ""},
		{name: "flag", flag: "s3cret", want: "s3cret"},
		{name: "variable with a trailing newline", env: "s3cret\n", want: "s3cret"},
		{name: "flag with surrounding blanks", flag: " \ts3cret \r\n", want: "s3cret"},
		{name: "the flag wins", flag: "flag-tok", env: "env-tok", want: "flag-tok"},
		{name: "variable of white space only", env: "\n", err: "FLEDGER_TOKEN is only white space: give the token, or none at all"},
		{name: "flag with a space inside", flag: "s3c ret", err: "--token holds U+0020 at byte 3 (after trimming its surrounding white space): a bearer token has no white space or control characters — clients could never send it"},
		{name: "variable with a newline inside", env: "s3c\nret\n", err: "FLEDGER_TOKEN holds U+000A at byte 3 (after trimming its surrounding white space): a bearer token has no white space or control characters — clients could never send it"},
		{name: "variable with an escape", env: "s3\x1bcret", err: "FLEDGER_TOKEN holds U+001B at byte 2 (after trimming its surrounding white space): a bearer token has no white space or control characters — clients could never send it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FLEDGER_TOKEN", c.env)
			tok := c.flag
			err := bindToken("0.0.0.0:7400", &tok)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), "is not a loopback address") {
					t.Fatalf("no token on 0.0.0.0: %v", err)
				}
				return
			}
			testutil.NoError(t, err)
			if tok != c.want {
				t.Fatalf("token %q, want %q", tok, c.want)
			}
		})
	}
	// serve and view refuse it at start, before opening anything.
	t.Setenv("FLEDGER_TOKEN", "")
	for _, cmd := range []string{"serve", "view"} {
		_, err := runFledger(t, "--data", t.TempDir(), cmd, "--token", "s3c ret")
		if err == nil || !strings.HasPrefix(err.Error(), "--token holds U+0020 at byte 3") || strings.Contains(err.Error(), "s3c") {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
}

// serve started with FLEDGER_TOKEN ending in a newline answers the token
// without it.
func TestServe_TokenWithATrailingNewlineIsAccepted(t *testing.T) {
	p := startCLI(t, filepath.Join(t.TempDir(), "stdout"), []string{"FLEDGER_TOKEN=s3cret\n"},
		"--data", t.TempDir(), "serve", "--http", "127.0.0.1:0", "--no-micro")
	base := p.waitServing(t)
	for _, c := range []struct {
		auth string
		want int
	}{
		{"Bearer s3cret", http.StatusOK},
		{"", http.StatusUnauthorized},
	} {
		req, err := http.NewRequest(http.MethodGet, base+"/v1/profiles", nil)
		testutil.NoError(t, err)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		testutil.NoError(t, err)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Fatalf("%q: status %d, want %d", c.auth, resp.StatusCode, c.want)
		}
	}
	p.interrupt(t)
}
