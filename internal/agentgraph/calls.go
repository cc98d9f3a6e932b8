package agentgraph

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Tool calls as the test-case fields read them: arguments parsed for expressions, and the
// agent a trigger or transfer call targets.

// ParsedArgs is the call's arguments parsed as a JSON object with ParseJSON (integers as
// int64), for expressions over params.*; an empty map and false when the arguments were not
// captured or are not a JSON object. Each call returns a new map.
func (tc *ToolCall) ParsedArgs() (map[string]any, bool) {
	if tc.Args.Found() {
		if v, ok := ParseJSON(tc.Args.Text); ok {
			if m, ok := v.(map[string]any); ok {
				return m, true
			}
		}
	}
	return map[string]any{}, false
}

// triggerTools trigger another agent by an argument naming it: the seed's trigger_agent and
// trigger_agent_at, Google ADK's transfer_to_agent, Strands' handoff_to_agent.
var triggerTools = map[string]bool{"trigger_agent": true, "trigger_agent_at": true, "transfer_to_agent": true, "handoff_to_agent": true}

// TargetArgKeys are the argument keys that name the agent a transfer or trigger call
// targets (see transferArgKeys).
func TargetArgKeys() []string { return append([]string(nil), transferArgKeys...) }

// IsTriggerAgentCall reports the trigger tools (trigger_agent, trigger_agent_at), whose
// wait_for_response argument says whether the sender waits for the receiver.
func (tc *ToolCall) IsTriggerAgentCall() bool {
	return tc.Name == "trigger_agent" || tc.Name == "trigger_agent_at"
}

// TriggerTarget names the agent a trigger or transfer call targets, whether or not that
// agent ran in the trace ("" when the call is neither): the argument naming it for the
// trigger tools (trigger_agent, trigger_agent_at, transfer_to_agent, handoff_to_agent),
// else the suffix of transfer_to_X / handoff_to_X.
func (tc *ToolCall) TriggerTarget() string {
	if triggerTools[tc.Name] {
		params, _ := tc.ParsedArgs()
		for _, k := range transferArgKeys {
			if s, ok := params[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	if m, ok := transferSuffix(tc.Name); ok && m != "agent" {
		return m
	}
	return ""
}

// TransferNamePattern matches the names of tools that hand control to the agent their
// suffix names (transfer_to_X, handoff_to_X); the submatch is X.
func TransferNamePattern() *regexp.Regexp { return transferByName }

// AllowedToolNames are the names of the tools offered to the run (ToolNamesOf its
// AllowedTools); nil when none were captured.
func (inv *Invocation) AllowedToolNames() []string { return ToolNamesOf(inv.AllowedTools) }

// ToolNamesOf reads tool names from a list of offered tools (AllowedTools, or the values of
// a handoff.allowed_tools attribute), where an entry may itself be a JSON tool definition
// in the OTel ({"name"}) or OpenAI ({"function": {"name"}}) schema; other entries are names.
func ToolNamesOf(list []string) []string {
	var out []string
	for _, item := range list {
		var def map[string]any
		if strings.HasPrefix(strings.TrimSpace(item), "{") && json.Unmarshal([]byte(item), &def) == nil {
			if n, ok := def["name"].(string); ok {
				out = append(out, n)
				continue
			}
			if f, ok := def["function"].(map[string]any); ok {
				if n, ok := f["name"].(string); ok {
					out = append(out, n)
					continue
				}
			}
		}
		out = append(out, item)
	}
	return out
}

// OwnToolCalls are the run's tool calls that are not delegation calls, in start order: the
// agent's own work, whatever the counting. Under the default counting that is ToolCalls;
// with Options.CountDelegationCallsAsToolCalls it is ToolCalls without the delegation calls
// kept there (what the handoff rubrics judge never depends on the counting).
func (inv *Invocation) OwnToolCalls() []*ToolCall {
	for i, tc := range inv.ToolCalls {
		if tc.Delegation == "" {
			continue
		}
		out := append(make([]*ToolCall, 0, len(inv.ToolCalls)-1), inv.ToolCalls[:i]...)
		for _, tc := range inv.ToolCalls[i+1:] {
			if tc.Delegation == "" {
				out = append(out, tc)
			}
		}
		return out
	}
	return inv.ToolCalls
}
