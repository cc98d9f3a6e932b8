// Package gate applies per-axis thresholds to the mean handoff rubric scores (seed 004's CI
// gate): over every trace of a handoffcheck run (Tally), or over a sliding window of the
// most recent handoffs in the collector (Window).
package gate

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rubric"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// Per-axis gates over the handoff rubric scores (seed 004's CI gate): a threshold per
// axis, per sender-receiver pair (and a default), applied to the mean score over a window
// — every trace of a handoffcheck run, or a sliding window of the most recent handoffs in
// the collector.

// Config configures the gates (the exporter's gates: section).
type Config struct {
	// Default holds a threshold per axis for every pair without its own.
	Default map[string]float64 `mapstructure:"default"`
	// Pairs override thresholds per sender-receiver pair; the first matching entry wins,
	// and an axis it does not set falls back to Default.
	Pairs []PairConfig `mapstructure:"pairs"`
	// MinSamples is the number of scored handoffs a gate needs before it can fail
	// (0 = 1).
	MinSamples int `mapstructure:"min_samples"`
	// Window is the collector's sliding window.
	Window WindowConfig `mapstructure:"window"`

	_ struct{}
}

// PairConfig is a pair's thresholds. From or To may be left empty, or set to "*", to
// match any agent (e.g. only To: thresholds per receiver type).
type PairConfig struct {
	From       string             `mapstructure:"from"`
	To         string             `mapstructure:"to"`
	Thresholds map[string]float64 `mapstructure:"thresholds"`

	_ struct{}
}

// WindowConfig bounds the collector's sliding window, per axis and per gauge pair.
type WindowConfig struct {
	// Size is the number of most recent scored handoffs kept (0 = 100).
	Size int `mapstructure:"size"`
	// Duration drops scores older than this; 0 = no age bound.
	Duration time.Duration `mapstructure:"duration"`

	_ struct{}
}

// defaultWindowSize is the collector's default sliding window, in scored handoffs.
const defaultWindowSize = 100

// DefaultConfig has no thresholds, a minimum of one sample and a window of the last
// 100 handoffs.
func DefaultConfig() Config {
	return Config{MinSamples: 1, Window: WindowConfig{Size: defaultWindowSize}}
}

// defaultPair is the gauge pair of every handoff whose pair is not configured.
const defaultPair = "default"

// Validate checks the gates; errors name the field under prefix (e.g. "gates").
func (c Config) Validate(prefix string) error {
	var errs []error
	thresholds := func(at string, m map[string]float64) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			if !slices.Contains(rubric.Axes, k) {
				errs = append(errs, fmt.Errorf("%s.%s: unknown axis (want one of %s)", at, k, strings.Join(rubric.Axes, ", ")))
			}
			if v < 0 || v > 1 || math.IsNaN(v) {
				errs = append(errs, fmt.Errorf("%s.%s: threshold must be between 0 and 1, got %g", at, k, v))
			}
		}
	}
	thresholds(prefix+".default", c.Default)
	labels := map[string]bool{}
	for i, p := range c.Pairs {
		at := fmt.Sprintf("%s.pairs[%d]", prefix, i)
		if anyAgent(p.From) == "" && anyAgent(p.To) == "" {
			errs = append(errs, fmt.Errorf("%s: set from, to or both (\"*\" matches any agent; thresholds for every pair go under default)", at))
		}
		if len(p.Thresholds) == 0 {
			errs = append(errs, fmt.Errorf("%s.thresholds: set at least one axis", at))
		}
		if l := pairLabel(p.From, p.To); labels[l] {
			errs = append(errs, fmt.Errorf("%s: duplicate pair %s", at, l))
		} else {
			labels[l] = true
		}
		thresholds(at+".thresholds", p.Thresholds)
	}
	if c.MinSamples < 0 {
		errs = append(errs, fmt.Errorf("%s.min_samples: must not be negative, got %d", prefix, c.MinSamples))
	}
	if c.Window.Size < 0 || c.Window.Size > 1_000_000 {
		errs = append(errs, fmt.Errorf("%s.window.size: must be between 0 (= 100) and 1000000, got %d", prefix, c.Window.Size))
	}
	if c.Window.Duration < 0 {
		errs = append(errs, fmt.Errorf("%s.window.duration: must not be negative, got %s", prefix, c.Window.Duration))
	}
	return errors.Join(errs...)
}

// pairLabel names a pair: "from -> to", with * for an empty side.
func pairLabel(from, to string) string {
	if from == "" {
		from = "*"
	}
	if to == "" {
		to = "*"
	}
	return from + " -> " + to
}

// wildcard is the pair side that matches any agent, as written in a config.
const wildcard = "*"

// anyAgent normalises a pair side: "*" is the wildcard, like an empty side (validation
// and matching must agree on it).
func anyAgent(side string) string {
	if side == wildcard {
		return ""
	}
	return side
}

