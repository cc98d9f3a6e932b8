package loadtest

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/otelcol-handoff/otelcol-handoff/internal/workload"
)

// Pipeline is one collector config of the comparison.
type Pipeline struct {
	Name string
	// Config is the collector config; %[1]d = OTLP/HTTP port, %[2]d = health port,
	// %[3]d = metrics port.
	Config string
	// FeatureGates is passed to --feature-gates when set.
	FeatureGates string
	// Buffer is the handoff processor's buffer_encoding, "" for the pipelines without it.
	Buffer string
	// OutMetric (with OutLabels) counts the received spans that left the pipeline.
	OutMetric string
	OutLabels map[string]string
}

// The pipeline names, as the table prints them.
const (
	Bare         = "bare otlp → nop"
	TailSampling = "otlp → tail_sampling → nop"
	// Full runs workload.Rules(10): five seed-000 steps and five test-case fields, the rules
	// BenchmarkPipeline (handoffprocessor) runs in process.
	Full = "otlp → handoff → assertion (10 rules) + nop"
	// FullDecoded is Full with the processor's buffer holding decoded pdata
	// (buffer_encoding: decoded) instead of the default protobuf encoding: the trade-off
	// measured side by side.
	FullDecoded = "otlp → handoff (decoded buffer) → assertion (10 rules) + nop"
	// FullS2 is Full with the buffer's protobuf S2-compressed (buffer_encoding: proto_s2):
	// less memory for more CPU. The workload's templates repeat their capture, which S2
	// finds, so its memory here is lower than real traces give (Report.RetainedRealPerSpan).
	FullS2 = "otlp → handoff (S2 buffer) → assertion (10 rules) + nop"
)

// service is the service section every pipeline shares but for its processors and exporters.
const service = `
extensions: {health_check: {endpoint: "127.0.0.1:%%[2]d"}}
service:
  extensions: [health_check]
  pipelines: {traces: {receivers: [otlp], processors: [%s], exporters: [%s]}}
  telemetry:
    logs: {level: warn}
    metrics: {readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: %%[3]d}}}}]}
`

const receiver = `receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:%[1]d"}}}}
`

// The handoff processor's buffer encodings (its buffer_encoding).
const (
	BufferProto   = "proto"
	BufferProtoS2 = "proto_s2"
	BufferDecoded = "decoded"
)

// full is the full pipeline named name, its handoff processor's buffer held with the
// buffer_encoding buffer for hold after the root.
func full(name, buffer string, hold time.Duration) Pipeline {
	return Pipeline{
		Name:   name,
		Buffer: buffer,
		Config: receiver + `processors: {handoff: {quiet_period: ` + hold.String() + `, max_wait: ` + max(10*time.Second, 2*hold).String() +
			`, num_traces: 50000, buffer_encoding: ` + buffer + `}}
exporters:
  nop: {}
  assertion:
    log_verdicts: none
    cases:
      ` + strings.ReplaceAll(strings.TrimSpace(workload.Rules(10)), "\n", "\n      ") + "\n" + fmt.Sprintf(service, "handoff", "assertion, nop"),
		OutMetric: "otelcol_processor_handoff_spans_released",
	}
}

// Pipelines are the configs, in the order they run (Full last), at the default HoldTime.
var Pipelines = PipelinesHolding(HoldTime)

// PipelinesHolding are the configs holding each trace for hold: tail_sampling's
// decision_wait and the handoff processor's quiet_period. Both buffering pipelines bound
// the same number of traces; tail_sampling keeps every trace (always_sample) so that all
// spans reach nop, as ours do.
func PipelinesHolding(hold time.Duration) []Pipeline {
	return []Pipeline{
		{
			Name:      Bare,
			Config:    receiver + "exporters: {nop: {}}\n" + fmt.Sprintf(service, "", "nop"),
			OutMetric: "otelcol_receiver_accepted_spans",
		},
		{
			Name: TailSampling,
			Config: receiver + `processors:
  tail_sampling:
    decision_wait: ` + hold.String() + `
    num_traces: 50000
    policies: [{name: all, type: always_sample}]
exporters: {nop: {}}
` + fmt.Sprintf(service, "tail_sampling", "nop"),
			// The span count of sampled traces (tail_sampling counts traces by default).
			FeatureGates: "processor.tailsamplingprocessor.metricstatcountspanssampled",
			OutMetric:    "otelcol_processor_tail_sampling_count_spans_sampled",
			OutLabels:    map[string]string{"sampled": "true"},
		},
		full(FullDecoded, BufferDecoded, hold),
		full(FullS2, BufferProtoS2, hold),
		full(Full, BufferProto, hold),
	}
}

var scrapeClient = &http.Client{Timeout: 5 * time.Second}

// families is one scrape of a Prometheus endpoint.
type families map[string]*dto.MetricFamily

func scrape(url string) (families, error) {
	resp, err := scrapeClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// sum adds the counter, gauge or untyped samples of a metric whose labels include every
// given label.
func (f families) sum(name string, labels map[string]string) float64 {
	var sum float64
	for _, m := range f[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if match {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
		}
	}
	return sum
}
