package pricing

import "testing"

func BenchmarkPrice(b *testing.B) {
	for _, c := range []struct{ name, provider, model string }{
		{"hit", "openai", "gpt-4o-mini-2024-07-18"},
		{"hit-noprovider", "", "claude-3-5-haiku-20241022"},
		{"miss-vertex", "gcp.vertex.agent", "mock-weather-1"},
		{"miss", "strands-agents", "mock-weather-1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			tab := Default()
			b.ReportAllocs()
			for b.Loop() {
				tab.Price(c.provider, []string{c.model, c.model}, at, Usage{Input: 100, Output: 10})
			}
		})
	}
}

// BenchmarkLoadSnapshot: what the first Compile (at a component's start) costs.
func BenchmarkLoadSnapshot(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileSnapshot(snapshotJSON); err != nil {
			b.Fatal(err)
		}
	}
}
