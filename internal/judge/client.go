package judge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"

	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// Kind classifies a judge error.
type Kind string

// Error kinds. Each is handled as documented in assertionexporter/README.md: every one
// ends the judged part in outcome error, except KindBudget (skipped).
const (
	KindTimeout     Kind = "timeout"
	KindRateLimited Kind = "rate_limited"
	KindHTTP        Kind = "http_error"
	KindNetwork     Kind = "network_error"
	KindOffSchema   Kind = "off_schema"
	KindBudget      Kind = "budget_exhausted"
	KindCanceled    Kind = "canceled"
)

// Kinds lists every error kind (for zero-initialized metrics).
var Kinds = []Kind{KindTimeout, KindRateLimited, KindHTTP, KindNetwork, KindOffSchema, KindBudget, KindCanceled}

// Error is a failed grading. Its message never contains the API key or request content.
type Error struct {
	Kind     Kind
	Attempts int
	Msg      string
}

func (e *Error) Error() string { return e.Msg }

// ErrBudgetExhausted is matched (errors.Is) by the error of a grading refused because the
// call budget (max_calls) is spent.
var ErrBudgetExhausted = &Error{Kind: KindBudget}

// Is matches errors of the same kind against ErrBudgetExhausted.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t == ErrBudgetExhausted && e.Kind == KindBudget
}

// Verdict is the judge's answer (the majority of Samples answers).
type Verdict struct {
	Score  float64 `json:"score"`
	Pass   bool    `json:"pass"`
	Reason string  `json:"reason"`
	// Samples is the number of answers behind the verdict; Cached is true when it came
	// from the cache.
	Samples int  `json:"samples"`
	Cached  bool `json:"cached,omitempty"`
}

// Info describes the judge for reports.
type Info struct {
	Model       string `json:"model"`
	Template    string `json:"template"`
	Samples     int    `json:"samples"`
	Concurrency int    `json:"concurrency"`
}

