package assertionexporter

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/readmetest"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
)

// TestTrajectoryREADMEExamples judges the trajectory and loop examples of this README and of
// the repository's on the span files they read (source: FILE), and compares the results with
// the ```text block that follows each: one line per result, "STEP OUTCOME[, score S]:
// MESSAGE". The paths are relative to the README's folder, where the test runs them.
func TestTrajectoryREADMEExamples(t *testing.T) {
	for _, doc := range []struct{ path, dir string }{{"README.md", "."}, {filepath.Join("..", "README.md"), ".."}} {
		examples := trajectoryExamples(readmetest.Fenced(t, doc.path))
		require.NotEmpty(t, examples, "%s has no trajectory or loop example", doc.path)
		t.Run(doc.path, func(t *testing.T) {
			t.Chdir(doc.dir)
			for i, ex := range examples {
				require.Equal(t, ex.want, judgeExample(t, ex.yaml), "%s: example %d", doc.path, i+1)
			}
		})
	}
}

type readmeExample struct{ yaml, want string }

var trajectoryKeys = regexp.MustCompile(`EXPECT_TRAJECTORY|maxHandoffs|maxPairRepeats|maxCycleLength`)

// trajectoryExamples returns the YAML blocks with an EXPECT_TRAJECTORY step or a loop key,
// each with the text block right after it.
func trajectoryExamples(blocks []readmetest.Block) []readmeExample {
	var out []readmeExample
	for i, b := range blocks {
		if b.Info != "yaml" || !trajectoryKeys.MatchString(b.Text) {
			continue
		}
		want := ""
		if i+1 < len(blocks) && blocks[i+1].Info == "text" {
			want = blocks[i+1].Text
		}
		out = append(out, readmeExample{yaml: b.Text, want: want})
	}
	return out
}

// judgeExample loads a block as the exporter's config and judges its FILE cases on their files.
func judgeExample(t *testing.T, block string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(block), &m))
	if ex, ok := m["exporters"].(map[string]any); ok { // a whole collector config
		m, _ = ex["assertion"].(map[string]any)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(m).Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	ev, _, err := cfg.compile(nil)
	require.NoError(t, err)
	var lines []string
	for _, name := range ev.CaseNames() {
		file, ok := ev.FileCases()[name]
		require.True(t, ok, "case %s of a README example reads no file", name)
		_, err := spanfile.Read(file, func(td ptrace.Traces) error {
			for _, g := range agentgraph.BuildAll(td, agentgraph.Options{}) {
				for _, r := range ev.EvaluateFileCase(name, g) {
					lines = append(lines, resultLine(r))
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	return strings.Join(lines, "\n") + "\n"
}

func resultLine(r rules.Result) string {
	head := fmt.Sprintf("%s %s", r.Step, r.Outcome)
	if r.Score != nil {
		head += ", score " + strconv.FormatFloat(*r.Score, 'g', 4, 64)
	}
	return head + ": " + r.Message
}
