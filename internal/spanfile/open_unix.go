//go:build unix

package spanfile

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without waiting: were a regular file swapped for a
// named pipe after its stat, opening the pipe would block until a writer comes. Reading a
// regular file is not affected by the flag.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
