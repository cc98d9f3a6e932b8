package handoffprocessor

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/confcheck"
	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
)

// Config configures the handoff processor. See README.md for every key.
type Config struct {
	// QuietPeriod is how long to wait for stragglers after the root span arrived; every new
	// span of the trace restarts it.
	QuietPeriod time.Duration `mapstructure:"quiet_period"`
	// MaxWait is the hard cap from a trace's first span to its release; never extended.
	MaxWait time.Duration `mapstructure:"max_wait"`
	// NumTraces bounds the traces held at once; over it the oldest is released early.
	NumTraces int `mapstructure:"num_traces"`
	// MaxSpansPerTrace bounds one trace; over it the trace is released early.
	MaxSpansPerTrace int `mapstructure:"max_spans_per_trace"`
	// MaxTraceSizeBytes bounds one trace's protobuf size (0 = no bound); over it the trace
	// is released early, like over max_spans_per_trace.
	MaxTraceSizeBytes int `mapstructure:"max_trace_size_bytes"`
	// BufferEncoding is how buffered spans are held: proto (their OTLP protobuf encoding,
	// the default: far less memory), proto_s2 (that, S2-compressed: less memory again,
	// more CPU) or decoded (the receiver's pdata as it came: no encode and decode, more
	// memory and GC). README, "Tuning and sizing".
	BufferEncoding string `mapstructure:"buffer_encoding"`
	// NumShards splits the buffer into independent loops (0 = one per CPU).
	NumShards int `mapstructure:"num_shards"`
	// LateSpanCacheSize is how many released trace ids are remembered to recognize late spans.
	LateSpanCacheSize int `mapstructure:"late_span_cache_size"`
	// LinkCacheSize is how many spans of released traces are remembered with the agent run
	// that owns them, so that a later trace linking to one (an asynchronous handoff) is
	// joined to its sender (0 = no cache: such links are named by their attributes only).
	LinkCacheSize int `mapstructure:"link_cache_size"`
	// Release bounds the batches sent downstream.
	Release ReleaseConfig `mapstructure:"release"`
	// ShutdownTimeout bounds the shutdown flush; the shutdown context's deadline, when
	// earlier, wins.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// Content limits what is copied into HANDOFF spans.
	Content ContentConfig `mapstructure:"content"`
	// Chains overrides fallback chains per normalized field (empty = default chain).
	Chains agentgraph.Chains `mapstructure:"chains"`
	// Pricing overrides the pinned price table per model (README, "Cost").
	Pricing pricing.Config `mapstructure:"pricing"`

	_ struct{}
}

// The buffer encodings (Config.BufferEncoding).
const (
	bufferProto   = "proto"
	bufferProtoS2 = "proto_s2"
	bufferDecoded = "decoded"
)

var bufferEncodings = []string{bufferProto, bufferProtoS2, bufferDecoded}

// defaultContentPolicy: HANDOFF spans carry content with secrets masked.
const defaultContentPolicy = string(agentgraph.ContentRedact)

// ReleaseConfig bounds each batch of assembled traces handed downstream (one ConsumeTraces).
// A trace is never split: one over a bound leaves alone in its batch.
type ReleaseConfig struct {
	// MaxBatchSpans caps the spans of one batch, HANDOFF spans included.
	MaxBatchSpans int `mapstructure:"max_batch_spans"`
	// MaxBatchBytes caps the OTLP protobuf size of one batch, HANDOFF spans included.
	MaxBatchBytes int `mapstructure:"max_batch_bytes"`

	_ struct{}
}

// MaxNumTraces is the largest num_traces: what a replay (handoffcheck) that holds every
// trace until the end of its input sets.
const MaxNumTraces = 10_000_000

// Upper bounds of the config: beyond them a value is a typo, not a sizing choice, and
// would make the processor allocate (ring, shards) or hold far more than any host has.
const (
	maxNumShards         = 1024
	maxNumTraces         = MaxNumTraces
	maxLateSpanCacheSize = 10_000_000
	// maxLinkCacheSize: about 400 MB at ~40 bytes per span (README, "Tuning and sizing").
	maxLinkCacheSize   = 10_000_000
	maxSpansPerTrace   = 10_000_000
	maxBatchSpansLimit = 1_000_000
	// maxBatchBytesLimit: 256 MiB; a downstream gRPC receiver takes 4 MiB by default.
	maxBatchBytesLimit = 256 << 20
)

// ContentConfig limits and redacts content copied into HANDOFF spans.
type ContentConfig struct {
	// Policy is redact (default: content copied with what the built-in detectors and the
	// redact patterns find masked), copy (as it is) or omit (no content attributes, only
	// their .source/.tried keys).
	Policy string `mapstructure:"policy"`
	// MaxBytes caps each content attribute (0 = unlimited).
	MaxBytes int `mapstructure:"max_bytes"`
	// Redact lists regular expressions whose matches are replaced by [REDACTED] (policy
	// redact), in addition to the built-in detectors.
	Redact []string `mapstructure:"redact"`
	// DisableDetectors turns built-in detectors off (card, email, api_key, bearer, jwt, or
	// all) for policy redact.
	DisableDetectors []string `mapstructure:"disable_detectors"`

	_ struct{}
}

