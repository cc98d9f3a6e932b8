package e2e

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestCollectorModulesPinned guards DESIGN.md's pin: every collector module linked into
// the tests is core v0.161.0 or stable v1.67.0, so the components are built and tested
// against the same release as the distribution. A `go get` that drifts fails here.
func TestCollectorModulesPinned(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	for _, m := range info.Deps {
		if !strings.HasPrefix(m.Path, "go.opentelemetry.io/collector") {
			continue
		}
		if m.Version != "v0.161.0" && m.Version != "v1.67.0" {
			t.Errorf("%s is at %s; pin it to v0.161.0 (or v1.67.0 for stable modules)", m.Path, m.Version)
		}
	}
}
