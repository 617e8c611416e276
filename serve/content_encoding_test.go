package serve_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// A request body is read as it arrives: one sent with a Content-Encoding
// other than identity (gzip, br, …) is 415, saying the body must be JSON
// as is, rather than 400 "malformed JSON at byte 1" about its first
// compressed byte — over HTTP and the micro service alike; nothing is
// recorded. identity (any case) is JSON as is.
func TestHTTP_ContentEncodingRefused(t *testing.T) {
	srv, st, mc := strictServer(t)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte(`{"session":"s"}`))
	testutil.NoError(t, w.Close())
	refused := func(enc string) serve.ErrorBody {
		return serve.ErrorBody{Error: serve.CodeInvalidRequest,
			Detail: `Content-Encoding "` + enc + `" is not taken: a request body must be JSON as is (identity encoding, no compression)`}
	}
	before := testutil.LastSeq(t, st)
	for _, c := range []struct{ enc, body string }{
		{"gzip", gz.String()},
		{"br", `{"session":"s"}`},
		{"identity, gzip", gz.String()},
	} {
		status, b := do(t, "POST", srv.url+"/v1/turns", c.body, "Content-Encoding", c.enc)
		if got := errorBody(t, b); status != 415 || got != refused(c.enc) {
			t.Errorf("HTTP Content-Encoding %s: %d %s, want 415 %+v", c.enc, status, b, refused(c.enc))
		}
		m := nats.NewMsg(serve.MicroPrefix + ".turns.begin")
		m.Data = []byte(c.body)
		m.Header.Set("Content-Encoding", c.enc)
		r, err := mc.RequestMsg(m, 5*time.Second)
		testutil.NoError(t, err)
		var eb serve.ErrorBody
		_ = json.Unmarshal(r.Data, &eb)
		if r.Header.Get("Nats-Service-Error-Code") != "415" || eb != refused(c.enc) {
			t.Errorf("micro Content-Encoding %s: %v %s, want 415 %+v", c.enc, r.Header, r.Data, refused(c.enc))
		}
	}
	// NATS header names are case-sensitive; the service matches this one
	// without case, as HTTP does.
	m := nats.NewMsg(serve.MicroPrefix + ".turns.begin")
	m.Data = gz.Bytes()
	m.Header["content-encoding"] = []string{"gzip"}
	r, err := mc.RequestMsg(m, 5*time.Second)
	testutil.NoError(t, err)
	if r.Header.Get("Nats-Service-Error-Code") != "415" {
		t.Errorf("micro content-encoding (lower case) gzip: %v %s, want 415", r.Header, r.Data)
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused bodies appended (%d → %d)", before, now)
	}
	for i, enc := range []string{"identity", "IDENTITY"} {
		if status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s","turn_id":"id`+enc+`"}`, "Content-Encoding", enc); status != 200 {
			t.Errorf("HTTP Content-Encoding %s: %d %s, want 200", enc, status, b)
		}
		m := nats.NewMsg(serve.MicroPrefix + ".turns.begin")
		m.Data = []byte(`{"session":"s","turn_id":"m` + string(rune('0'+i)) + `"}`)
		m.Header.Set("Content-Encoding", enc)
		r, err := mc.RequestMsg(m, 5*time.Second)
		testutil.NoError(t, err)
		if r.Header.Get("Nats-Service-Error-Code") != "" {
			t.Errorf("micro Content-Encoding %s: %v %s, want a step", enc, r.Header, r.Data)
		}
	}
}
