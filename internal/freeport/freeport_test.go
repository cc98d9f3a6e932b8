package freeport

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPick: the ports are distinct and can be listened on.
func TestPick(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		p, err := Pick()
		require.NoError(t, err)
		require.False(t, seen[p], "port %d handed out twice", p)
		seen[p] = true
	}
	for p := range seen {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil { // another process may have taken it since: only ours must not repeat
			l.Close()
		}
	}
}
