package rubric

import (
	"fmt"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
)

// What the judge reads per rubric of EXPECT_HANDOFF_RUBRICS (step_rubrics.go).

func tools(list []string) string {
	if list == nil {
		return "(not captured)"
	}
	names := allowedNames(list)
	return strings.Join(names, ", ")
}

// postTurn renders the sender's next steps (at most 5), each step's text read once per
// trace (the handoffs of a fan-out share their next steps).
func (x *Index) postTurn(steps []senderStep) string {
	var b strings.Builder
	for i, st := range steps {
		if i == shownSteps {
			more := fmt.Sprint(len(steps) - shownSteps)
			if len(steps) == maxNextSteps {
				more += " or more" // nextSteps looks no further
			}
			fmt.Fprintf(&b, "(%s more steps)\n", more)
			break
		}
		if strings.TrimSpace(st.text) == "" {
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s\n", st.label, x.stepLeafText(&st))
	}
	return strings.TrimSpace(b.String())
}

// senderOutput is the output of the sender's last run.
func (x *Index) senderOutput(e *agentgraph.Edge) string {
	if run := x.lastOutputRun(e); run != nil {
		return plainOutput(run.Output.Text)
	}
	return "(not captured)"
}

func orNotCaptured(v agentgraph.Value) string {
	if v.Found() {
		return v.Text
	}
	return "(not captured)"
}
