package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Set at link time (goreleaser's defaults): go build -ldflags "-X main.version=v1.2.3
// -X main.commit=$(git rev-parse HEAD) -X main.date=$(date -u +%FT%TZ)". Unset, they come
// from the build info: the module version of `go install ...@v1.2.3` and the VCS stamp of
// a build in a git checkout.
var (
	version = ""
	commit  = ""
	date    = ""
)

// The collector modules whose versions name the release handoffcheck links: the v0 line
// (the collector release, e.g. v0.161.0) and the stable v1 line (e.g. v1.67.0).
const (
	collectorModule       = "go.opentelemetry.io/collector/receiver/otlpreceiver"
	collectorStableModule = "go.opentelemetry.io/collector/pdata"
)

type buildInfo struct {
	Version, Commit, Date, Collector, CollectorStable, Go string
	Modified                                              bool
}

// readBuildInfo merges the link-time variables with the binary's build info.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: date, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b.withDefaults()
	}
	if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true" && commit == ""
		}
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		switch d.Path {
		case collectorModule:
			b.Collector = d.Version
		case collectorStableModule:
			b.CollectorStable = d.Version
		}
	}
	return b.withDefaults()
}

func (b buildInfo) withDefaults() buildInfo {
	if b.Version == "" {
		b.Version = "devel"
	}
	for _, f := range []*string{&b.Commit, &b.Date, &b.Collector, &b.CollectorStable} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return b
}

func (b buildInfo) commitText() string {
	c := b.Commit
	if b.Modified {
		c += " (modified)"
	}
	return c
}

// versionLine is `handoffcheck --version`: one line.
func versionLine() string {
	b := readBuildInfo()
	return fmt.Sprintf("handoffcheck %s (commit %s, collector %s)", b.Version, b.commitText(), b.Collector)
}

func versionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and collector release of this build",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			b := readBuildInfo()
			var sb strings.Builder
			fmt.Fprintf(&sb, "handoffcheck %s\n", b.Version)
			fmt.Fprintf(&sb, "commit:    %s\n", b.commitText())
			fmt.Fprintf(&sb, "built:     %s\n", b.Date)
			fmt.Fprintf(&sb, "collector: %s (stable modules %s)\n", b.Collector, b.CollectorStable)
			fmt.Fprintf(&sb, "go:        %s %s/%s\n", b.Go, runtime.GOOS, runtime.GOARCH)
			fmt.Fprint(stdout, sb.String())
		},
	}
}
