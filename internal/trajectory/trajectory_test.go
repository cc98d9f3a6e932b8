package trajectory

import (
	"math"
	"strings"
	"testing"
)

// seq builds calls, one response each; "a+b" puts a and b in one response.
func seq(items ...string) []Call {
	var out []Call
	for r, it := range items {
		parts := strings.Split(it, "+")
		resp := -1
		if len(parts) > 1 {
			resp = r
		}
		for _, p := range parts {
			out = append(out, Call{Name: p, Response: resp})
		}
	}
	return out
}

func TestParseMode(t *testing.T) {
	for name, want := range map[string]Mode{
		"exact": Exact, "in_order": InOrder, "any_order": AnyOrder, "subset": Subset, "superset": Superset,
		"strict": Exact, "unordered": AnyOrder,
		"EXACT": Exact, "IN_ORDER": InOrder, "ANY_ORDER": Superset,
	} {
		got, err := ParseMode(name)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, bad := range []string{"", "Exact", "inorder", "SUBSET"} {
		if _, err := ParseMode(bad); err == nil || !strings.Contains(err.Error(), "unknown mode") {
			t.Errorf("ParseMode(%q) = %v, want an unknown-mode error", bad, err)
		}
	}
}

func TestMatch(t *testing.T) {
	ol, ri := Step{Name: "orders_lookup"}, Step{Name: "refunds_issue"}
	positive := Step{Name: "refunds_issue", Where: "params.amount_cents > 0"}
	for _, tc := range []struct {
		name  string
		mode  Mode
		ref   Reference
		calls []Call
		// amounts are refunds_issue's params.amount_cents by call index (for positive).
		amounts   map[int]int
		pass      bool
		precision float64
		recall    float64
		msg       string
	}{
		// exact
		{name: "exact equal", mode: Exact, ref: Names("a", "b", "c"), calls: seq("a", "b", "c"), pass: true, precision: 1, recall: 1},
		{
			name: "exact extra between", mode: Exact, ref: Names("a", "b"), calls: seq("a", "x", "b"), precision: 2.0 / 3, recall: 1,
			msg: "expected b after a, saw x",
		},
		{
			name: "exact extra at the end", mode: Exact, ref: Names("a", "b"), calls: seq("a", "b", "b"), precision: 2.0 / 3, recall: 1,
			msg: "expected nothing after b, saw b",
		},
		{
			name: "exact substituted", mode: Exact, ref: Names("a", "b", "c"), calls: seq("a", "x", "c"), precision: 2.0 / 3, recall: 2.0 / 3,
			msg: "expected b after a, saw x",
		},
		{
			name: "exact substituted at the end", mode: Exact, ref: Names("a", "b"), calls: seq("a", "x"), precision: 0.5, recall: 0.5,
			msg: "expected b after a, saw x",
		},
		{
			name: "exact missing at the end", mode: Exact, ref: Names("a", "b"), calls: seq("a"), precision: 1, recall: 0.5,
			msg: "expected b after a, saw no b",
		},
		{
			name: "exact extra first", mode: Exact, ref: Names("a"), calls: seq("x", "a"), precision: 0.5, recall: 1,
			msg: "expected a first, saw x",
		},
		{
			name: "exact empty reference", mode: Exact, ref: nil, calls: seq("x"), precision: 0, recall: 1,
			msg: "expected nothing, saw x",
		},
		{name: "exact empty both", mode: Exact, ref: nil, calls: nil, pass: true, precision: 1, recall: 1},
		{
			name: "exact swapped", mode: Exact, ref: Reference{Single(ol), Single(ri)}, calls: seq("refunds_issue", "orders_lookup"),
			precision: 0.5, recall: 0.5, msg: "expected orders_lookup before refunds_issue, saw refunds_issue first",
		},
		{
			name: "exact parallel group any order", mode: Exact,
			ref:   Reference{Single(Step{Name: "a"}), {Steps: []Step{{Name: "b"}, {Name: "c"}}, Parallel: true}, Single(Step{Name: "d"})},
			calls: seq("a", "c", "b", "d"), pass: true, precision: 1, recall: 1,
		},
		{name: "exact one response unordered", mode: Exact, ref: Names("a", "b", "c"), calls: seq("a", "c+b"), pass: true, precision: 1, recall: 1},
		{
			name: "exact order across responses kept", mode: Exact, ref: Names("a", "b", "c"), calls: seq("a", "c", "b"),
			precision: 2.0 / 3, recall: 2.0 / 3, msg: "expected b before c, saw c first",
		},
		{
			name: "exact optional absent", mode: Exact, ref: Reference{Single(Step{Name: "a"}), Single(Step{Name: "log", Optional: true}), Single(Step{Name: "b"})},
			calls: seq("a", "b"), pass: true, precision: 1, recall: 1,
		},
		{
			name: "exact optional present", mode: Exact, ref: Reference{Single(Step{Name: "a"}), Single(Step{Name: "log", Optional: true}), Single(Step{Name: "b"})},
			calls: seq("a", "log", "b"), pass: true, precision: 1, recall: 1,
		},
		// in_order
		{
			name: "in_order others between", mode: InOrder, ref: Reference{Single(ol), Single(ri)}, calls: seq("orders_lookup", "notes_read", "refunds_issue"),
			pass: true, precision: 2.0 / 3, recall: 1,
		},
		{
			name: "in_order swapped", mode: InOrder, ref: Reference{Single(ol), Single(ri)}, calls: seq("refunds_issue", "orders_lookup"),
			precision: 0.5, recall: 0.5, msg: "expected orders_lookup before refunds_issue, saw refunds_issue first",
		},
		{
			name: "in_order never called", mode: InOrder, ref: Reference{Single(ol), Single(ri)}, calls: seq("orders_lookup", "notes_read"),
			precision: 0.5, recall: 0.5, msg: "expected refunds_issue after orders_lookup, saw no refunds_issue",
		},
		{
			name: "in_order first never called", mode: InOrder, ref: Reference{Single(ol), Single(ri)}, calls: seq("refunds_issue"),
			precision: 1, recall: 0.5, msg: "expected orders_lookup, saw no orders_lookup",
		},
		{
			name: "in_order params hold", mode: InOrder, ref: Reference{Single(ol), Single(positive)}, calls: seq("orders_lookup", "refunds_issue"),
			amounts: map[int]int{1: 1250}, pass: true, precision: 1, recall: 1,
		},
		{
			name: "in_order params do not hold", mode: InOrder, ref: Reference{Single(ol), Single(positive)}, calls: seq("orders_lookup", "refunds_issue"),
			amounts: map[int]int{1: 0}, precision: 0.5, recall: 0.5,
			msg: "expected refunds_issue where params.amount_cents > 0 after orders_lookup, saw refunds_issue once, none where it holds",
		},
		{
			name: "in_order params pick the later call", mode: InOrder, ref: Reference{Single(ol), Single(positive)},
			calls: seq("orders_lookup", "refunds_issue", "refunds_issue"), amounts: map[int]int{1: 0, 2: 500}, pass: true, precision: 2.0 / 3, recall: 1,
		},
		{
			name: "in_order same name, predicates swapped", mode: InOrder,
			ref:   Reference{Single(Step{Name: "w", Where: "city == B"}), Single(Step{Name: "w", Where: "city == P"})},
			calls: seq("w", "w"), amounts: map[int]int{0: 1, 1: 1}, precision: 1, recall: 1, pass: true,
		},
		{
			name: "in_order repeated step too few", mode: InOrder, ref: Names("a", "a"), calls: seq("a", "b"),
			precision: 0.5, recall: 0.5, msg: "expected a 2 times, saw it once",
		},
		{
			name: "in_order optional does not steal", mode: InOrder, ref: Reference{Single(Step{Name: "a", Optional: true}), Single(Step{Name: "b"}), Single(Step{Name: "a"})},
			calls: seq("b", "a"), pass: true, precision: 1, recall: 1,
		},
		// any_order (agentevals unordered)
		{name: "any_order permutation", mode: AnyOrder, ref: Names("a", "b", "c"), calls: seq("c", "a", "b"), pass: true, precision: 1, recall: 1},
		{
			name: "any_order extra", mode: AnyOrder, ref: Names("a", "b"), calls: seq("b", "a", "x"), precision: 2.0 / 3, recall: 1,
			msg: "saw x, which the reference does not have",
		},
		{
			name: "any_order repeated", mode: AnyOrder, ref: Names("a", "b"), calls: seq("a", "b", "a"), precision: 2.0 / 3, recall: 1,
			msg: "saw a 2 times, the reference has it once",
		},
		{
			name: "any_order missing and extra", mode: AnyOrder, ref: Names("a", "b"), calls: seq("a", "x"), precision: 0.5, recall: 0.5,
			msg: "expected b, saw no b; saw x, which the reference does not have",
		},
		// subset
		{name: "subset fewer", mode: Subset, ref: Names("a", "b", "c"), calls: seq("c", "a"), pass: true, precision: 1, recall: 2.0 / 3},
		{
			name: "subset outside", mode: Subset, ref: Names("a", "b"), calls: seq("a", "x"), precision: 0.5, recall: 0.5,
			msg: "saw x, which the reference does not have",
		},
		{
			name: "subset params", mode: Subset, ref: Reference{Single(positive)}, calls: seq("refunds_issue"), amounts: map[int]int{0: -5},
			precision: 0, recall: 0, msg: "saw refunds_issue where params.amount_cents > 0 does not hold",
		},
		// superset (ADK ANY_ORDER)
		{name: "superset more", mode: Superset, ref: Names("a", "b"), calls: seq("x", "b", "y", "a"), pass: true, precision: 0.5, recall: 1},
		{
			name: "superset missing", mode: Superset, ref: Names("a", "b"), calls: seq("a", "a"), precision: 0.5, recall: 0.5,
			msg: "expected b, saw no b",
		},
		{
			name: "superset parallel", mode: Superset, ref: Reference{{Steps: []Step{{Name: "a"}, {Name: "b"}}, Parallel: true}},
			calls: seq("b", "a"), pass: true, precision: 1, recall: 1,
		},
		{
			name: "superset optional absent", mode: Superset, ref: Reference{Single(Step{Name: "a"}), Single(Step{Name: "b", Optional: true})},
			calls: seq("a"), pass: true, precision: 1, recall: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pred := func(step, call int) bool { return tc.amounts[call] > 0 }
			got := Match(tc.mode, tc.ref, tc.calls, pred)
			if got.Pass != tc.pass || got.Divergence != tc.msg {
				t.Errorf("Match = pass %v, %q; want pass %v, %q", got.Pass, got.Divergence, tc.pass, tc.msg)
			}
			if !near(got.Precision, tc.precision) || !near(got.Recall, tc.recall) {
				t.Errorf("precision %v recall %v, want %v %v", got.Precision, got.Recall, tc.precision, tc.recall)
			}
			wantScore := 0.0
			if tc.precision+tc.recall > 0 {
				wantScore = 2 * tc.precision * tc.recall / (tc.precision + tc.recall)
			}
			if !near(got.Score, wantScore) {
				t.Errorf("score %v, want %v", got.Score, wantScore)
			}
		})
	}
}

func TestReferenceString(t *testing.T) {
	ref := Reference{
		Single(Step{Name: "a"}),
		{Steps: []Step{{Name: "b"}, {Name: "c", Optional: true}}, Parallel: true},
		Single(Step{Name: "d", Where: "params.x == 1"}),
	}
	if got, want := ref.String(), "a, [b | c?], d where params.x == 1"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := len(ref.Steps()); got != 4 {
		t.Errorf("Steps() has %d steps, want 4", got)
	}
}

// The predicate sees steps in Reference.Steps order and calls by index, and only for
// steps with a Where whose name equals the call's.
func TestPredicateIndices(t *testing.T) {
	ref := Reference{Single(Step{Name: "a"}), Single(Step{Name: "b", Where: "w"})}
	calls := seq("a", "b", "b")
	var asked [][2]int
	Match(InOrder, ref, calls, func(step, call int) bool {
		asked = append(asked, [2]int{step, call})
		return call == 2
	})
	if len(asked) != 2 || asked[0] != [2]int{1, 1} || asked[1] != [2]int{1, 2} {
		t.Errorf("predicate asked %v, want [[1 1] [1 2]]", asked)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
