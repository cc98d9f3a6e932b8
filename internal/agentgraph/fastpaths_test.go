package agentgraph

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The string tests that replaced a regexp or a decode on a per-span path must decide as
// the regexp or the decode did.

func TestTransferSuffixIsTheRegexp(t *testing.T) {
	names := []string{
		"", "transfer_to", "transfer_to_", "transfer_to_x", "transfer_to_agent", "handoff_to_", "handoff_to_billing",
		"transfer_to_a\nb", "transfer_to_\n", "handoff_to_x\n", "xtransfer_to_y", "transfer_to__", "transfer_tox",
		"handoff_to_\xff", "transfer_to_é", "Transfer_to_x", "handoff_to_handoff_to_x",
	}
	for _, td := range agreementTraces(t) {
		for _, spans := range SpansOf(td) {
			for _, s := range spans {
				names = append(names, s.Pdata.Name(), attrStr(s.Pdata, "gen_ai.tool.name"), attrStr(s.Pdata, "tool.name"))
			}
		}
	}
	for _, name := range names {
		m := transferByName.FindStringSubmatch(name)
		got, ok := transferSuffix(name)
		if m == nil {
			require.False(t, ok, "%q", name)
			continue
		}
		require.True(t, ok, "%q", name)
		require.Equal(t, m[1], got, "%q", name)
	}
}

func TestMayDecodeToKeepsEveryMatch(t *testing.T) {
	decode := func(raw string) string {
		var meta struct {
			Node string `json:"langgraph_node"`
		}
		_ = json.Unmarshal([]byte(raw), &meta)
		return meta.Node
	}
	raws := []string{
		`{"langgraph_node":"planner"}`, `{"LANGGRAPH_NODE":"planner"}`, `{"langgraph_node":"pl\u0061nner"}`,
		"{\"langgraph_node\":\"pl\xffnner\"}", `{"langgraph_node":1}`, `not json`, `{"other":"planner"}`,
	}
	names := []string{"planner", "pl\uFFFDnner", "", "x"}
	for _, td := range agreementTraces(t) {
		for _, spans := range SpansOf(td) {
			for _, s := range spans {
				if raw := attrStr(s.Pdata, "metadata"); raw != "" {
					raws = append(raws, raw)
					names = append(names, s.Pdata.Name(), decode(raw))
				}
			}
		}
	}
	require.Greater(t, len(raws), 20, "captures with LangGraph metadata")
	for _, raw := range raws {
		for _, name := range names {
			if decode(raw) == name {
				require.True(t, mayDecodeTo(raw, name), "%q in %q", name, raw)
			}
		}
	}
}
