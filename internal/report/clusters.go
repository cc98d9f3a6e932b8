package report

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// addClusters counts a trace's failures in the run's clusters (r.mu held); results are
// masked, so the groups' messages and agents are redacted as the rest of the reports are.
// A failure is seen when its trace started (TraceStart; unknown without a graph).
func (r *Run) addClusters(g *agentgraph.Graph, masked []rules.Result) {
	var seen time.Time
	if g != nil {
		seen = TraceStart(g).UTC()
	}
	for _, res := range masked {
		if f, ok := Failure(res, seen); ok {
			r.clusters.Add(f)
		}
	}
}

// Failure is a failing result as the cluster grouping sees it (ok false for any other
// outcome); seen is when its trace started.
func Failure(res rules.Result, seen time.Time) (cluster.Failure, bool) {
	if res.Outcome != rules.Fail {
		return cluster.Failure{}, false
	}
	return cluster.Failure{
		Key: cluster.Key{Case: res.Case, Step: res.Step, From: res.From, To: res.To, Cluster: res.Cluster, Message: res.Message},
		// The signature of a masked result is the evaluator's (over the unmasked message):
		// the grouping keys on it, so masking never splits or merges groups.
		Signature: res.Signature, TraceID: res.TraceID, Seen: seen,
	}, true
}

// Clusters is the run's failures grouped by cluster and signature.
func (r *Run) Clusters() cluster.Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clusters.Summary()
}

// clusterSection writes the failure clusters: one row per cluster (failures, signatures,
// immediate_fix), then one per signature with its count, traces, first and last seen and
// representative traces (r.mu held).
func (r *Run) clusterSection(b *bytes.Buffer) {
	s := r.clusters.Summary()
	if len(s.Clusters) == 0 {
		return
	}
	b.WriteString("\n## Failure clusters\n\n")
	b.WriteString("| cluster | failures | signatures | immediate_fix |\n|---|---:|---:|---|\n")
	for _, c := range s.Clusters {
		fmt.Fprintf(b, "| %s | %d | %s | %s |\n", c.Cluster, c.Count, signaturesOf(c), cell(c.ImmediateFix))
	}
	b.WriteString("\n| cluster | signature | case | assertion | failures | traces | first seen | last seen | representative traces | message | immediate_fix |\n")
	b.WriteString("|---|---|---|---|---:|---:|---|---|---|---|---|\n")
	for _, g := range s.Groups {
		fmt.Fprintf(b, "| %s | `%s` | %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", g.Cluster, g.Signature, cell(g.Case),
			cell(groupStep(g)), g.Count, g.Traces, seenAt(g.FirstSeen), seenAt(g.LastSeen), codeList(g.TraceIDs),
			cell(g.Message), cell(g.ImmediateFix))
	}
}

// signaturesOf is a cluster's number of signatures, and the failures of signatures beyond
// cluster.MaxGroups.
func signaturesOf(c cluster.Total) string {
	sigs := fmt.Sprint(c.Signatures)
	if c.Unlisted > 0 {
		sigs += fmt.Sprintf(" (+%d failures in further signatures)", c.Unlisted)
	}
	return sigs
}

// groupStep names a group's assertion, with its handoff when it names one.
func groupStep(g cluster.Group) string {
	if g.From == "" && g.To == "" {
		return g.Step
	}
	return g.Step + " " + g.From + " -> " + g.To
}

func seenAt(t *time.Time) string {
	if t == nil {
		return "–"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func codeList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "`" + textsafe.Escape(id) + "`"
	}
	return strings.Join(out, ", ")
}

// htmlCluster and htmlSignature are the HTML report's failure clusters.
type htmlCluster struct {
	Name, Signatures, Fix string
	Count                 int
}

type htmlSignature struct {
	Cluster, Signature, Case, Assertion, FirstSeen, LastSeen, Message, Fix string
	Count, Traces                                                          int
	TraceIDs                                                               []htmlTraceRef
}

type htmlTraceRef struct {
	ID    string
	Drawn bool
}

// htmlClusters fills the page's failure clusters (r.mu held).
func (r *Run) htmlClusters(p *htmlPage) {
	s := r.clusters.Summary()
	for _, c := range s.Clusters {
		p.Clusters = append(p.Clusters, htmlCluster{Name: string(c.Cluster), Signatures: signaturesOf(c), Fix: htmlText(c.ImmediateFix), Count: c.Count})
	}
	for _, g := range s.Groups {
		hs := htmlSignature{
			Cluster: string(g.Cluster), Signature: g.Signature, Case: htmlName(g.Case), Assertion: htmlText(groupStep(g)),
			FirstSeen: seenAt(g.FirstSeen), LastSeen: seenAt(g.LastSeen), Message: htmlText(g.Message), Fix: htmlText(g.ImmediateFix),
			Count: g.Count, Traces: g.Traces,
		}
		for _, id := range g.TraceIDs {
			hs.TraceIDs = append(hs.TraceIDs, htmlTraceRef{ID: textsafe.Escape(id), Drawn: r.pictures[id] != nil})
		}
		p.Signatures = append(p.Signatures, hs)
	}
}
