package assertionconnector

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentConsumeAndShutdown: batches arriving on every output while the connector
// shuts down neither race nor fail; shutting down twice is harmless.
func TestConcurrentConsumeAndShutdown(t *testing.T) {
	h := newHarness(t, weatherConfig(t))
	td := released(t, "google-adk-ok.json", "strands-ok.json")
	var wg sync.WaitGroup
	errs := make(chan error, 4*20*3)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				errs <- h.comps[0].ConsumeTraces(context.Background(), cloneTraces(td))
				for _, c := range h.comps[1:] {
					errs <- c.ConsumeTraces(context.Background(), td)
				}
			}
		}()
	}
	h.shutdown(t)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	h.shutdown(t)
	for _, c := range h.comps {
		require.NoError(t, c.Shutdown(context.Background()))
	}
	// Every batch forwarded whole.
	n := 0
	for _, out := range h.traces.AllTraces() {
		require.Equal(t, td.SpanCount(), out.SpanCount())
		n++
	}
	require.Equal(t, 80, n)
}
