// Package check is the contract between the case engine (internal/rules) and what it runs:
// the seed-000 step kinds (internal/rules/steps) and the seed-001 test-case fields
// (internal/rules/expect). It holds the Result a check fills in and its outcome and failure
// cluster, a step kind's interfaces (Kind, Compiled), what one step reads on one trace (Run,
// Trace, Judging) and where it puts its results (Out), the CEL environments of the one
// dialect (Exprs), and the small helpers every check words its messages with (Listed,
// CapList, NotRun, Errors).
package check
