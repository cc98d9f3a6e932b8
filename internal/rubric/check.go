package rubric

import (
	"fmt"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/judge"
)

// Finding is what a rubric's checks found on one handoff: its deterministic parts and
// what the judge would read (Missing: why it cannot), or, Skipped, why the rubric does not
// apply (the result's actual and message).
type Finding struct {
	Parts   []Part
	Fields  []judge.Field
	Missing string

	Skipped                 bool
	SkipActual, SkipMessage string
}

// Check runs the deterministic parts of axis on e and, when a judge grades (judged), builds
// what it reads. x is the trace's index (NewIndex), shared by the handoffs of one trace.
func (rs *Checks) Check(axis string, e *agentgraph.Edge, x *Index, judged bool) Finding {
	var c Finding
	switch axis {
	case Dispatch:
		if judged {
			c.Fields, c.Missing = x.dispatchFields(e)
		}
	case Scope:
		c.Parts = rs.scopeParts(x, e)
		if judged {
			c.Fields, c.Missing = x.scopeFields(e)
		}
	case Integration:
		ps, steps, ok := rs.integrationParts(x, e)
		if !ok {
			c.Skipped = true
			c.SkipActual, c.SkipMessage = integrationSkip(x, e)
			return c
		}
		c.Parts = ps
		if judged {
			c.Fields, c.Missing = x.integrationFields(e, steps)
		}
	case Recovery:
		ps, eps, ok := rs.recoveryParts(x, e)
		if !ok {
			c.Skipped = true
			c.SkipActual = "no error on the round trip"
			c.SkipMessage = fmt.Sprintf("no error on the handoff %s -> %s: nothing to recover from", e.From.Name, e.To.Name)
			return c
		}
		c.Parts = ps
		if judged {
			c.Fields = x.recoveryFields(e, eps)
		}
	}
	return c
}

// integrationSkip says why ResultIntegration does not apply: control did not return.
func integrationSkip(x *Index, e *agentgraph.Edge) (actual, message string) {
	if hb := x.handBacks(e); len(hb) > 0 {
		// A swarm node handing control back starts a new run of the sender: that run's
		// input is the hand-off message, not a step that read a return value.
		return "control handed back as a new run", fmt.Sprintf("%s handed control back to %s as a new run (span %s), a hand-off of its own (graded as the handoff %s -> %s): no return value to integrate",
			e.To.Name, e.From.Name, hb[0].Span.ID, e.To.Name, e.From.Name)
	}
	return "control did not return to the sender", fmt.Sprintf("%s took no further step after %s returned (a one-way transfer): no result to integrate", e.From.Name, e.To.Name)
}

// axisClusters are the clusters of the handoff rubrics' failures.
var axisClusters = map[string]cluster.Name{
	Dispatch:    cluster.WrongDispatch,
	Scope:       cluster.ScopeBleed,
	Integration: cluster.IntegrationSkip,
	Recovery:    cluster.RecoveryBlind,
}

// FailureCluster is the cluster of a failed rubric: that of its first failed part when the
// part names one, else the axis's own (parts nil: the judge failed it).
func FailureCluster(axis string, parts []Part) cluster.Name {
	for _, p := range parts {
		if p.State == PartFail && p.Cluster != "" {
			return p.Cluster
		}
	}
	return axisClusters[axis].Or()
}
