package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPortsAreDistinctBindableAndNeverRepeated(t *testing.T) {
	seen := map[int]bool{}
	for round := 0; round < 20; round++ {
		ports, err := Ports(5)
		if err != nil {
			t.Fatal(err)
		}
		if len(ports) != 5 {
			t.Fatalf("got %d ports, want 5", len(ports))
		}
		for _, p := range ports {
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
	p, err := Port()
	if err != nil {
		t.Fatal(err)
	}
	if seen[p] {
		t.Fatalf("Port returned %d, handed out before", p)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatalf("port %d is not bindable: %v", p, err)
	}
	l.Close()
}

// TestPortOneAtATime: ports asked for one by one are distinct too (the harness and
// handoffcheck live ask for them so).
func TestPortOneAtATime(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}
