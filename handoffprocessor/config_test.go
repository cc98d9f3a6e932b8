package handoffprocessor

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
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

// TestDurationsNeedAUnit: a bare number is nanoseconds to confmap (`shutdown_timeout: 10`
// dropped every buffered trace at shutdown), so it is refused at load time, naming the key;
// a bare 0 is zero (left to Validate).
func TestDurationsNeedAUnit(t *testing.T) {
	tests := map[string]string{
		"shutdown_timeout: 10": "shutdown_timeout: must be a duration with a unit, such as 5s or 250ms, got 10",
		"quiet_period: 2":      "quiet_period: must be a duration with a unit, such as 5s or 250ms, got 2",
		"max_wait: 30":         "max_wait: must be a duration with a unit, such as 5s or 250ms, got 30",
		"max_wait: 1.5":        "max_wait: must be a duration with a unit, such as 5s or 250ms, got 1.5",
		`quiet_period: "2"`:    `quiet_period: must be a duration such as 5s or 250ms, got "2"`,
		"quiet_period: soon":   `quiet_period: must be a duration such as 5s or 250ms, got "soon"`,
		"shutdown_timeout: 0":  "shutdown_timeout must be greater than 0",
		"quiet_period: 2\nmax_wait: 30": "max_wait: must be a duration with a unit, such as 5s or 250ms, got 30\n" +
			"quiet_period: must be a duration with a unit, such as 5s or 250ms, got 2",
	}
	for doc, want := range tests {
		t.Run(doc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(doc+"\n"), 0o600))
			configtest.RequireInvalid(t, path, NewFactory().CreateDefaultConfig(), want)
		})
	}
}

// TestEveryDurationKeyNeedsAUnit: every time.Duration field of Config, nested sections
// included, refuses a bare number, so a duration key added later cannot miss the check.
func TestEveryDurationKeyNeedsAUnit(t *testing.T) {
	paths := durationPaths(reflect.TypeFor[Config](), nil)
	require.Subset(t, paths, [][]string{{"quiet_period"}, {"max_wait"}, {"shutdown_timeout"}})
	for _, p := range paths {
		key := strings.Join(p, ".")
		t.Run(key, func(t *testing.T) {
			var raw any = 10
			for i := len(p) - 1; i >= 0; i-- {
				raw = map[string]any{p[i]: raw}
			}
			cfg := NewFactory().CreateDefaultConfig()
			err := confmap.NewFromStringMap(raw.(map[string]any)).Unmarshal(cfg)
			require.ErrorContains(t, err, key+": must be a duration with a unit, such as 5s or 250ms, got 10")
		})
	}
}

// durationPaths lists the key paths of the time.Duration fields of the struct type t.
func durationPaths(t reflect.Type, prefix []string) [][]string {
	var out [][]string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		path := append(slices.Clone(prefix), name)
		switch {
		case f.Type == reflect.TypeFor[time.Duration]():
			out = append(out, path)
		case f.Type.Kind() == reflect.Struct:
			out = append(out, durationPaths(f.Type, path)...)
		}
	}
	return out
}

// TestUnmarshalKeepsDefaults: the config's own Unmarshal decodes over the factory's
// defaults, so keys left out keep them.
func TestUnmarshalKeepsDefaults(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"quiet_period": "5s", "release": map[string]any{"max_batch_spans": 10}}).Unmarshal(cfg))
	want := createDefaultConfig().(*Config)
	want.QuietPeriod = 5 * time.Second
	want.Release.MaxBatchSpans = 10
	require.Equal(t, want, cfg)
}
