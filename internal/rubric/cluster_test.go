package rubric

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/cluster"
)

// TestRubricPartClusters: a failed deterministic part names its own cluster when it has
// one (ScopeFidelity's context part: dropped_constraint), else the rubric's (its allowed
// tools part: scope_bleed).
func TestRubricPartClusters(t *testing.T) {
	failed := func(name string) Part { return Part{Name: name, State: PartFail} }
	ctx := failed("context supplied")
	ctx.Cluster = cluster.DroppedConstraint
	require.Equal(t, cluster.ScopeBleed, FailureCluster(Scope, []Part{{Name: "allowed tools", State: PartPass}, failed("allowed tools")}))
	require.Equal(t, cluster.DroppedConstraint, FailureCluster(Scope, []Part{{Name: "allowed tools", State: PartPass}, ctx}))
	require.Equal(t, cluster.IntegrationSkip, FailureCluster(Integration, []Part{failed("return value read")}))
	require.Equal(t, cluster.RecoveryBlind, FailureCluster(Recovery, nil))
	require.Equal(t, cluster.WrongDispatch, FailureCluster(Dispatch, nil))
	require.Equal(t, cluster.Other, FailureCluster("bogus", nil))
}
