package handoffprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-handoff/otelcol-handoff/handoffprocessor/internal/metadata"
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/configtest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
)

func ptr(v float64) *float64 { return &v }

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		id       component.ID
		expected *Config
	}{
		{id: component.NewID(metadata.Type), expected: createDefaultConfig().(*Config)},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			expected: &Config{
				QuietPeriod:       5 * time.Second,
				MaxWait:           2 * time.Minute,
				NumTraces:         500,
				MaxSpansPerTrace:  2000,
				BufferEncoding:    "decoded",
				NumShards:         4,
				LateSpanCacheSize: 1000,
				LinkCacheSize:     5000,
				Release:           ReleaseConfig{MaxBatchSpans: 2000, MaxBatchBytes: 1 << 20},
				ShutdownTimeout:   20 * time.Second,
				Content: ContentConfig{
					Policy:   "omit",
					MaxBytes: 1024,
					Redact:   []string{`(?i)api[_-]?key=\S+`, `\b\d{16}\b`},
				},
				Chains: agentgraph.Chains{
					AgentName: agentgraph.Chain{"my.agent.name", "gen_ai.agent.name"},
					HandoffTo: agentgraph.Chain{"my.handoff.to"},
				},
				Pricing: pricing.Config{Models: []pricing.ModelPrice{
					{Model: "my-finetune", Provider: "openai", Input: ptr(0.5), Output: ptr(1.5), CacheRead: ptr(0.05)},
				}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			configtest.RequireLoads(t, cm, tt.id, NewFactory().CreateDefaultConfig(), tt.expected)
		})
	}
}

func TestDefaultConfigIsValid(t *testing.T) {
	require.NoError(t, confmap.Validate(createDefaultConfig()))
}

// TestInvalidConfigs checks that each invalid file is rejected at load time (by the
// unmarshaler for unknown keys, by Validate otherwise) with a message naming the field.
func TestInvalidConfigs(t *testing.T) {
	tests := map[string]string{
		"invalid_quiet_period.yaml":                 "quiet_period must be greater than 0",
		"invalid_max_wait_below_quiet_period.yaml":  "max_wait (5s) must be at least quiet_period (10s)",
		"invalid_num_traces.yaml":                   "num_traces must be greater than 0",
		"invalid_max_spans_per_trace.yaml":          "max_spans_per_trace must be greater than 0",
		"invalid_max_trace_size_bytes.yaml":         "max_trace_size_bytes must not be negative (0 = no bound)",
		"invalid_redact_regex.yaml":                 "content.redact[1]: error parsing regexp: missing closing ): `(unclosed`",
		"invalid_unknown_key.yaml":                  "has invalid keys: quiet_periode",
		"invalid_content_policy.yaml":               `content.policy: must be one of copy, redact, omit, got "mask"`,
		"invalid_buffer_encoding.yaml":              `buffer_encoding: must be one of proto, proto_s2, decoded, got "gzip"`,
		"invalid_num_shards.yaml":                   "num_shards (5000) must be at most 1024",
		"invalid_late_span_cache_size.yaml":         "late_span_cache_size (20000000) must be at most 10000000",
		"invalid_num_traces_cap.yaml":               "num_traces (10000001) must be at most 10000000",
		"invalid_link_cache_size.yaml":              "link_cache_size (20000000) must be at most 10000000",
		"invalid_link_cache_size_negative.yaml":     "link_cache_size must not be negative (0 = no link cache)",
		"invalid_max_spans_per_trace_cap.yaml":      "max_spans_per_trace (20000000) must be at most 10000000",
		"invalid_release_max_batch_spans.yaml":      "release.max_batch_spans must be greater than 0",
		"invalid_release_max_batch_bytes.yaml":      "release.max_batch_bytes (1073741824) must be at most 268435456",
		"invalid_release_max_batch_bytes_zero.yaml": "release.max_batch_bytes must be greater than 0",
		"invalid_shutdown_timeout.yaml":             "shutdown_timeout must be greater than 0",
		"invalid_pricing.yaml":                      "pricing: models[0].output_usd_per_mtok: must be set",
	}
	for file, want := range tests {
		t.Run(file, func(t *testing.T) {
			configtest.RequireInvalid(t, filepath.Join("testdata", file), createDefaultConfig(), want)
		})
	}
}
