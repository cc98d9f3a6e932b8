package check

import "github.com/otelcol-handoff/otelcol-handoff/internal/cluster"

// Outcome of one assertion on one trace.
type Outcome string

const (
	Pass    Outcome = "pass"
	Fail    Outcome = "fail"
	Error   Outcome = "error"
	Skipped Outcome = "skipped"
)

// Outcomes lists every outcome, for zero-initialized metrics.
var Outcomes = []Outcome{Pass, Fail, Error, Skipped}

// PassIf is Pass when ok holds, else Fail.
func PassIf(ok bool) Outcome {
	if ok {
		return Pass
	}
	return Fail
}

// Result is one assertion's verdict on one trace.
type Result struct {
	TraceID  string   `json:"trace_id"`
	Case     string   `json:"case"`
	Step     string   `json:"step"`
	Action   string   `json:"action"`
	Outcome  Outcome  `json:"outcome"`
	Expected string   `json:"expected"`
	Actual   string   `json:"actual"`
	Message  string   `json:"message"`
	Spans    []string `json:"spans,omitempty"`
	// Complete is false when the trace was released before it was complete.
	Complete bool `json:"trace_complete"`

	// Handoff rubric results (EXPECT_HANDOFF_RUBRICS): the handoff's sender and receiver,
	// the rubric (axis) and its score from 0 to 1 (absent when not graded).
	From  string   `json:"from,omitempty"`
	To    string   `json:"to,omitempty"`
	Axis  string   `json:"axis,omitempty"`
	Score *float64 `json:"score,omitempty"`
	// Gated is true when a gate decides this axis for this pair: the result feeds the
	// gate's mean score and does not fail a run by itself.
	Gated bool `json:"gated,omitempty"`
	// Judge is the judge's verdict, when a judge graded the result.
	Judge *JudgeVerdict `json:"judge,omitempty"`
	// Cluster names why a failing result failed, as its check decided; Signature is the
	// failure's stable signature (internal/cluster). Both are empty unless the outcome is fail.
	Cluster   cluster.Name `json:"cluster,omitempty"`
	Signature string       `json:"signature,omitempty"`
}

// JudgeVerdict is what the judge answered for one result.
type JudgeVerdict struct {
	Model    string  `json:"model"`
	Template string  `json:"template"`
	Score    float64 `json:"score"`
	Pass     bool    `json:"pass"`
	Reason   string  `json:"reason"`
	Samples  int     `json:"samples"`
}

// Classify names the cluster of r when it failed; a cluster already named stays.
func (r *Result) Classify(c cluster.Name) {
	if r.Outcome == Fail && r.Cluster == "" {
		r.Cluster = c
	}
}

// StampCluster completes a final result: a failure gets its cluster (Other when its check
// named none) and its signature; any other outcome carries neither. A failure the judge
// decided signs with what was expected instead of its message, which holds the judge's
// free-text reason: the same failure on two traces keeps one signature.
func (r *Result) StampCluster() { r.stamp(true) }

// stamp is StampCluster; without sign a failure gets its cluster and no signature.
func (r *Result) stamp(sign bool) {
	if r.Outcome != Fail {
		r.Cluster, r.Signature = "", ""
		return
	}
	r.Cluster = r.Cluster.Or()
	if !sign {
		return
	}
	msg := r.Message
	if r.Judge != nil {
		msg = "judge failed: " + r.Expected
	}
	r.Signature = cluster.Key{Case: r.Case, Step: r.Step, From: r.From, To: r.To, Cluster: r.Cluster, Message: msg}.Signature()
}

// StampClusters stamps every result (StampCluster); quiet (Trace.Quiet), a failure gets
// its cluster and no signature.
func StampClusters(rs []Result, quiet bool) {
	for i := range rs {
		rs[i].stamp(!quiet)
	}
}
