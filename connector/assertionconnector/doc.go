//go:generate ../../_build/tools/mdatagen metadata.yaml

// Package assertionconnector evaluates the assertion cases of the assertion exporter (the
// same engine and config) on each agent trace and turns the verdicts into pipeline data:
// the traces forwarded with verdicts stamped on them, one gen_ai.evaluation.result log
// record per result, and verdict, per-agent and agent-graph metrics.
package assertionconnector // import "github.com/otelcol-handoff/otelcol-handoff/connector/assertionconnector"
