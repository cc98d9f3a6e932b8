// Package freeport hands out loopback TCP ports that were free a moment ago, for the
// collectors handoffcheck and the end-to-end tests start. The kernel may offer a
// just-closed port again: a process is never handed the same port twice, so two
// components of one config never share one.
package freeport

import (
	"errors"
	"net"
	"sync"
)

// handedOut remembers every port this process was given.
var handedOut sync.Map

// Pick returns a loopback TCP port that was free a moment ago and was not handed out
// before in this process.
func Pick() (int, error) {
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if _, dup := handedOut.LoadOrStore(port, true); !dup {
			return port, nil
		}
	}
	return 0, errors.New("no fresh loopback port after 100 tries")
}
