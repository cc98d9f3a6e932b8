package trajectory

import (
	"fmt"
	"slices"
	"strings"
)

// matrix holds which call may align with which step.
type matrix struct {
	steps []Step
	// elem is each step's element index; parallel whether that element is a parallel group.
	elem     []int
	parallel []bool
	calls    []Call
	ok       [][]bool // steps × calls
}

func newMatrix(ref Reference, calls []Call, pred Predicate) *matrix {
	m := &matrix{calls: calls}
	for ei, e := range ref {
		for _, s := range e.Steps {
			m.steps = append(m.steps, s)
			m.elem = append(m.elem, ei)
			m.parallel = append(m.parallel, e.Parallel)
		}
	}
	m.ok = make([][]bool, len(m.steps))
	for i, s := range m.steps {
		m.ok[i] = make([]bool, len(calls))
		for j, c := range calls {
			m.ok[i][j] = c.Name == s.Name && (s.Where == "" || pred == nil || pred(i, j))
		}
	}
	return m
}

// stepOrder is the steps in reference order, each parallel group's steps sorted by the
// first call they may align with (those that align with none keep their written order,
// after the others).
func (m *matrix) stepOrder() []int {
	first := make([]int, len(m.steps))
	for i := range m.steps {
		first[i] = len(m.calls)
		if j := slices.Index(m.ok[i], true); j >= 0 {
			first[i] = j
		}
	}
	order := make([]int, len(m.steps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if m.elem[a] != m.elem[b] {
			return m.elem[a] - m.elem[b]
		}
		if !m.parallel[a] {
			return 0
		}
		return first[a] - first[b]
	})
	return order
}

// callOrder is the calls in their order, each run of calls from one LLM response sorted by
// the first step (in stepOrder) they may align with.
func (m *matrix) callOrder(steps []int) []int {
	pos := make([]int, len(m.calls))
	for j := range m.calls {
		pos[j] = len(m.steps)
		for p, i := range steps {
			if m.ok[i][j] {
				pos[j] = p
				break
			}
		}
	}
	order := make([]int, len(m.calls))
	for j := range order {
		order[j] = j
	}
	for start := 0; start < len(order); {
		end := start + 1
		if r := m.calls[start].Response; r >= 0 {
			for end < len(order) && m.calls[end].Response == r {
				end++
			}
		}
		slices.SortStableFunc(order[start:end], func(a, b int) int { return pos[a] - pos[b] })
		start = end
	}
	return order
}

// ordered is the best order-preserving alignment (a weighted longest common subsequence:
// most required steps first, then most steps) of the steps and calls in their relaxed
// orders; it returns each step's call (-1: none).
func (m *matrix) ordered() []int {
	so := m.stepOrder()
	co := m.callOrder(so)
	n, k := len(so), len(co)
	big := n + k + 1
	w := func(p int) int {
		if m.steps[so[p]].Optional {
			return 1
		}
		return big + 1
	}
	width := k + 1
	dp := make([]int, (n+1)*width)
	for p := n - 1; p >= 0; p-- {
		for q := k - 1; q >= 0; q-- {
			best := max(dp[(p+1)*width+q], dp[p*width+q+1])
			if m.ok[so[p]][co[q]] {
				best = max(best, dp[(p+1)*width+q+1]+w(p))
			}
			dp[p*width+q] = best
		}
	}
	pairs := make([]int, n)
	for i := range pairs {
		pairs[i] = -1
	}
	for p, q := 0, 0; p < n && q < k; {
		switch {
		case m.ok[so[p]][co[q]] && dp[p*width+q] == dp[(p+1)*width+q+1]+w(p):
			pairs[so[p]] = co[q]
			p, q = p+1, q+1
		case dp[p*width+q] == dp[(p+1)*width+q]:
			p++
		default:
			q++
		}
	}
	return pairs
}