// Event is reported to an observer after every HTTP attempt and cache hit.
type Event struct {
	// Outcome is "ok", "cached", or an error Kind.
	Outcome string
	// Latency of the HTTP attempt (0 for cache hits and refusals).
	Latency time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithRedaction replaces the redaction policy applied to content before it is sent and to
// everything the client returns (default: the built-in detectors plus the config's redact
// patterns). The assertion exporter passes its one policy, which already holds them.
func WithRedaction(p *redact.Policy) Option { return func(c *Client) { c.policy = p } }

// WithHTTPClient replaces the HTTP client (tests).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithObserver receives an Event per HTTP attempt and cache hit (telemetry).
func WithObserver(f func(Event)) Option { return func(c *Client) { c.observe = f } }

// WithClock replaces time.Now and the backoff sleep (tests).
func WithClock(now func() time.Time, sleep func(context.Context, time.Duration) error) Option {
	return func(c *Client) { c.now, c.sleep = now, sleep }
}

// Client grades requests. It is safe for concurrent use.
type Client struct {
	cfg    Config
	apiKey string
	// policy masks content before it is sent, and verdict reasons and error messages
	// before they are returned.
	policy *redact.Policy
	// secrets are the config's secret values (the API key, a password in the endpoint
	// URL), scrubbed from everything sent or returned in every encoding they may echo in.
	secrets *redact.Secrets
	http    *http.Client
	url     string
	sem     chan struct{}
	cache   *lru
	observe func(Event)
	now     func() time.Time
	sleep   func(context.Context, time.Duration) error

	budgetMu    sync.Mutex
	budgetUsed  int
	budgetStart time.Time
}

// New builds a client from a validated config. The API key is read from the environment
// variable named by api_key_env now; a missing variable is an error naming the variable
// (never a value).
func New(cfg Config, opts ...Option) (*Client, error) {
	if !cfg.Enabled() {
		return nil, errors.New("judge: no endpoint configured")
	}
	err := cfg.Validate("judge")
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:   cfg,
		http:  &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		url:   completionsURL(cfg.Endpoint),
		sem:   make(chan struct{}, cfg.Concurrency),
		cache: newLRU(cfg.CacheSize),
		now:   time.Now,
		sleep: sleepCtx,
	}
	if cfg.APIKeyEnv != "" {
		c.apiKey = strings.TrimSpace(os.Getenv(cfg.APIKeyEnv))
		if c.apiKey == "" {
			return nil, fmt.Errorf("judge.api_key_env: environment variable %s is not set or empty", cfg.APIKeyEnv)
		}
	}
	if c.policy, err = (redact.Config{}).Compile(cfg.Redact...); err != nil {
		return nil, err // validated above: unreachable
	}
	c.secrets = redact.NewSecrets(append([]string{c.apiKey}, endpointSecrets(cfg.Endpoint)...)...)
	for _, o := range opts {
		o(c)
	}
	c.budgetStart = c.now()
	return c, nil
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Info describes the judge (model, template version, samples).
func (c *Client) Info() Info {
	return Info{Model: c.cfg.Model, Template: TemplateVersion, Samples: c.cfg.Samples, Concurrency: c.cfg.Concurrency}
}

// Concurrency is the number of requests the client runs at once.
func (c *Client) Concurrency() int { return c.cfg.Concurrency }

// TraceTimeout bounds the judge calls of one trace (0 = none).
func (c *Client) TraceTimeout() time.Duration { return c.cfg.TraceTimeout }

// Endpoint is the configured base URL without credentials (for logs).
func (c *Client) Endpoint() string { return redactURL(c.cfg.Endpoint) }

// Grade asks the judge for a verdict on req: from the cache when the same content was
// graded before, else by Samples requests and a majority.
func (c *Client) Grade(ctx context.Context, req Request) (Verdict, error) {
	prepared := c.prepare(req)
	system, user, err := render(prepared)
	if err != nil {
		return Verdict{}, err
	}
	body, err := c.body(system, user)
	if err != nil {
		return Verdict{}, err
	}
	key := cacheKey(c.cfg.Model, c.cfg.Samples, body)
	if v, ok := c.cache.get(key); ok {
		c.emit(Event{Outcome: "cached"})
		v.Cached = true
		return v, nil
	}
	n := c.cfg.Samples
	answers := make([]Verdict, n)
	errs := make([]error, n)
	if n == 1 {
		answers[0], errs[0] = c.call(ctx, body)
	} else {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i], errs[i] = c.call(ctx, body)
			}()
		}
		wg.Wait()
	}
	v, err := majority(answers, errs)
	if err != nil {
		return Verdict{}, err
	}
	c.cache.put(key, v)
	return v, nil
}

// majority combines the answers of N samples: the pass/fail side that a strict majority
// of N answered wins; the score is the median of that side's scores and the reason is the
// answer's with that score. Without a strict majority (errors, or a tie among fewer
// answers) the first error is returned.
func majority(answers []Verdict, errs []error) (Verdict, error) {
	n := len(answers)
	var pass, fail []Verdict
	var firstErr error
	for i := range answers {
		if errs[i] != nil {
			if firstErr == nil {
				firstErr = errs[i]
			}
			continue
		}
		if answers[i].Pass {
			pass = append(pass, answers[i])
		} else {
			fail = append(fail, answers[i])
		}
	}
	side := pass
	if len(fail) > len(pass) {
		side = fail
	}
	if 2*len(side) <= n {
		if firstErr != nil {
			return Verdict{}, firstErr
		}
		return Verdict{}, &Error{Kind: KindOffSchema, Msg: fmt.Sprintf("judge samples disagree: %d pass, %d fail of %d", len(pass), len(fail), n)}
	}
	sort.SliceStable(side, func(i, j int) bool { return side[i].Score < side[j].Score })
	v := side[len(side)/2]
	v.Samples = len(pass) + len(fail)
	return v, nil
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model          string         `json:"model"`
	Messages       []chatMessage  `json:"messages"`
	Temperature    float64        `json:"temperature"`
	ResponseFormat map[string]any `json:"response_format,omitempty"`
}

// VerdictSchema is the JSON schema of the judge's answer.
var VerdictSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"score":  map[string]any{"type": "number"},
		"pass":   map[string]any{"type": "boolean"},
		"reason": map[string]any{"type": "string"},
	},
	"required":             []string{"score", "pass", "reason"},
	"additionalProperties": false,
}

