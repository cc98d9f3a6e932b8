//go:build unix

package assertionexporter

import "golang.org/x/sys/unix"

// writable asks the kernel whether this process may write path, without opening it.
func writable(path string) error { return unix.Access(path, unix.W_OK) }

// canCreateIn asks whether this process may create a file in dir (write and search).
func canCreateIn(dir string) error { return unix.Access(dir, unix.W_OK|unix.X_OK) }
