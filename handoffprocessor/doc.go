//go:generate ../_build/tools/mdatagen metadata.yaml

// Package handoffprocessor buffers spans per trace until the trace is complete, builds the
// agent delegation DAG (internal/agentgraph) and forwards every received span plus one
// synthesized HANDOFF span per agent-to-agent handoff.
package handoffprocessor // import "github.com/otelcol-handoff/otelcol-handoff/handoffprocessor"