// Set is a compiled Config.
type Set struct {
	def        map[string]float64
	pairs      []PairConfig
	minSamples int
	window     WindowConfig
}

// Compile validates and compiles the gates.
func Compile(c Config) (*Set, error) {
	if err := c.Validate("gates"); err != nil {
		return nil, err
	}
	// Normalised once: pairFor and the labels then see "*" as the empty side.
	pairs := make([]PairConfig, len(c.Pairs))
	for i, p := range c.Pairs {
		pairs[i] = PairConfig{From: anyAgent(p.From), To: anyAgent(p.To), Thresholds: p.Thresholds}
	}
	gs := &Set{def: c.Default, pairs: pairs, minSamples: max(1, c.MinSamples), window: c.Window}
	if gs.window.Size == 0 {
		gs.window.Size = defaultWindowSize
	}
	return gs, nil
}

// Enabled reports whether any threshold is configured.
func (gs *Set) Enabled() bool { return gs != nil && (len(gs.def) > 0 || len(gs.pairs) > 0) }

// pairFor is the first configured pair matching from -> to.
func (gs *Set) pairFor(from, to string) *PairConfig {
	for i := range gs.pairs {
		p := &gs.pairs[i]
		if (p.From == "" || p.From == from) && (p.To == "" || p.To == to) {
			return p
		}
	}
	return nil
}

// Threshold is the threshold of axis for the pair from -> to.
func (gs *Set) Threshold(from, to, axis string) (float64, bool) {
	if gs == nil {
		return 0, false
	}
	if p := gs.pairFor(from, to); p != nil {
		if t, ok := p.Thresholds[axis]; ok {
			return t, true
		}
	}
	t, ok := gs.def[axis]
	return t, ok
}

// bucket is the gauge pair of a handoff: its configured pair's label, else "default" (so
// metric attributes come from the config only).
func (gs *Set) bucket(from, to string) string {
	if gs != nil {
		if p := gs.pairFor(from, to); p != nil {
			return pairLabel(p.From, p.To)
		}
	}
	return defaultPair
}

// BucketThreshold is the threshold of axis for a gauge pair.
func (gs *Set) BucketThreshold(bucket, axis string) (float64, bool) {
	if gs == nil {
		return 0, false
	}
	for _, p := range gs.pairs {
		if pairLabel(p.From, p.To) == bucket {
			if t, ok := p.Thresholds[axis]; ok {
				return t, true
			}
			break
		}
	}
	t, ok := gs.def[axis]
	return t, ok
}

// Buckets lists the gauge pairs: every configured pair, then "default".
func (gs *Set) Buckets() []string {
	var out []string
	if gs != nil {
		for _, p := range gs.pairs {
			out = append(out, pairLabel(p.From, p.To))
		}
	}
	return append(out, defaultPair)
}

// Status is a gate's verdict.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Ungated: scores exist but no threshold applies to the axis of this pair.
	Ungated Status = "ungated"
	// Insufficient: fewer scored handoffs than min_samples; the gate cannot fail.
	Insufficient Status = "insufficient"
)

// Result is one gate (a pair and an axis) over a window.
type Result struct {
	From    string  `json:"from"`
	To      string  `json:"to"`
	Axis    string  `json:"axis"`
	Score   float64 `json:"score"`
	Samples int     `json:"samples"`
	Status  Status  `json:"status"`
	// Threshold is set when one applies.
	Threshold *float64 `json:"threshold,omitempty"`
}

// Pair names the gate's pair.
func (g Result) Pair() string { return g.From + " -> " + g.To }

// String is the gate's line in a summary.
func (g Result) String() string {
	switch g.Status {
	case Fail:
		return fmt.Sprintf("%s %s: mean %.2f over %s is below the threshold %.2f", g.Pair(), g.Axis, g.Score,
			textsafe.Plural(g.Samples, "handoff", "handoffs"), *g.Threshold)
	case Pass:
		return fmt.Sprintf("%s %s: mean %.2f over %s, threshold %.2f", g.Pair(), g.Axis, g.Score,
			textsafe.Plural(g.Samples, "handoff", "handoffs"), *g.Threshold)
	case Insufficient:
		return fmt.Sprintf("%s %s: mean %.2f over only %s, fewer than min_samples: threshold %.2f not applied", g.Pair(), g.Axis,
			g.Score, textsafe.Plural(g.Samples, "handoff", "handoffs"), *g.Threshold)
	}
	return fmt.Sprintf("%s %s: mean %.2f over %s (no threshold)", g.Pair(), g.Axis, g.Score, textsafe.Plural(g.Samples, "handoff", "handoffs"))
}

type gateKey struct{ from, to, axis string }

type tally struct {
	sum float64
	n   int
}

