// Package judge grades handoff content with an LLM judge: an OpenAI-compatible
// chat-completions endpoint (OpenAI, vLLM, Ollama, LiteLLM) asked, at temperature 0 and
// with a prompt template versioned in this repository, for a structured verdict (score
// 0..1, pass, reason). Content is redacted and size-limited before it leaves the process;
// calls are bounded (concurrency, per-run budget, retries with backoff, timeouts) and
// answers are cached by content hash. The API key comes from the environment and is
// never logged, echoed in an error, or sent anywhere but the Authorization header.
package judge

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
)

// Response formats asked of the endpoint.
const (
	// FormatJSONSchema asks for structured output against the verdict's JSON schema
	// (OpenAI, vLLM, Ollama >= 0.5, LiteLLM).
	FormatJSONSchema = "json_schema"
	// FormatJSONObject asks for any JSON object (older servers); the strict parser still
	// checks the schema.
	FormatJSONObject = "json_object"
	// FormatNone sends no response_format; the prompt alone asks for the JSON object.
	FormatNone = "none"
)

// Config configures the judge. The judge is used when Endpoint is set.
type Config struct {
	// Endpoint is the base URL of an OpenAI-compatible API (e.g. https://api.openai.com/v1,
	// http://127.0.0.1:11434/v1); requests go to its path + "/chat/completions", its query
	// (?api-version=...) kept.
	Endpoint string `mapstructure:"endpoint"`
	// Model is the model name sent with every request.
	Model string `mapstructure:"model"`
	// APIKeyEnv names the environment variable holding the API key (sent as a bearer
	// token). Empty: no Authorization header (local servers). Never the key itself.
	APIKeyEnv string `mapstructure:"api_key_env"`
	// Timeout bounds one HTTP request.
	Timeout time.Duration `mapstructure:"timeout"`
	// Retries is the number of further attempts after a timeout, a network error, HTTP 429
	// or 5xx. Off-schema answers and other HTTP errors are not retried.
	Retries int `mapstructure:"retries"`
	// RetryBackoff is the wait before the first retry; it doubles with each retry (capped at
	// 30 s). A Retry-After header, when longer, wins (capped at 30 s too).
	RetryBackoff time.Duration `mapstructure:"retry_backoff"`
	// Concurrency bounds the requests in flight.
	Concurrency int `mapstructure:"concurrency"`
	// MaxCalls bounds the HTTP requests sent (samples and retries included) per budget
	// window; 0 = no bound. Over budget, judge-graded parts end skipped.
	MaxCalls int `mapstructure:"max_calls"`
	// BudgetWindow resets the MaxCalls budget every window; 0 = one budget for the whole
	// run (a handoffcheck run, or the collector's lifetime).
	BudgetWindow time.Duration `mapstructure:"budget_window"`
	// CacheSize is the number of verdicts kept, keyed by a hash of the request content
	// (least recently used evicted); 0 disables the cache.
	CacheSize int `mapstructure:"cache_size"`
	// Samples asks the judge this many times and takes the majority pass/fail (odd).
	Samples int `mapstructure:"samples"`
	// MaxContentBytes caps each content field sent (cut at a UTF-8 boundary, marked).
	MaxContentBytes int `mapstructure:"max_content_bytes"`
	// Redact lists regular expressions; every match is replaced with [REDACTED] before
	// content is sent. They add to the built-in detectors of internal/redact (cards,
	// emails, API keys, bearer tokens, JWTs), which run whatever this list holds; the
	// assertion exporter adds them to its one redaction policy (logs and reports too).
	Redact []string `mapstructure:"redact"`
	// ResponseFormat is json_schema (default), json_object or none.
	ResponseFormat string `mapstructure:"response_format"`
	// TraceTimeout bounds all judge calls of one trace together; 0 = only the per-request
	// bounds apply.
	TraceTimeout time.Duration `mapstructure:"trace_timeout"`
	// QueueSize bounds the traces waiting for their gradings (the assertion exporter's
	// grading queue, served by Concurrency workers); a trace arriving at a full queue has
	// its judge-graded results end in error, unless BlockOnFullQueue.
	QueueSize int `mapstructure:"queue_size"`
	// BlockOnFullQueue makes a trace arriving at a full queue wait for room instead (the
	// pipeline in front waits too). handoffcheck sets it: a CI replay grades every trace.
	BlockOnFullQueue bool `mapstructure:"block_on_full_queue"`

	_ struct{}
}

