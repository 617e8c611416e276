package schemas_test

import (
	"os"
	"testing"

	"github.com/fledger/fledger/internal/apispec"
	"github.com/fledger/fledger/internal/testutil"
)

// The HTTP contract lints clean: kin-openapi's validation (examples,
// defaults, patterns) and the project's rules (apispec.Lint: no null, unique
// camelCase operationIds, every $ref resolves, every property and parameter
// described, no white space in a property name).
func TestOpenAPI_LintsClean(t *testing.T) {
	raw, err := os.ReadFile("openapi.v1.yaml")
	testutil.NoError(t, err)
	for _, p := range apispec.Lint(raw) {
		t.Error(p)
	}
}
