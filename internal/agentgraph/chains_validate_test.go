package agentgraph

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChainsValidate: every default place is valid, and each place that can never hold a
// value is named with its chain and index.
func TestChainsValidate(t *testing.T) {
	require.NoError(t, DefaultChains().Validate())
	require.NoError(t, Chains{}.Validate())
	require.NoError(t, Chains{
		Input:        Chain{"my.input", "event:gen_ai.user.message:content", "llm:event:x:y", "llm:llm.input_messages.*", "req#a.b"},
		InputTokens:  Chain{"my.tokens", "usage#input"},
		Role:         Chain{"my.role"},
		AllowedTools: Chain{"llm:gcp.vertex.agent.llm_request#config.tools"},
	}.Validate())

	err := Chains{
		Role:        Chain{"", "a#b"},
		Input:       Chain{"event:foo", "llm:", "  ", "event::k", ".*", "#a.b", "k#"},
		Output:      Chain{"llm:event:done"},
		InputTokens: Chain{"llm:gen_ai.usage.input_tokens", "event:e:k", "usage#"},
		Cost:        Chain{"#total"},
	}.Validate()
	require.EqualError(t, err, `role[0]: an empty place: name an attribute key
role[1]: "a#b": role takes attribute keys only
input_tokens[0]: "llm:gen_ai.usage.input_tokens": token and cost chains take KEY and KEY#FIELD only
input_tokens[1]: "event:e:k": token and cost chains take KEY and KEY#FIELD only
input_tokens[2]: "usage#": a JSON place is KEY#FIELD (KEY#a.b in text chains): the attribute key, then the field
input[0]: "event:foo": an event place is event:NAME:KEY (attribute KEY of the first event NAME)
input[1]: "llm:": llm: needs the place to read on the LLM child, e.g. llm:gen_ai.input.messages
input[2]: an empty place: name an attribute key
input[3]: "event::k": an event place is event:NAME:KEY (attribute KEY of the first event NAME)
input[4]: ".*": a flattened place is PREFIX.* (keys PREFIX.0..., PREFIX.1...)
input[5]: "#a.b": a JSON place is KEY#FIELD (KEY#a.b in text chains): the attribute key, then the field
input[6]: "k#": a JSON place is KEY#FIELD (KEY#a.b in text chains): the attribute key, then the field
output[0]: "llm:event:done": an event place is event:NAME:KEY (attribute KEY of the first event NAME)
cost[0]: "#total": a JSON place is KEY#FIELD (KEY#a.b in text chains): the attribute key, then the field`)
}
