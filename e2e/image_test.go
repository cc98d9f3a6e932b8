package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// imageBuilder is buildah or podman, whichever is installed (`make image` uses the same
// order); .ci/run installs buildah, so CI runs the image test.
func imageBuilder(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"buildah", "podman"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("neither buildah nor podman is installed: the image test needs one (apt-get install buildah; .ci/run installs it)")
	return ""
}

// TestContainerImage builds the image with `make image` (buildah or podman, no daemon, no
// registry pull) into a temporary container storage, exports its root filesystem from the
// OCI archive and runs the binary from it as the image's user: `--version`, and `validate`
// on the config the image ships.
func TestContainerImage(t *testing.T) {
	builder := imageBuilder(t)
	bin := collectorBinary(t)
	tmp := t.TempDir()
	storage := fmt.Sprintf("--root %s --runroot %s --storage-driver vfs", filepath.Join(tmp, "root"), filepath.Join(tmp, "run"))
	archive := filepath.Join(tmp, "image.oci.tar")
	const image = "localhost/otelcol-handoff:e2e"
	t.Cleanup(func() {
		// vfs layers hold read-only directories; the builder removes its own storage.
		_ = exec.Command(builder, strings.Fields(storage+" rmi --all --force")...).Run()
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "image", "IMAGE_BUILDER="+builder, "IMAGE_STORAGE="+storage,
		"IMAGE="+image, "IMAGE_DIR="+filepath.Join(tmp, "context"), "IMAGE_ARCHIVE="+archive)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "otelcol-handoff: up to date") == false {
		t.Errorf("make image rebuilt the collector `make build` had built (content stamps):\n%s", out)
	}

	cfg, files := readOCIArchive(t, archive, filepath.Join(tmp, "rootfs"))

	// FROM scratch: the image holds the binary, its config and the CA bundle, nothing else.
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	want := []string{"etc/otelcol-handoff/config.yaml", "etc/ssl/certs/ca-certificates.crt", "usr/local/bin/otelcol-handoff"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("image files %v, want %v", names, want)
	}
	same := func(inImage, onDisk string) {
		t.Helper()
		a, err := os.ReadFile(onDisk)
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(a) != files[inImage] {
			t.Errorf("%s in the image is not %s", inImage, onDisk)
		}
	}
	same("usr/local/bin/otelcol-handoff", bin)
	same("etc/otelcol-handoff/config.yaml", filepath.Join("..", "examples", "deploy", "standalone.yaml"))

	c := cfg.Config
	if c.User != "65532:65532" {
		t.Errorf("image user %q, want 65532:65532 (non-root)", c.User)
	}
	if got := strings.Join(c.Entrypoint, " "); got != "/usr/local/bin/otelcol-handoff --config /etc/otelcol-handoff/config.yaml" {
		t.Errorf("entrypoint %q", got)
	}
	for _, p := range []string{"4317/tcp", "4318/tcp", "13133/tcp", "8888/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed: %v", p, c.ExposedPorts)
		}
	}
	if len(cfg.RootFS.DiffIDs) == 0 {
		t.Error("the image has no layer")
	}

	// The binary runs from the image's root filesystem as the image's user, in a chroot with
	// /proc mounted as a container runtime mounts it (memory_limiter reads the cgroup limits
	// there) where the test may (root); else from the extracted path.
	rootfs := filepath.Join(tmp, "rootfs")
	chroot := false
	if os.Geteuid() == 0 {
		proc := filepath.Join(rootfs, "proc")
		if err := os.Mkdir(proc, 0o555); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("proc", proc, "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
			t.Logf("mount proc in the image's root: %v; running the binary by its path instead of in a chroot", err)
		} else {
			chroot = true
			t.Cleanup(func() {
				if err := syscall.Unmount(proc, syscall.MNT_DETACH); err != nil {
					t.Errorf("unmount %s: %v", proc, err)
				}
			})
		}
	}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var cmd *exec.Cmd
		if chroot {
			cmd = exec.CommandContext(ctx, "/usr/local/bin/otelcol-handoff", args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
			cmd.Dir = "/"
		} else {
			for i, a := range args {
				if strings.HasPrefix(a, "/etc/") {
					args[i] = filepath.Join(rootfs, a)
				}
			}
			cmd = exec.CommandContext(ctx, filepath.Join(rootfs, "usr/local/bin/otelcol-handoff"), args...)
		}
		cmd.Env = []string{}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("otelcol-handoff %s from the image: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("--version"); !strings.Contains(out, "otelcol-handoff version") {
		t.Errorf("--version: %s", out)
	}
	run("validate", "--config", "/etc/otelcol-handoff/config.yaml")
}

// ociConfig is the part of an OCI image config the test reads.
type ociConfig struct {
	Config struct {
		User         string              `json:"User"`
		Entrypoint   []string            `json:"Entrypoint"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	} `json:"config"`
	RootFS struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// readOCIArchive reads an oci-archive (index.json, the manifest, the config, the layers),
// extracts the layers in order into dir and returns the config and the sha256 of every
// regular file.
func readOCIArchive(t *testing.T, archive, dir string) (ociConfig, map[string][sha256.Size]byte) {
	t.Helper()
	blobs := map[string][]byte{}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			blobs[path.Clean(h.Name)] = b
		}
	}
	blob := func(digest string) []byte {
		t.Helper()
		b, ok := blobs["blobs/"+strings.Replace(digest, ":", "/", 1)]
		if !ok {
			t.Fatalf("OCI archive lacks blob %s", digest)
		}
		if d := fmt.Sprintf("sha256:%x", sha256.Sum256(b)); d != digest {
			t.Fatalf("blob %s has digest %s", digest, d)
		}
		return b
	}
	type descriptor struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	}
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v, %d manifests", err, len(index.Manifests))
	}
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(blob(index.Manifests[0].Digest), &manifest); err != nil {
		t.Fatal(err)
	}
	var cfg ociConfig
	if err := json.Unmarshal(blob(manifest.Config.Digest), &cfg); err != nil {
		t.Fatal(err)
	}
	files := map[string][sha256.Size]byte{}
	for _, l := range manifest.Layers {
		var r io.Reader = bytes.NewReader(blob(l.Digest))
		if strings.HasSuffix(l.MediaType, "+gzip") {
			gz, err := gzip.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			r = gz
		}
		lt := tar.NewReader(r)
		for {
			h, err := lt.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("layer %s: %v", l.Digest, err)
			}
			name := path.Clean(strings.TrimPrefix(h.Name, "/"))
			if name == "." || strings.HasPrefix(name, "../") || strings.Contains(path.Base(name), ".wh.") {
				t.Fatalf("layer %s: unexpected entry %q", l.Digest, h.Name)
			}
			target := filepath.Join(dir, filepath.FromSlash(name))
			switch h.Typeflag {
			case tar.TypeDir:
				if err := os.MkdirAll(target, 0o755); err != nil {
					t.Fatal(err)
				}
			case tar.TypeReg:
				b, err := io.ReadAll(lt)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target, b, os.FileMode(h.Mode).Perm()); err != nil {
					t.Fatal(err)
				}
				files[name] = sha256.Sum256(b)
			default:
				t.Fatalf("layer %s: %q is type %c (a scratch image of COPY lines has files and directories)", l.Digest, h.Name, h.Typeflag)
			}
		}
	}
	return cfg, files
}