var (
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Unmarshaler = (*Config)(nil)
)

// Unmarshal refuses a duration given as a bare number (any duration key, nested ones too)
// before decoding: confmap reads `shutdown_timeout: 10` as 10ns, which passes Validate and
// drops every buffered trace at shutdown. The rest is confmap's own decoding over c (the
// factory's defaults), unknown keys refused as before.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	if err := confcheck.Durations(conf.ToStringMap(), reflect.TypeFor[Config]()); err != nil {
		return err
	}
	// No Unmarshal method, so decoding does not come back here. Named config because the
	// decoder names the top level by its type: 'handoffprocessor.config' has invalid keys.
	type config Config
	return conf.Unmarshal((*config)(c))
}

// Validate checks every field and reports all problems at once.
func (c *Config) Validate() error {
	var errs []error
	if c.QuietPeriod <= 0 {
		errs = append(errs, errors.New("quiet_period must be greater than 0"))
	}
	if c.MaxWait <= 0 {
		errs = append(errs, errors.New("max_wait must be greater than 0"))
	} else if c.MaxWait < c.QuietPeriod {
		errs = append(errs, fmt.Errorf("max_wait (%s) must be at least quiet_period (%s)", c.MaxWait, c.QuietPeriod))
	}
	errs = append(errs, inRange("num_traces", c.NumTraces, 1, maxNumTraces))
	errs = append(errs, inRange("max_spans_per_trace", c.MaxSpansPerTrace, 1, maxSpansPerTrace))
	if c.MaxTraceSizeBytes < 0 {
		errs = append(errs, errors.New("max_trace_size_bytes must not be negative (0 = no bound)"))
	}
	if !slices.Contains(bufferEncodings, c.BufferEncoding) {
		errs = append(errs, fmt.Errorf("buffer_encoding: must be one of %s, got %q", strings.Join(bufferEncodings, ", "), c.BufferEncoding))
	}
	if c.NumShards < 0 {
		errs = append(errs, errors.New("num_shards must not be negative (0 = one per CPU)"))
	} else if c.NumShards > maxNumShards {
		errs = append(errs, fmt.Errorf("num_shards (%d) must be at most %d", c.NumShards, maxNumShards))
	}
	errs = append(errs, inRange("late_span_cache_size", c.LateSpanCacheSize, 1, maxLateSpanCacheSize))
	if c.LinkCacheSize < 0 {
		errs = append(errs, errors.New("link_cache_size must not be negative (0 = no link cache)"))
	} else if c.LinkCacheSize > maxLinkCacheSize {
		errs = append(errs, fmt.Errorf("link_cache_size (%d) must be at most %d", c.LinkCacheSize, maxLinkCacheSize))
	}
	errs = append(errs, inRange("release.max_batch_spans", c.Release.MaxBatchSpans, 1, maxBatchSpansLimit))
	errs = append(errs, inRange("release.max_batch_bytes", c.Release.MaxBatchBytes, 1, maxBatchBytesLimit))
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("shutdown_timeout must be greater than 0"))
	}
	if c.Content.MaxBytes < 0 {
		errs = append(errs, errors.New("content.max_bytes must not be negative"))
	}
	switch agentgraph.ContentMode(c.Content.Policy) {
	case agentgraph.ContentCopy, agentgraph.ContentRedact, agentgraph.ContentOmit:
	default:
		errs = append(errs, fmt.Errorf("content.policy: must be one of copy, redact, omit, got %q", c.Content.Policy))
	}
	if err := redact.ValidatePatterns("content.redact", c.Content.Redact); err != nil {
		errs = append(errs, err)
	}
	if err := (redact.Config{DisableDetectors: c.Content.DisableDetectors}).Validate("content"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// inRange reports a field outside [lo, hi], or nil.
func inRange(field string, v, lo, hi int) error {
	switch {
	case v < lo && lo == 1:
		return fmt.Errorf("%s must be greater than 0", field)
	case v < lo:
		return fmt.Errorf("%s (%d) must be at least %d", field, v, lo)
	case v > hi:
		return fmt.Errorf("%s (%d) must be at most %d", field, v, hi)
	}
	return nil
}

// contentPolicy compiles the content settings (validated already).
func (c *Config) contentPolicy() agentgraph.ContentPolicy {
	p := agentgraph.ContentPolicy{Mode: agentgraph.ContentMode(c.Content.Policy), MaxBytes: c.Content.MaxBytes}
	if p.Mode != agentgraph.ContentCopy && p.Mode != agentgraph.ContentOmit {
		rp, err := redact.Config{DisableDetectors: c.Content.DisableDetectors, Patterns: c.Content.Redact}.Compile()
		if err != nil {
			rp = redact.Default() // unreachable after Validate; never mask less than the default
		}
		p.Redactor = rp
	}
	return p
}

// GraphOptions are the options the processor builds its graphs with (handoffcheck indexes
// the traces with the same): the chains and the prices.
func (c *Config) GraphOptions() (agentgraph.Options, error) {
	prices, err := c.Pricing.Compile()
	if err != nil {
		return agentgraph.Options{}, fmt.Errorf("pricing: %w", err)
	}
	return agentgraph.Options{Chains: c.Chains, Prices: prices}, nil
}
