package workload

import (
	"runtime"
	"sync"
	"testing"
)

// TestHeapGrowthIgnoresPooledGarbage: a sync.Pool that an earlier measurement filled is
// freed over two collections. HeapGrowth must not subtract it from what fill retains.
func TestHeapGrowthIgnoresPooledGarbage(t *testing.T) {
	const size = 8 << 20
	var pool sync.Pool
	for range 8 {
		b := make([]byte, size/8)
		pool.Put(&b)
	}
	var kept []byte
	grown := HeapGrowth(func() { kept = make([]byte, size) })
	runtime.KeepAlive(kept)
	if grown < size*9/10 || grown > size*11/10 {
		t.Fatalf("HeapGrowth = %d B, want about the %d B fill kept", grown, size)
	}
}
