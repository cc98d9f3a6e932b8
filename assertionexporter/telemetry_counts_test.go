package assertionexporter

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-handoff/otelcol-handoff/assertionexporter/internal/metadatatest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
)

// TestObservedCounts: the evaluations and failures counted in atomics and observed at
// collection are the series the synchronous counters made: every prepared evaluation
// series from zero, a failure series once it has a failure, results of a case or step the
// config did not prepare counted too, exact under concurrent callers.
func TestObservedCounts(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	id := attribute.String(ExporterAttr, "assertion")
	tel, err := newTelemetry(metadatatest.NewSettings(tt).TelemetrySettings, id)
	require.NoError(t, err)
	tel.prepare(map[string][]string{"weather": {"ASSERT_AGENT_TOPOLOGY#1"}})
	require.NoError(t, tel.start())
	require.NoError(t, tel.start()) // a second start registers nothing more

	results := []rules.Result{
		{Case: "weather", Step: "ASSERT_AGENT_TOPOLOGY#1", Outcome: rules.Pass},
		{Case: "weather", Step: "ASSERT_AGENT_TOPOLOGY#1", Outcome: rules.Fail, Cluster: cluster.WrongDispatch},
		{Case: "weather", Step: "ASSERT_AGENT_TOPOLOGY#1", Outcome: rules.Fail}, // no cluster: other
		{Case: "unprepared", Step: "S", Outcome: rules.Fail, Cluster: cluster.Leak},
	}
	const callers, rounds = 4, 250
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range rounds {
				tel.evaluated(context.Background(), true, 0, results)
			}
		})
	}
	wg.Wait()

	const n = callers * rounds
	set := func(kvs ...attribute.KeyValue) attribute.Set { return attribute.NewSet(append(kvs, id)...) }
	eval := func(c, s string, o rules.Outcome) attribute.Set {
		return set(attribute.String("case", c), attribute.String("step", s), attribute.String("outcome", string(o)))
	}
	fail := func(c, s string, cl cluster.Name) attribute.Set {
		return set(attribute.String("case", c), attribute.String("step", s), attribute.String("cluster", string(cl)))
	}
	want := []metricdata.DataPoint[int64]{
		{Value: n, Attributes: eval("unprepared", "S", rules.Fail)},
	}
	for _, o := range rules.Outcomes {
		v := int64(0)
		switch o {
		case rules.Pass:
			v = n
		case rules.Fail:
			v = 2 * n
		}
		want = append(want, metricdata.DataPoint[int64]{Value: v, Attributes: eval("weather", "ASSERT_AGENT_TOPOLOGY#1", o)})
	}
	metadatatest.AssertEqualExporterAssertionEvaluations(t, tt, want, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualExporterAssertionFailures(t, tt, []metricdata.DataPoint[int64]{
		{Value: n, Attributes: fail("weather", "ASSERT_AGENT_TOPOLOGY#1", cluster.WrongDispatch)},
		{Value: n, Attributes: fail("weather", "ASSERT_AGENT_TOPOLOGY#1", cluster.Other)},
		{Value: n, Attributes: fail("unprepared", "S", cluster.Leak)},
	}, metricdatatest.IgnoreTimestamp())
}
