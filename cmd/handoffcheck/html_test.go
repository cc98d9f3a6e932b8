package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHTMLReport: --html writes the self-contained page; it and the Markdown report name
// each failing trace's span file and service beside its trace id.
func TestHTMLReport(t *testing.T) {
	dir := t.TempDir()
	page, md := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.md")
	code, _, errOut := runCmd(t, "replay", "--config", config(t, failing), "--html", page, "--markdown", md, adk, strands)
	require.Equal(t, exitFail, code, errOut)

	b, err := os.ReadFile(page)
	require.NoError(t, err)
	html := string(b)
	require.True(t, strings.HasPrefix(html, "<!DOCTYPE html>"))
	require.Contains(t, html, `<h3>Trace <code>ee43d96bfb5cdaf53f26aa5435c557e3</code> · service <code>realclient-strands</code> · file <code>`+strands+`</code></h3>`)
	require.Contains(t, html, `<h3>Trace <code>f4f85fa1287a499869aa8f6a54cd202a</code> · service <code>realclient-google-adk</code> · file <code>`+adk+`</code></h3>`)
	require.Contains(t, html, `✗ budget: made 2 tool calls, over maxToolCalls 1`)
	require.Contains(t, html, `id="case-tight_budget"`)

	b, err = os.ReadFile(md)
	require.NoError(t, err)
	require.Contains(t, string(b), "### Trace `ee43d96bfb5cdaf53f26aa5435c557e3` (service realclient-strands, file "+strands+")")

	// A report path that cannot be written is a usage error before anything runs.
	code, _, errOut = runCmd(t, "replay", "--config", config(t, failing), "--html", filepath.Join(dir, "gone", "r.html"), adk)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "--html: ")
}
