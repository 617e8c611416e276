package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/projections/metrics"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func init() {
	register(newVersionCmd)
	metrics.Version = version // fledger_build_info{version}
}

// versionJSON is `fledger version --json`.
type versionJSON struct {
	Version string `json:"version"`
	Go      string `json:"go"`
}

func newVersionCmd(_ *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print fledger's version and build information",
		Long: `Print fledger's version and the Go version it was built with; --json
prints {"version", "go"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, goVer := buildVersion()
			if asJSON {
				return printJSON(cmd, versionJSON{Version: v, Go: goVer})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "fledger %s (%s)\n", v, goVer)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// buildVersion is fledger's version (the -ldflags value, else the module
// version of a `go install …@version` build, else "dev") and the Go
// version it was built with. `fledger version` prints it and OTLP exports
// send it as service.version.
func buildVersion() (v, goVer string) {
	v, goVer = version, "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVer = bi.GoVersion
		if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	return v, goVer
}