// unordered is a maximum one-to-one alignment (augmenting paths), the required steps
// matched first so that no optional step takes a call a required one needs.
func (m *matrix) unordered() []int {
	callStep := make([]int, len(m.calls))
	for j := range callStep {
		callStep[j] = -1
	}
	var seen []bool
	var try func(i int) bool
	try = func(i int) bool {
		for j := range m.calls {
			if !m.ok[i][j] || seen[j] {
				continue
			}
			seen[j] = true
			if callStep[j] < 0 || try(callStep[j]) {
				callStep[j] = i
				return true
			}
		}
		return false
	}
	for _, optional := range []bool{false, true} {
		for i, s := range m.steps {
			if s.Optional == optional {
				seen = make([]bool, len(m.calls))
				try(i)
			}
		}
	}
	pairs := make([]int, len(m.steps))
	for i := range pairs {
		pairs[i] = -1
	}
	for j, i := range callStep {
		if i >= 0 {
			pairs[i] = j
		}
	}
	return pairs
}

// orderedDivergence names the first departure of an ordered alignment: a required step
// left out, or (exact) a call the reference does not have at that point.
func (m *matrix) orderedDivergence(mode Mode, pairs []int) string {
	so := m.stepOrder()
	co := m.callOrder(so)
	at := make([]int, len(m.calls)) // call -> its position in co
	for q, j := range co {
		at[j] = q
	}
	aligned := make([]bool, len(m.calls))
	for _, j := range pairs {
		if j >= 0 {
			aligned[j] = true
		}
	}
	prev, cp := -1, -1 // the last aligned step and its call's position in co
	for p, i := range so {
		j := pairs[i]
		if j < 0 {
			if m.steps[i].Optional {
				continue
			}
			next := -1
			for _, i2 := range so[p+1:] {
				if pairs[i2] >= 0 {
					next = i2
					break
				}
			}
			if mode == Exact && !slices.Contains(m.ok[i], true) {
				// Exact, and no call can align with the step: another tool called in its
				// place (before the next aligned call) is what came instead.
				end := len(co)
				if next >= 0 {
					end = at[pairs[next]]
				}
				for q := cp + 1; q < end; q++ {
					if j := co[q]; !aligned[j] {
						if m.calls[j].Name == m.steps[i].Name {
							break // the step's tool with params that do not hold: say so
						}
						return m.extraAt(i, prev, j)
					}
				}
			}
			return m.missingInOrder(i, prev, next, cp, pairs, at)
		}
		if mode == Exact {
			for q := cp + 1; q < at[j]; q++ {
				if !aligned[co[q]] {
					return m.extraAt(i, prev, co[q])
				}
			}
		}
		prev, cp = i, at[j]
	}
	if mode == Exact {
		for q := cp + 1; q < len(co); q++ {
			if !aligned[co[q]] {
				return m.extraAt(-1, prev, co[q])
			}
		}
	}
	return ""
}

// missingInOrder says why step i found no call in order; prev and next are the aligned
// steps around it (-1: none), cp the position of prev's call.
func (m *matrix) missingInOrder(i, prev, next, cp int, pairs, at []int) string {
	s := m.steps[i]
	if why := m.absent(i); why != "" {
		if prev >= 0 {
			return fmt.Sprintf("expected %s after %s, %s", s.want(), m.steps[prev].Name, why)
		}
		return fmt.Sprintf("expected %s, %s", s.want(), why)
	}
	for j, ok := range m.ok[i] {
		if !ok {
			continue
		}
		if prev >= 0 && at[j] < cp {
			a, b := m.steps[prev].named(s), s.named(m.steps[prev])
			return fmt.Sprintf("expected %s before %s, saw %s first", a, b, b)
		}
		if next >= 0 && at[j] > at[pairs[next]] {
			a, b := s.named(m.steps[next]), m.steps[next].named(s)
			return fmt.Sprintf("expected %s before %s, saw %s first", a, b, b)
		}
	}
	if why := m.tooFew(i); why != "" {
		return why
	}
	return fmt.Sprintf("expected %s after %s, saw it only out of order", s.want(), m.stepName(prev))
}

