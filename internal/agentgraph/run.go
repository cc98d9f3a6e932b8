package agentgraph

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A run's status and approval state, and the recovery markers an application records:
// observable on the spans, normalized here.

// Run statuses (seed 001).
const (
	StatusCompleted        = "completed"
	StatusFailed           = "failed"
	StatusAwaitingApproval = "awaiting_approval"
)

// Observable markers of a run's status (documented in assertionexporter/README.md).
const (
	// AttrRunStatus on an agent span, set to one of the three statuses, is taken as is.
	AttrRunStatus = "agent.run.status"
	// EventAwaitingApproval on an agent span, or on one of its own tool spans, marks a run
	// that stopped at a pending approval.
	EventAwaitingApproval = "awaiting_approval"
	// AttrRecovery, set by an application on a span (or a span event) after an error,
	// records the recovery it chose: retry, fallback or escalation.
	AttrRecovery = "handoff.recovery"
)

// RunStatus is how an agent run ended.
type RunStatus struct {
	// State is StatusCompleted, StatusFailed or StatusAwaitingApproval.
	State string
	// Why says which evidence decided the state.
	Why string
	// Error is the failure's message (else its type) when the agent span failed.
	Error string
}

// Status derives how the run ended.
//
// The state is "failed" when the agent's own span carries an error (status ERROR,
// error.type or an exception event: an unhandled error propagates to the agent span; errors
// the agent handled stay on its tool or LLM spans; framework control flow recorded as an
// error, such as LangGraph's ParentCommand, does not count), "awaiting_approval" when the
// run awaits an approval (AwaitingApproval) or its agent span stopped at a LangGraph
// GraphInterrupt, else "completed". AttrRunStatus on the agent span, when it holds one of
// the three values, overrides all of that.
func (inv *Invocation) Status() RunStatus {
	st := RunStatus{State: StatusCompleted, Why: "no error on the agent span"}
	span := inv.Span
	switch e := span.Error; {
	case span.ControlFlow() == ControlGraphInterrupt:
		// Not an error for the DAG; for the run's status it is the pause a
		// human-in-the-loop approval makes.
		st.State, st.Why = StatusAwaitingApproval, "GraphInterrupt on the agent span"
	case e != nil:
		st.State, st.Why = StatusFailed, "error on the agent span ("+e.Source+")"
		st.Error = e.Message
		if st.Error == "" {
			st.Error = e.Type
		}
	}
	if st.State == StatusCompleted && inv.AwaitingApproval() {
		st.State, st.Why = StatusAwaitingApproval, "event "+EventAwaitingApproval+" recorded"
	}
	if v, ok := span.Pdata.Attributes().Get(AttrRunStatus); ok {
		switch s := v.AsString(); s {
		case StatusCompleted, StatusFailed, StatusAwaitingApproval:
			st.State, st.Why = s, "attribute "+AttrRunStatus
		}
	}
	return st
}

// AwaitingApproval reports the approval state a collector can observe: an
// EventAwaitingApproval event on the agent span or on one of its own tool spans (a run
// that stopped at a pending approval).
func (inv *Invocation) AwaitingApproval() bool {
	if hasEvent(inv.Span.Pdata, EventAwaitingApproval) {
		return true
	}
	for _, calls := range [][]*ToolCall{inv.ToolCalls, inv.DelegationCalls} {
		for _, tc := range calls {
			if hasEvent(tc.Span.Pdata, EventAwaitingApproval) {
				return true // an approval asked on a tool call, or on a transfer
			}
		}
	}
	return false
}

func hasEvent(s ptrace.Span, name string) bool {
	events := s.Events()
	for i := 0; i < events.Len(); i++ {
		if events.At(i).Name() == name {
			return true
		}
	}
	return false
}

// HasRecovery reports whether the span records a recovery (a non-empty AttrRecovery on the
// span or on one of its events).
func (s *Span) HasRecovery() bool {
	if v, ok := s.Pdata.Attributes().Get(AttrRecovery); ok && v.AsString() != "" {
		return true
	}
	events := s.Pdata.Events()
	for i := 0; i < events.Len(); i++ {
		if v, ok := events.At(i).Attributes().Get(AttrRecovery); ok && v.AsString() != "" {
			return true
		}
	}
	return false
}

// Recovery is the recovery the span records: its own AttrRecovery attribute, else that of
// its first event at or after t.
func (s *Span) Recovery(t pcommon.Timestamp) (string, bool) {
	if v, ok := s.Pdata.Attributes().Get(AttrRecovery); ok && v.AsString() != "" {
		return v.AsString(), true
	}
	events := s.Pdata.Events()
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		if ev.Timestamp() < t {
			continue
		}
		if v, ok := ev.Attributes().Get(AttrRecovery); ok && v.AsString() != "" {
			return v.AsString(), true
		}
	}
	return "", false
}
