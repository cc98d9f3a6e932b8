//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// noHang runs f, failing the test when it does not return within a few seconds; a reader
// blocked opening fifo is let go (a writer comes and goes) so the test ends.
func noHang(t *testing.T, fifo string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		<-done
		t.Fatal("blocked on the named pipe")
	}
}

// TestNamedPipeRefused: a named pipe given as a span file is refused before it is opened
// (opening it waited for a writer forever, deaf to SIGINT); as a report path it is refused
// too, and stays a named pipe (it was deleted and replaced by a regular file).
func TestNamedPipeRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "spans.pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cfg := config(t, passing)

	for _, cmd := range []string{"replay", "validate"} {
		noHang(t, fifo, func() {
			code, out, errOut := runCmd(t, cmd, "--config", cfg, fifo)
			require.Equal(t, exitUsage, code, out+errOut)
			require.Contains(t, errOut, "handoffcheck: "+fifo+": not a regular file (a named pipe)")
		})
	}

	for _, flag := range []string{"--json", "--junit", "--markdown", "--html"} {
		noHang(t, fifo, func() {
			code, out, errOut := runCmd(t, "replay", "--config", cfg, flag, fifo, adk)
			require.Equal(t, exitUsage, code, out+errOut)
			require.Contains(t, errOut, "handoffcheck: "+flag+": "+fifo+" is a named pipe, not a regular file")
		})
		fi, err := os.Lstat(fifo)
		require.NoError(t, err)
		require.NotZero(t, fi.Mode()&os.ModeNamedPipe, "%s replaced the named pipe", flag)
	}
}
