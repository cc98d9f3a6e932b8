// Package agentgraph is the normalized model of agent traces: it classifies every span once,
// through fallback chains of attribute keys (chains.go, overridable in config; Build reads
// them compiled, one walk over a span's attributes, slots.go), into agents, tools, LLM
// calls, handoffs and orchestration wrappers, and builds each trace's delegation DAG
// (invocations, edges with the evidence that made them, rollups, depth, cycles). The
// handoff processor writes the DAG's HANDOFF spans from it (handoff.go).
//
// # The model is the only reader of raw spans
//
// Dialect knowledge lives here alone, so a new framework is taught in one place. Every
// other package (rules, reports, the assertion exporter, the CLI) reads normalized fields
// and never a span's attributes, events or links, nor the pdata span behind a Span:
//
//   - runs: Invocation (name, input, output, allowed tools, tool calls and delegation
//     calls, edges in and out, Self and Subtree rollups), Invocation.OwnToolCalls (the tool
//     calls that are not delegation calls, whatever Options.CountDelegationCallsAsToolCalls
//     asks), Invocation.Status (completed | failed |
//     awaiting_approval, with its evidence), Invocation.AwaitingApproval,
//     Invocation.LLMCalls and Invocation.AllowedToolNames (ToolNamesOf);
//   - content: Value (text and the chain place it came from, or the places tried), the
//     chat-message formats (MessageText, ContentValue, and ContentPreview for a quote of
//     its first bytes), ParseJSON, and Span.InputText (what an LLM call was given);
//   - tool calls: ToolCall (arguments and result as Values, Params, ParsedArgs,
//     TriggerTarget, Delegation and Targets), Edge.Call (the delegation call that carried a
//     handoff);
//   - spans: Span (role, name, error, control flow, tokens, owner, tool call), Span.Start,
//     Span.End, Span.SpanName, Span.StatusError, the recovery markers (Span.HasRecovery,
//     Span.Recovery), Graph.InvocationOf;
//   - the trace: Graph.TestContext (context.* of the test-case fields), Graph.Selector (what
//     case conditions select on), ScanBatch and WithoutLate (the processor's late and
//     incomplete markers), Graph.MarkIncomplete, SpansToMark (a batch's spans marked by
//     id: the assertion connector's verdicts and evaluation events),
//     Graph.CopyRootResourceTo (the resource of records about a whole trace).
//
// A rule that needs something else of a span adds a normalized field here (a new file
// beside run.go, content.go, calls.go, selector.go), with a test on a real capture; where
// the field is a list of keys, it belongs in a chain so config can override it.
// TestOnlyTheModelReadsRawSpans (onlyreader_test.go) loads every non-test Go file of the
// module outside this package with its types and fails, naming file:line, on a raw read.
// Attributes(), Events() and Links() count on a span's side only (a span, event, link,
// resource or scope): the assertion connector writes its own log records' and data points'
// attributes. Exempt are the processor's span splitting and marking
// (handoffprocessor/split.go) and the packages that build spans (internal/rules/rulestest,
// internal/workload, cmd/loadtest, cmd/otlpreplay).
package agentgraph
