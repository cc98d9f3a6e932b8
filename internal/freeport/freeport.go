// Package freeport hands out loopback TCP ports for collectors started by the load test, the
// CI command and the end-to-end tests: one copy of the "ask the kernel for port 0" trick.
package freeport

import (
	"errors"
	"net"
	"sync"
)

// handedOut remembers every port given out in this process: the kernel may offer a
// just-closed port again, and two components of one config must not share one.
var handedOut sync.Map

// Ports returns n distinct loopback TCP ports that were free a moment ago and that this
// process has not handed out before. The listeners are held open together while they are
// picked, so the kernel cannot return one port twice within a call.
func Ports(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries >= 100*n {
			return nil, errors.New("freeport: no fresh loopback port after 100 tries per port")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		port := l.Addr().(*net.TCPAddr).Port
		if _, dup := handedOut.LoadOrStore(port, true); !dup {
			ports = append(ports, port)
		}
	}
	return ports, nil
}

// Port returns one loopback TCP port, as Ports(1) does.
func Port() (int, error) {
	p, err := Ports(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}