func (c *Client) body(system, user string) ([]byte, error) {
	req := chatRequest{
		Model:       c.cfg.Model,
		Temperature: 0,
		Messages:    []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
	}
	switch c.cfg.ResponseFormat {
	case FormatJSONSchema:
		req.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "handoff_verdict", "strict": true, "schema": VerdictSchema,
		}}
	case FormatJSONObject:
		req.ResponseFormat = map[string]any{"type": "json_object"}
	}
	return json.Marshal(req)
}

func cacheKey(model string, samples int, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00", TemplateVersion, model, samples)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// maxBody bounds the response read.
const maxBody = 1 << 20

// maxWait caps backoff and Retry-After waits.
const maxWait = 30 * time.Second

// call sends one request, retrying timeouts, network errors, 429 and 5xx.
func (c *Client) call(ctx context.Context, body []byte) (Verdict, error) {
	attempts := 0
	var last *attemptError
	backoff := c.cfg.RetryBackoff
	for attempt := 0; attempt <= c.cfg.Retries; attempt++ {
		if attempt > 0 {
			wait := min(backoff, maxWait)
			if last != nil && last.retryAfter > wait {
				wait = min(last.retryAfter, maxWait)
			}
			backoff *= 2
			if err := c.sleep(ctx, wait); err != nil {
				return Verdict{}, c.canceled(attempts, err)
			}
		}
		if !c.take() {
			c.emit(Event{Outcome: string(KindBudget)})
			if last != nil {
				last.Msg += fmt.Sprintf("; no retry: the judge call budget (max_calls %d) is spent", c.cfg.MaxCalls)
				return Verdict{}, last.Error
			}
			return Verdict{}, &Error{Kind: KindBudget, Msg: fmt.Sprintf("judge call budget exhausted (max_calls %d)", c.cfg.MaxCalls)}
		}
		attempts++
		v, err := c.attempt(ctx, body)
		if err == nil {
			return v, nil
		}
		if err.Kind == KindCanceled || !err.retryable {
			err.Attempts = attempts
			return Verdict{}, err.Error
		}
		last = err
	}
	last.Attempts = attempts
	last.Msg += fmt.Sprintf(" (%s)", textsafe.Plural(attempts, "attempt", "attempts"))
	return Verdict{}, last.Error
}

// attemptError is an Error with retry hints.
type attemptError struct {
	*Error
	retryable  bool
	retryAfter time.Duration
}

func (c *Client) fail(kind Kind, retryable bool, format string, args ...any) *attemptError {
	return &attemptError{Error: &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}, retryable: retryable}
}

func (c *Client) canceled(attempts int, err error) error {
	return &Error{Kind: KindCanceled, Attempts: attempts, Msg: "judge call canceled: " + err.Error()}
}

// attempt sends one HTTP request within the concurrency bound and the request timeout.
func (c *Client) attempt(ctx context.Context, body []byte) (Verdict, *attemptError) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return Verdict{}, &attemptError{Error: c.canceled(0, ctx.Err()).(*Error)}
	}
	defer func() { <-c.sem }()
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	began := c.now()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Verdict{}, c.fail(KindHTTP, false, "judge request: %s", c.scrub(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	var data []byte
	if err == nil {
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
	}
	took := c.now().Sub(began)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			c.emit(Event{Outcome: string(KindCanceled), Latency: took})
			return Verdict{}, &attemptError{Error: c.canceled(0, ctx.Err()).(*Error)}
		case errors.Is(actx.Err(), context.DeadlineExceeded):
			c.emit(Event{Outcome: string(KindTimeout), Latency: took})
			return Verdict{}, c.fail(KindTimeout, true, "judge request timed out after %s", c.cfg.Timeout)
		default:
			c.emit(Event{Outcome: string(KindNetwork), Latency: took})
			return Verdict{}, c.fail(KindNetwork, true, "judge request failed: %s", c.scrub(unwrapURLError(err)))
		}
	}
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusTooManyRequests:
		c.emit(Event{Outcome: string(KindRateLimited), Latency: took})
		e := c.fail(KindRateLimited, true, "judge rate-limited the request (HTTP 429)")
		e.retryAfter = retryAfter(resp.Header.Get("Retry-After"), c.now())
		return Verdict{}, e
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout:
		c.emit(Event{Outcome: string(KindHTTP), Latency: took})
		return Verdict{}, c.fail(KindHTTP, true, "judge answered HTTP %d: %s", resp.StatusCode, c.snippet(data))
	default:
		c.emit(Event{Outcome: string(KindHTTP), Latency: took})
		return Verdict{}, c.fail(KindHTTP, false, "judge answered HTTP %d: %s", resp.StatusCode, c.snippet(data))
	}
	v, perr := ParseResponse(data)
	if perr != nil {
		c.emit(Event{Outcome: string(KindOffSchema), Latency: took})
		return Verdict{}, c.fail(KindOffSchema, false, "%s", c.scrub(perr.Error()))
	}
	c.emit(Event{Outcome: "ok", Latency: took})
	v.Reason = c.scrub(v.Reason) // a judge may quote content or the key back
	v.Samples = 1
	return v, nil
}

