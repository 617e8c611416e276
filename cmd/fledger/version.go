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

func newVersionCmd(_ *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print fledger's version and build information",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, goVer := buildVersion()
			fmt.Fprintf(cmd.OutOrStdout(), "fledger %s (%s)\n", v, goVer)
			return nil
		},
	}
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
