package metrics

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// NewBuildInfoCollector returns the fledger_build_info gauge (always 1)
// whose labels say which build is running: version ([Version], else the
// module version, else "dev"), revision (the VCS commit the binary was
// built from, "unknown" outside a VCS build) and goversion. The fold
// registers it; a server with its own registry and no fold registers it
// there.
func NewBuildInfoCollector() prometheus.Collector {
	version, revision, goVersion := buildInfo()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help:        "Always 1; the labels name the running fledger build (version, VCS revision, Go version).",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goVersion},
	})
	g.Set(1)
	return g
}

func buildInfo() (version, revision, goVersion string) {
	version, revision, goVersion = Version, "unknown", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if version == "" {
			version = "dev"
		}
		return
	}
	goVersion = bi.GoVersion
	if version == "" || version == "dev" {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
	}
	if version == "" {
		version = "dev"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			revision = s.Value
		}
	}
	return
}