// maxPairs bounds the pairs a Tally tracks (further pairs are counted as dropped).
const maxPairs = 10_000

// Tally sums rubric scores per pair and axis over a whole run (every trace of a
// handoffcheck run). It is safe for concurrent use.
type Tally struct {
	mu      sync.Mutex
	sums    map[gateKey]*tally
	dropped int
}

// NewTally starts an empty tally.
func NewTally() *Tally { return &Tally{sums: map[gateKey]*tally{}} }

// Score is one handoff's score on one rubric axis.
type Score struct {
	From, To, Axis string
	Score          float64
}

// Add counts the scores.
func (t *Tally) Add(scores []Score) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range scores {
		k := gateKey{r.From, r.To, r.Axis}
		s, ok := t.sums[k]
		if !ok {
			if len(t.sums) >= maxPairs*len(rubric.Axes) {
				t.dropped++
				continue
			}
			s = &tally{}
			t.sums[k] = s
		}
		s.sum += r.Score
		s.n++
	}
}

// Len is the number of (pair, axis) series with a score.
func (t *Tally) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sums)
}

// Evaluate applies the gates to the means: one result per pair and axis with a score,
// ordered by pair, then axis.
func (t *Tally) Evaluate(gs *Set) []Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Result, 0, len(t.sums))
	for k, s := range t.sums {
		g := Result{From: k.from, To: k.to, Axis: k.axis, Score: round4(s.sum / float64(s.n)), Samples: s.n, Status: Ungated}
		if th, ok := gs.Threshold(k.from, k.to, k.axis); ok {
			th := th
			g.Threshold = &th
			switch {
			case s.n < gs.minSamples:
				g.Status = Insufficient
			case g.Score < th:
				g.Status = Fail
			default:
				g.Status = Pass
			}
		}
		out = append(out, g)
	}
	sortGates(out)
	return out
}

func sortGates(out []Result) {
	axisIndex := map[string]int{}
	for i, a := range rubric.Axes {
		axisIndex[a] = i
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return axisIndex[a.Axis] < axisIndex[b.Axis]
	})
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// Failed counts the failing gates.
func Failed(gates []Result) int {
	n := 0
	for _, g := range gates {
		if g.Status == Fail {
			n++
		}
	}
	return n
}

// WindowScore is the mean score of a gauge pair's axis over the sliding window.
type WindowScore struct {
	Pair    string
	Axis    string
	Score   float64
	Samples int
}

type windowKey struct{ pair, axis string }

type scored struct {
	at    time.Time
	score float64
}

// Window keeps, per gauge pair (a configured pair, else "default") and axis, the
// scores of the most recent handoffs (window size, and no older than the window duration).
// Its memory is bounded by the config: pairs x axes x size. It is safe for concurrent use.
type Window struct {
	mu    sync.Mutex
	gs    *Set
	rings map[windowKey][]scored
}

// NewWindow starts an empty window.
func NewWindow(gs *Set) *Window {
	return &Window{gs: gs, rings: map[windowKey][]scored{}}
}

// Add puts the scores in the window and returns the new means of every (pair, axis) they
// touched, in a stable order.
func (w *Window) Add(now time.Time, scores []Score) []WindowScore {
	w.mu.Lock()
	defer w.mu.Unlock()
	touched := map[windowKey]bool{}
	for _, r := range scores {
		k := windowKey{w.gs.bucket(r.From, r.To), r.Axis}
		ring := append(w.rings[k], scored{at: now, score: r.Score})
		if over := len(ring) - w.gs.window.Size; over > 0 {
			ring = append(ring[:0:0], ring[over:]...)
		}
		w.rings[k] = ring
		touched[k] = true
	}
	return w.means(now, touched)
}

// Scores returns the means of every (pair, axis) with scores in the window now.
func (w *Window) Scores(now time.Time) []WindowScore {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := map[windowKey]bool{}
	for k := range w.rings {
		all[k] = true
	}
	return w.means(now, all)
}

func (w *Window) means(now time.Time, keys map[windowKey]bool) []WindowScore {
	var out []WindowScore
	for k := range keys {
		ring := w.rings[k]
		if d := w.gs.window.Duration; d > 0 {
			i := 0
			for i < len(ring) && now.Sub(ring[i].at) > d {
				i++
			}
			ring = ring[i:]
			w.rings[k] = ring
		}
		if len(ring) == 0 {
			continue
		}
		sum := 0.0
		for _, s := range ring {
			sum += s.score
		}
		out = append(out, WindowScore{Pair: k.pair, Axis: k.axis, Score: round4(sum / float64(len(ring))), Samples: len(ring)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pair != out[j].Pair {
			return out[i].Pair < out[j].Pair
		}
		return out[i].Axis < out[j].Axis
	})
	return out
}