// MaxQueueSize bounds judge.queue_size: each queued trace keeps its delegation graph (and
// so its spans) in memory until graded.
const MaxQueueSize = 100_000

// DefaultConfig is the judge's default configuration (no endpoint: no judge).
func DefaultConfig() Config {
	return Config{
		Timeout:         30 * time.Second,
		Retries:         2,
		RetryBackoff:    time.Second,
		Concurrency:     4,
		MaxCalls:        1000,
		CacheSize:       1024,
		Samples:         1,
		MaxContentBytes: 8192,
		ResponseFormat:  FormatJSONSchema,
		TraceTimeout:    time.Minute,
		QueueSize:       1000,
	}
}

// Enabled reports whether a judge is configured.
func (c Config) Enabled() bool { return c.Endpoint != "" }

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks the config; errors name the field under prefix (e.g. "judge"). Without
// an endpoint (no judge) only api_key_env and redact are checked: the exporter compiles
// redact into its redaction policy whether a judge is configured or not.
func (c Config) Validate(prefix string) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", prefix, field, fmt.Sprintf(format, args...)))
	}
	if c.APIKeyEnv != "" && !envName.MatchString(c.APIKeyEnv) {
		// Never echo the value: it may be the key pasted in by mistake.
		bad("api_key_env", "must name an environment variable (e.g. OPENAI_API_KEY) that holds the key, not the key itself")
	}
	if err := redact.ValidatePatterns(prefix+".redact", c.Redact); err != nil {
		errs = append(errs, err)
	}
	if !c.Enabled() {
		return errors.Join(errs...)
	}
	{
		u, err := url.Parse(c.Endpoint)
		switch {
		case err != nil:
			bad("endpoint", "not a URL") // the URL may hold credentials: not echoed
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			bad("endpoint", "must be an http(s) base URL such as https://api.openai.com/v1")
		}
		if c.Model == "" {
			bad("model", "must name the judge model")
		}
	}
	if c.Timeout <= 0 {
		bad("timeout", "must be positive, got %s", c.Timeout)
	}
	if c.Retries < 0 || c.Retries > 10 {
		bad("retries", "must be between 0 and 10, got %d", c.Retries)
	}
	if c.RetryBackoff < 0 {
		bad("retry_backoff", "must not be negative, got %s", c.RetryBackoff)
	}
	if c.Concurrency < 1 || c.Concurrency > 256 {
		bad("concurrency", "must be between 1 and 256, got %d", c.Concurrency)
	}
	if c.MaxCalls < 0 {
		bad("max_calls", "must not be negative (0 = no bound), got %d", c.MaxCalls)
	}
	if c.BudgetWindow < 0 {
		bad("budget_window", "must not be negative, got %s", c.BudgetWindow)
	}
	if c.CacheSize < 0 {
		bad("cache_size", "must not be negative (0 = no cache), got %d", c.CacheSize)
	}
	if c.Samples < 1 || c.Samples%2 == 0 || c.Samples > 15 {
		bad("samples", "must be odd and between 1 and 15 (a majority decides), got %d", c.Samples)
	}
	if c.MaxContentBytes < 64 {
		bad("max_content_bytes", "must be at least 64, got %d", c.MaxContentBytes)
	}
	switch c.ResponseFormat {
	case FormatJSONSchema, FormatJSONObject, FormatNone:
	default:
		bad("response_format", "must be one of json_schema, json_object, none, got %q", c.ResponseFormat)
	}
	if c.TraceTimeout < 0 {
		bad("trace_timeout", "must not be negative, got %s", c.TraceTimeout)
	}
	if c.QueueSize < 1 || c.QueueSize > MaxQueueSize {
		bad("queue_size", "must be between 1 and %d, got %d", MaxQueueSize, c.QueueSize)
	}
	return errors.Join(errs...)
}
