package assertionconnector

import (
	"testing"

	prometheustranslator "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/prometheus"
	"github.com/stretchr/testify/require"
)

// TestPrometheusSeriesNames: the names a Prometheus exporter or remote write gives the
// connector's metrics (contrib pkg/translator/prometheus, with unit and type suffixes, as
// both do by default), so dashboards and alerts name them exactly. Histograms add
// _bucket, _sum and _count. README.md lists the same table.
func TestPrometheusSeriesNames(t *testing.T) {
	h := newHarness(t, weatherConfig(t))
	h.consume(t, releasedWith(t, failingAgent("weather_specialist"), "google-adk-ok.json", "strands-ok.json"))
	h.shutdown(t)
	got := map[string]string{}
	for name, m := range lastMetrics(t, h.metrics) {
		got[name] = prometheustranslator.BuildCompliantName(m, "", true)
	}
	require.Equal(t, map[string]string{
		MetricResults:         "handoff_assertion_results_total",
		MetricFailures:        "handoff_assertion_failures_total",
		MetricAgentDuration:   "gen_ai_invoke_agent_duration_seconds",
		MetricAgentTokens:     "gen_ai_invoke_agent_tokens",
		MetricAgentToolCalls:  "gen_ai_invoke_agent_tool_calls",
		MetricAgentLLMCalls:   "gen_ai_invoke_agent_llm_calls",
		MetricBudgetUse:       "handoff_budget_utilization",
		MetricEdgeTotal:       "traces_service_graph_request_total",
		MetricEdgeServerSecs:  "traces_service_graph_request_server_seconds",
		MetricEdgeFailedTotal: "traces_service_graph_request_failed_total",
	}, got)
}