func (c *Client) emit(e Event) {
	if c.observe != nil {
		c.observe(e)
	}
}

// take spends one call of the budget; false when it is spent.
func (c *Client) take() bool {
	if c.cfg.MaxCalls == 0 {
		return true
	}
	c.budgetMu.Lock()
	defer c.budgetMu.Unlock()
	if w := c.cfg.BudgetWindow; w > 0 && c.now().Sub(c.budgetStart) >= w {
		c.budgetStart, c.budgetUsed = c.now(), 0
	}
	if c.budgetUsed >= c.cfg.MaxCalls {
		return false
	}
	c.budgetUsed++
	return true
}

// scrub removes the config's secrets, in every encoding, and what the redaction policy
// masks from text the client returns (a server error body, a URL, a verdict reason).
func (c *Client) scrub(s string) string {
	return c.policy.Redact(c.secrets.Scrub(s))
}

// endpointSecrets are the secret parts of the endpoint URL: a password in its user info,
// and the values of query parameters named like credentials (?api-key=..., ?token=...),
// not others such as ?api-version=2024-02-01.
func endpointSecrets(endpoint string) []string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil
	}
	var out []string
	if pw, ok := u.User.Password(); ok {
		out = append(out, pw)
	}
	for name, vs := range u.Query() {
		if credentialParam.MatchString(name) {
			out = append(out, vs...)
		}
	}
	return out
}

// credentialParam: code is Azure Functions' key parameter.
var credentialParam = regexp.MustCompile(`(?i)key|token|secret|password|passwd|auth|sig|credential|^code$`)

// completionsURL is the endpoint's chat completions URL: the path extended, the query kept
// (Azure OpenAI's ?api-version=...; appended after it, the path would be part of the query).
func completionsURL(endpoint string) string {
	u, err := url.Parse(endpoint) // validated: an http(s) URL
	if err != nil {
		return strings.TrimRight(endpoint, "/") + "/chat/completions"
	}
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/")+"/chat/completions", ""
	return u.String()
}

// snippet is the start of an error body, on one line, without the secrets.
func (c *Client) snippet(data []byte) string {
	s := oneLine(strings.ToValidUTF8(string(data), "\uFFFD"))
	if s == "" {
		return "(empty body)"
	}
	return truncate(c.scrub(s), 200) // scrubbed whole: a cut must not leave part of a secret
}

func unwrapURLError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error() // drops "Post \"URL\":", which may hold credentials
	}
	return err.Error()
}

// retryAfter parses a Retry-After header (seconds or an HTTP date).
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// redactURL drops user info and query from a URL for logs.
func redactURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.Index(rest, "@"); at >= 0 && (!strings.Contains(rest, "/") || at < strings.Index(rest, "/")) {
			rest = rest[at+1:]
		}
		s = s[:i+3] + rest
	}
	if q := strings.IndexAny(s, "?#"); q >= 0 {
		s = s[:q]
	}
	return s
}
