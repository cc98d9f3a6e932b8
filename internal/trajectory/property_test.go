package trajectory

import (
	"math/rand/v2"
	"testing"
)

// Properties of every mode on random references and sequences (a fixed seed): scores in
// range, the modes' implications (exact ⇒ in_order ⇒ superset; any_order ⇔ subset and
// superset without optional steps), a divergence exactly when failing, and ordered
// alignments that keep the order.
func TestMatchProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "c", "d"}
	for n := 0; n < 3000; n++ {
		var ref Reference
		optional := false
		for i := r.IntN(5); i >= 0; i-- {
			e := Element{Parallel: r.IntN(4) == 0}
			for k := 1 + r.IntN(2); k > 0; k-- {
				s := Step{Name: names[r.IntN(len(names))], Optional: r.IntN(5) == 0}
				optional = optional || s.Optional
				e.Steps = append(e.Steps, s)
				if !e.Parallel {
					break
				}
			}
			ref = append(ref, e)
		}
		var calls []Call
		resp := 0
		for i := r.IntN(7); i > 0; i-- {
			if r.IntN(3) > 0 {
				resp++
			}
			calls = append(calls, Call{Name: names[r.IntN(len(names))], Response: resp})
		}
		res := map[Mode]Result{}
		for _, m := range Modes {
			got := Match(m, ref, calls, nil)
			res[m] = got
			if got.Precision < 0 || got.Precision > 1 || got.Recall < 0 || got.Recall > 1 || got.Score < 0 || got.Score > 1 {
				t.Fatalf("%s %v %v: out of range %+v", m, ref, calls, got)
			}
			if got.Pass == (got.Divergence != "") {
				t.Fatalf("%s %v %v: pass %v with divergence %q", m, ref, calls, got.Pass, got.Divergence)
			}
			if m.ordered() {
				checkOrder(t, ref, calls, got.Pairs)
			}
		}
		implies := func(a, b Mode) {
			if res[a].Pass && !res[b].Pass {
				t.Fatalf("%v %v: %s passes (%+v) but %s fails: %s", ref, calls, a, res[a], b, res[b].Divergence)
			}
		}
		implies(Exact, InOrder)
		implies(InOrder, Superset)
		implies(AnyOrder, Subset)
		implies(AnyOrder, Superset)
		if !optional {
			implies(Exact, AnyOrder)
			if res[Subset].Pass && res[Superset].Pass && !res[AnyOrder].Pass {
				t.Fatalf("%v %v: subset and superset pass, any_order fails: %s", ref, calls, res[AnyOrder].Divergence)
			}
		}
	}
}

// checkOrder: no two aligned pairs are crossed, beyond what parallel groups and one
// response's calls allow.
func checkOrder(t *testing.T, ref Reference, calls []Call, pairs []int) {
	t.Helper()
	var elem []int
	for ei, e := range ref {
		for range e.Steps {
			elem = append(elem, ei)
		}
	}
	group := func(j int) int {
		if calls[j].Response < 0 {
			return -1 - j
		}
		return calls[j].Response
	}
	for i1, j1 := range pairs {
		for i2, j2 := range pairs {
			if j1 < 0 || j2 < 0 || elem[i1] >= elem[i2] || group(j1) == group(j2) {
				continue
			}
			if j1 > j2 {
				t.Fatalf("%v %v: step %d before step %d, but their calls %d and %d are crossed (%v)", ref, calls, i1, i2, j1, j2, pairs)
			}
		}
	}
}