// extraAt says that call j came where step i (-1: the end) was expected, after prev.
func (m *matrix) extraAt(i, prev, j int) string {
	saw := m.calls[j].Name
	switch {
	case i < 0 && prev < 0:
		return fmt.Sprintf("expected nothing, saw %s", saw)
	case i < 0:
		return fmt.Sprintf("expected nothing after %s, saw %s", m.steps[prev].Name, saw)
	case prev < 0:
		return fmt.Sprintf("expected %s first, saw %s", m.steps[i].want(), saw)
	}
	return fmt.Sprintf("expected %s after %s, saw %s", m.steps[i].want(), m.steps[prev].Name, saw)
}

// unorderedDivergence names the first required step left without a call (in reference
// order) and, where every call must align, the first call left without a step.
func (m *matrix) unorderedDivergence(mode Mode, pairs []int) string {
	var out []string
	if mode.needsRecall() {
		for i, s := range m.steps {
			if pairs[i] >= 0 || s.Optional {
				continue
			}
			if why := m.absent(i); why != "" {
				out = append(out, fmt.Sprintf("expected %s, %s", s.want(), why))
			} else {
				out = append(out, m.tooFew(i))
			}
			break
		}
	}
	if mode.needsPrecision() {
		aligned := make([]bool, len(m.calls))
		for _, j := range pairs {
			if j >= 0 {
				aligned[j] = true
			}
		}
		for j, c := range m.calls {
			if aligned[j] {
				continue
			}
			out = append(out, m.unexpected(j, c))
			break
		}
	}
	return strings.Join(out, "; ")
}

// unexpected says why call j aligned with no step.
func (m *matrix) unexpected(j int, c Call) string {
	named, where := 0, ""
	for i, s := range m.steps {
		if s.Name != c.Name {
			continue
		}
		named++
		if s.Where != "" && !m.ok[i][j] && where == "" {
			where = s.Where
		}
	}
	switch {
	case named == 0:
		return fmt.Sprintf("saw %s, which the reference does not have", c.Name)
	case where != "" && !slices.ContainsFunc(m.steps, func(s Step) bool { return s.Name == c.Name && s.Where == "" }) && !m.okAny(j):
		return fmt.Sprintf("saw %s where %s does not hold", c.Name, where)
	}
	return fmt.Sprintf("saw %s %s, the reference has it %s", c.Name, times(m.count(c.Name)), times(named))
}

// absent says why step i has no candidate at all ("" when some call may align with it).
func (m *matrix) absent(i int) string {
	s := m.steps[i]
	if slices.Contains(m.ok[i], true) {
		return ""
	}
	n := m.count(s.Name)
	if n == 0 {
		return "saw no " + s.Name
	}
	return fmt.Sprintf("saw %s %s, none where it holds", s.Name, times(n))
}

// tooFew says that step i's name is wanted more often than it was seen (with its params).
func (m *matrix) tooFew(i int) string {
	s := m.steps[i]
	want := 0
	for _, t := range m.steps {
		if t.Name == s.Name && !t.Optional {
			want++
		}
	}
	have := 0
	for j := range m.calls {
		if m.ok[i][j] {
			have++
		}
	}
	return fmt.Sprintf("expected %s %s, saw it %s", s.want(), times(want), times(have))
}

func (m *matrix) okAny(j int) bool {
	for i := range m.steps {
		if m.ok[i][j] {
			return true
		}
	}
	return false
}

func (m *matrix) count(name string) int {
	n := 0
	for _, c := range m.calls {
		if c.Name == name {
			n++
		}
	}
	return n
}

func (m *matrix) stepName(i int) string {
	if i < 0 {
		return "the start"
	}
	return m.steps[i].Name
}

// named is the step's name in a message about it and other: with its predicate when both
// have the same name, so that the two can be told apart.
func (s Step) named(other Step) string {
	if s.Name == other.Name {
		return s.want()
	}
	return s.Name
}

// want is the step as an expectation: its name, and its predicate when it has one.
func (s Step) want() string {
	if s.Where != "" {
		return s.Name + " where " + s.Where
	}
	return s.Name
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
