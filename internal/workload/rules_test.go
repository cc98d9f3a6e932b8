package workload

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestRulesHoldNAssertions counts what Rules(n) writes: every step, every test-case field,
// and each entry of expected_tool_calls (one rule each), with unique case names.
func TestRulesHoldNAssertions(t *testing.T) {
	for n := 1; n <= 35; n++ {
		var cases []map[string]any
		if err := yaml.Unmarshal([]byte(Rules(n)), &cases); err != nil {
			t.Fatalf("Rules(%d): %v", n, err)
		}
		got, names := 0, map[string]bool{}
		for _, c := range cases {
			name, _ := c["name"].(string)
			if name == "" || names[name] {
				t.Fatalf("Rules(%d): case name %q empty or repeated", n, name)
			}
			names[name] = true
			for k, v := range c {
				switch k {
				case "name":
				case "steps", "expected_tool_calls":
					got += len(v.([]any))
				default:
					got++
				}
			}
		}
		if got != n {
			t.Errorf("Rules(%d) holds %d assertions:\n%s", n, got, Rules(n))
		}
	}
}
