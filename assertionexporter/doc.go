//go:generate ../_build/tools/mdatagen metadata.yaml

// Package assertionexporter evaluates the configured assertion cases (internal/rules) on each
// complete agent trace and reports verdicts as internal metrics, failure logs and report files.
package assertionexporter // import "github.com/otelcol-handoff/otelcol-handoff/assertionexporter"
