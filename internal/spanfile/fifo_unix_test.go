//go:build unix

package spanfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestNamedPipeRefused: a named pipe is refused before it is opened: opening one for
// reading waits for a writer, forever when none comes (and a signal does not end the wait).
func TestNamedPipeRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "spans.pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() {
		_, err := Read(fifo, func(ptrace.Traces) error { return nil })
		done <- err
	}()
	select {
	case err := <-done:
		require.EqualError(t, err, fifo+": not a regular file (a named pipe): span files are read only "+
			"from regular files, since a device or a pipe may never end")
	case <-time.After(10 * time.Second):
		// Let the blocked open go (a writer comes and goes), then fail.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		t.Log(<-done) // the Read the writer released
		t.Fatal("Read blocked on the named pipe")
	}
}
