package trajectory

import (
	"fmt"
	"testing"
)

// BenchmarkMatch: a 10-step reference against a long sequence, per mode (the ordered modes
// fill a steps × calls table; the unordered ones search augmenting paths).
func BenchmarkMatch(b *testing.B) {
	ref := Names("t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9")
	for _, n := range []int{10, 1000} {
		calls := make([]Call, n)
		for i := range calls {
			calls[i] = Call{Name: fmt.Sprintf("t%d", i%12), Response: i / 2}
		}
		for _, m := range Modes {
			b.Run(fmt.Sprintf("%s/calls=%d", m, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Match(m, ref, calls, nil)
				}
			})
		}
	}
}
