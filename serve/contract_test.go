package serve_test

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"

	"github.com/fledger/fledger/internal/apispec"
	"github.com/fledger/fledger/serve"
)

// contract is schemas/openapi.v1.yaml, loaded once for every server the
// tests start (startServer checks each answer against it).
var contract = sync.OnceValues(func() (*apispec.Contract, error) {
	raw, err := os.ReadFile("../schemas/openapi.v1.yaml")
	if err != nil {
		return nil, err
	}
	return apispec.NewContract(raw)
})

// validated records every error answer (status and code) that was checked
// against the contract and kept it, over the whole run.
var validated = struct {
	sync.Mutex
	seen map[serve.ErrorAnswer]int
}{seen: map[serve.ErrorAnswer]int{}}

// checked wraps h so that every answer is validated against the contract;
// an answer that breaks it fails t, the test that provoked it.
func checked(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	c, err := contract()
	if err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	return c.Middleware(h, func(a apispec.Answer) {
		if a.Err != nil {
			t.Errorf("the answer breaks schemas/openapi.v1.yaml: %v", a.Err)
			return
		}
		if a.Status >= 400 {
			validated.Lock()
			validated.seen[serve.ErrorAnswer{Status: a.Status, Code: a.Code}]++
			validated.Unlock()
		}
	})
}

// mustSee are the error answers a full run must have seen validated: each
// row of the error table, and each answer of the HTTP guard and the
// request decoding.
func mustSee() []serve.ErrorAnswer {
	out := serve.ErrorTableAnswers()
	return append(out,
		serve.ErrorAnswer{Status: 400, Code: serve.CodeInvalidJSON},
		serve.ErrorAnswer{Status: 400, Code: serve.CodeInvalidRequest},
		serve.ErrorAnswer{Status: 401, Code: serve.CodeUnauthorized},
		serve.ErrorAnswer{Status: 403, Code: serve.CodeReadOnly},
		serve.ErrorAnswer{Status: 404, Code: serve.CodeNotFound},
		serve.ErrorAnswer{Status: 404, Code: serve.CodeUnknownAgent},
		serve.ErrorAnswer{Status: 405, Code: serve.CodeMethodNotAllowed},
		serve.ErrorAnswer{Status: 409, Code: serve.CodeAmbiguousTurn},
		serve.ErrorAnswer{Status: 413, Code: serve.CodeBodyTooLarge},
		serve.ErrorAnswer{Status: 415, Code: serve.CodeInvalidRequest},
		serve.ErrorAnswer{Status: 500, Code: serve.CodeInternal},
	)
}

// TestMain runs the tests, then, on a full run (no -run or -skip), fails
// when an error answer of mustSee was never provoked and validated: every
// status the server answers must be seen keeping the contract.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" {
		var missing []string
		for _, a := range mustSee() {
			if validated.seen[a] == 0 {
				missing = append(missing, fmt.Sprintf("%d %s", a.Status, a.Code))
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			fmt.Printf("FAIL: no test provoked and validated these error answers against schemas/openapi.v1.yaml: %v\n", missing)
			code = 1
		}
	}
	os.Exit(code)
}
