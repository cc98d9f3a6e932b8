package handoffprocessor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// scriptedSink records what it receives and, once scripted, answers its next calls with
// errs in order (nil past the end).
type scriptedSink struct {
	consumertest.TracesSink
	mu    sync.Mutex
	errs  []error
	calls int
}

func (s *scriptedSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	_ = s.TracesSink.ConsumeTraces(ctx, td)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

func (s *scriptedSink) script(errs ...error) (calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = errs
	return s.calls
}

// What ConsumeTraces forwards itself goes in bounded batches, each tried: the caller's error
// is permanent only when every batch failed for good, so that its retry resends the spans
// of a batch that failed for a passing reason.
func TestCallersErrorIsPermanentOnlyWhenEveryBatchFailedForGood(t *testing.T) {
	tooBig := consumererror.NewPermanent(errors.New("message larger than max"))
	unavailable := errors.New("destination unavailable")
	for name, tc := range map[string]struct {
		errs      []error
		permanent bool
	}{
		"one for good, one passing": {[]error{tooBig, unavailable}, false},
		"both for good":             {[]error{tooBig, tooBig}, true},
		"both passing":              {[]error{unavailable, unavailable}, false},
	} {
		t.Run(name, func(t *testing.T) {
			sink := new(scriptedSink)
			h := newHarness(t, testConfig(func(c *Config) { c.Release.MaxBatchSpans = 1 }), sink, true)
			a, b := pcommon.TraceID{0xa}, pcommon.TraceID{0xb}
			h.consume(oneSpan(a, pcommon.SpanID{0xa}, pcommon.SpanID{}, "root"))
			h.consume(oneSpan(b, pcommon.SpanID{0xb}, pcommon.SpanID{}, "root"))
			h.advanceAndTick(h.cfg.QuietPeriod)
			require.Eventually(t, func() bool { return sink.SpanCount() == 2 }, waitFor, time.Millisecond)

			// One late span of each: two fragments, one batch each.
			td := oneSpan(a, pcommon.SpanID{0xa, 1}, pcommon.SpanID{0xa}, "late")
			oneSpan(b, pcommon.SpanID{0xb, 1}, pcommon.SpanID{0xb}, "late").ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
			before := sink.script(tc.errs...)
			err := h.p.ConsumeTraces(context.Background(), td)
			require.Equal(t, before+2, sink.script(), "every batch tried")
			require.Error(t, err)
			require.Equal(t, tc.permanent, consumererror.IsPermanent(err), "permanent: %v", err)
			for _, e := range tc.errs {
				require.ErrorContains(t, err, e.Error())
			}
		})
	}
}
