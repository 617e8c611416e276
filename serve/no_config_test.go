package serve_test

import (
	"strings"
	"testing"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// An applied config without a primary model refuses turns as a missing
// configuration (503 no_config) saying what to set.
func TestHTTP_EmptyConfigRefusesTurnsAsNoConfig(t *testing.T) {
	l, err := config.Parse([]byte(`{}`), "empty")
	testutil.NoError(t, err)
	srv := startServer(t, testutil.Store(t), serve.Config{Config: l})
	status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s"}`)
	eb := errorBody(t, b)
	if status != 503 || eb.Error != serve.CodeNoConfig ||
		!strings.HasPrefix(eb.Detail, "no model configured for agent main: set agents.defaults.model.primary") {
		t.Fatalf("%d %s", status, b)
	}
}
