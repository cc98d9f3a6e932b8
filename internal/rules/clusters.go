package rules

import (
	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
)

// Failure clusters (internal/cluster): each check names the cluster where it decides a
// failure (Result.Cluster, from which sub-check failed); what it leaves unnamed is
// cluster.Other. The signature is stamped once a result is final.

// classify names the cluster of r when it failed; a cluster already named stays.
func (r *Result) classify(c cluster.Name) {
	if r.Outcome == Fail && r.Cluster == "" {
		r.Cluster = c
	}
}

// stampCluster completes a final result: a failure gets its cluster (Other when its check
// named none) and its signature; any other outcome carries neither. A failure the judge
// decided signs with what was expected instead of its message, which holds the judge's
// free-text reason: the same failure on two traces keeps one signature.
func (r *Result) stampCluster() {
	if r.Outcome != Fail {
		r.Cluster, r.Signature = "", ""
		return
	}
	r.Cluster = r.Cluster.Or()
	msg := r.Message
	if r.Judge != nil {
		msg = "judge failed: " + r.Expected
	}
	r.Signature = cluster.Key{Case: r.Case, Step: r.Step, From: r.From, To: r.To, Cluster: r.Cluster, Message: msg}.Signature()
}

// stampClusters stamps every result (stampCluster).
func stampClusters(rs []Result) {
	for i := range rs {
		rs[i].stampCluster()
	}
}

// topologyCluster is the cluster of a failed ASSERT_AGENT_TOPOLOGY step: a trace without
// agents is Other; every other topology failure (a forbidden cycle, a chain over maxDepth, a
// loop rule) is a Loop.
func topologyCluster(g *agentgraph.Graph) cluster.Name {
	if len(g.Invocations) == 0 {
		return cluster.Other
	}
	return cluster.Loop
}
