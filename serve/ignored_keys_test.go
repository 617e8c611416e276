package serve_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// An outcome report whose error has keys that are not provider error
// fields is answered with them in ignored_keys (a misspelt status is no
// status: the gateway sees why its 429 read as unclassified); a report
// without any has none.
func TestHTTP_OutcomeNamesIgnoredErrorKeys(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	for _, c := range []struct {
		turn, report string
		want         []string
	}{
		{"t1", `{"attempt":1,"error":{"stauts":429,"mesage":"x","cause":{"statsu":1}}}`, []string{"stauts", "mesage", "cause.statsu"}},
		{"t2", `{"attempt":1,"error":{"status":429,"message":"Too Many Requests"}}`, nil},
	} {
		code, body := do(t, "POST", srv.url+"/v1/turns", `{"session":"s-`+c.turn+`","turn_id":"`+c.turn+`"}`)
		if code != http.StatusOK {
			t.Fatalf("begin %s: %d %s", c.turn, code, body)
		}
		code, body = do(t, "POST", srv.url+"/v1/turns/"+c.turn+"/outcomes", c.report)
		var step serve.TurnStep
		testutil.NoError(t, json.Unmarshal(body, &step))
		if code != http.StatusOK || len(step.IgnoredKeys) != len(c.want) {
			t.Fatalf("report %s: %d %s; want ignored_keys %v", c.report, code, body, c.want)
		}
		for i, k := range c.want {
			if step.IgnoredKeys[i] != k {
				t.Fatalf("ignored_keys %v, want %v", step.IgnoredKeys, c.want)
			}
		}
	}
}
