package schemas_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/schemas"
)

// Every stored message of the ledgers earlier builds wrote
// (fixtures/ledgers/*.jsonl) is a commit of commit.v1.json, each of its
// events an envelope.v1.json whose payload validates against its type's
// schema at the version it was written with.
func TestStoredSchemas_FixtureLedgers(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "ledgers", "*.jsonl"))
	if err != nil || len(files) < 2 {
		t.Fatalf("fixture ledgers: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			sc := bufio.NewScanner(fh)
			sc.Buffer(nil, 16<<20)
			n := 0
			for sc.Scan() {
				var msg struct {
					Seq  uint64          `json:"seq"`
					Data json.RawMessage `json:"data"`
				}
				if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
					t.Fatalf("line %d: %v", n+1, err)
				}
				checkCommit(t, fmt.Sprintf("seq %d", msg.Seq), msg.Data)
				n++
			}
			if err := sc.Err(); err != nil || n == 0 {
				t.Fatalf("%d messages: %v", n, err)
			}
		})
	}
}

// checkCommit validates one stored message body against commit.v1.json,
// and each of its events against envelope.v1.json.
func checkCommit(t *testing.T, where string, body []byte) {
	t.Helper()
	if err := schemas.Validate("commit.v1.json", body); err != nil {
		t.Fatalf("%s: commit: %v", where, err)
	}
	var c struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for i, env := range c.Events {
		if err := schemas.Validate("envelope.v1.json", env); err != nil {
			t.Fatalf("%s event %d: envelope: %v", where, i, err)
		}
	}
}

// The envelope schema checks the payload against its type's schema at the
// envelope's schema_version; a type or version fledger has no schema for
// is checked as an envelope only.
func TestStoredSchemas_EnvelopeChecksThePayload(t *testing.T) {
	const head = `{"id":"01a2310f-e4e1-79b6-9e09-af205e88be9b","at":"2026-03-02T09:00:00Z","agent":"main","aggregate":"turn","key":"t1",`
	for _, tc := range []struct {
		name, env string
		ok        bool
	}{
		{"valid v1", head + `"type":"NoticeSent","schema_version":1,"payload":{"turn_id":"t1","session":"s","kind":"fallback","text":"x","delivered":true}}`, true},
		{"bad enum", head + `"type":"NoticeSent","schema_version":1,"payload":{"turn_id":"t1","session":"s","kind":"shout","text":"x","delivered":true}}`, false},
		{"missing field", head + `"type":"NoticeSent","schema_version":1,"payload":{"turn_id":"t1"}}`, false},
		{"v1 refuses a v2 field", head + `"type":"TurnStarted","schema_version":1,"payload":{"rules":2}}`, false},
		{"unknown version", head + `"type":"NoticeSent","schema_version":99,"payload":{}}`, true},
		{"unknown type", head + `"type":"Later","schema_version":1,"payload":{"x":1}}`, true},
		{"bad time", `{"id":"x","at":"yesterday","agent":"main","aggregate":"turn","key":"t1","type":"Later","schema_version":1,"payload":{}}`, false},
		{"bad aggregate", `{"id":"x","at":"2026-03-02T09:00:00Z","agent":"main","aggregate":"galaxy","key":"t1","type":"Later","schema_version":1,"payload":{}}`, false},
	} {
		err := schemas.Validate("envelope.v1.json", []byte(tc.env))
		if (err == nil) != tc.ok {
			t.Errorf("%s: valid %v, want %v (%v)", tc.name, err == nil, tc.ok, err)
		}
	}
	if err := schemas.Validate("commit.v1.json", []byte(`{"events":[]}`)); err == nil {
		t.Error("a commit without events accepted")
	}
}
