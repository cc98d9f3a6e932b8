package e2e

import (
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMakeStampsKeepCopiedBuildFresh: the build targets go by content stamps, not
// timestamps. _build is copied into another directory, then the checkout's sources beside
// it (every source newer than every output, as a CI cache restored before a fresh clone
// leaves them), and `make build` there builds nothing: the builder, the collector and
// handoffcheck are up to date. (TestContainerImage checks that `make image` does not
// rebuild the collector either.)
func TestMakeStampsKeepCopiedBuildFresh(t *testing.T) {
	collectorBinary(t)
	handoffcheck(t)
	dst := t.TempDir()
	copyTree(t, filepath.Join("..", "_build"), filepath.Join(dst, "_build"), func(rel string) bool {
		return rel == "image"
	}, true)
	time.Sleep(10 * time.Millisecond)
	copyTree(t, "..", dst, func(rel string) bool {
		return rel == ".git" || rel == "_build" || rel == "dist" || strings.HasSuffix(rel, "node_modules")
	}, false)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "build")
	cmd.Dir = dst
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make build in the copy: %v\n%s", err, out)
	}
	for _, target := range []string{"_build/tools/builder", "_build/otelcol-handoff", "_build/handoffcheck"} {
		if !strings.Contains(string(out), target+": up to date") {
			t.Errorf("%s rebuilt in a copy with the same sources:\n%s", target, out)
		}
	}
	if strings.Contains(string(out), "go build") || strings.Contains(string(out), "--config builder-config.yaml") {
		t.Errorf("make build compiled in a copy with the same sources:\n%s", out)
	}
}

// copyTree copies the regular files under src to dst, skipping the paths skip names
// (relative to src); hardLink links large files instead of copying them.
func copyTree(t *testing.T, src, dst string, skip func(rel string) bool, hardLink bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel != "." && skip(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if hardLink && info.Size() > 1<<20 && os.Link(p, target) == nil {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}
