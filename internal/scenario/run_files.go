package scenario

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fledger/fledger/events"
)

// RunFiles loads and runs each scenario file into st, in order, each as
// the agent named by its file (incident-day.yaml: agent incident-day):
// one ledger holding every scenario. An error names the file.
func RunFiles(ctx context.Context, st events.Store, files []string) error {
	for _, f := range files {
		sc, err := LoadFile(f)
		if err != nil {
			return err
		}
		agent := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if _, err := Run(ctx, st, sc, Options{Agent: agent}); err != nil {
			return fmt.Errorf("scenario %s: %w", f, err)
		}
	}
	return nil
}
