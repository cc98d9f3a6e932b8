package cluster

import (
	"sort"
	"time"
)

// MaxGroups bounds the signatures a Grouper keeps: failures of further signatures are
// counted per cluster (Summary.Unlisted), not listed.
const MaxGroups = 1000

// Representatives is how many trace ids a group names: the earliest ones (by trace start,
// then trace id), so the choice does not depend on arrival order.
const Representatives = 3

// Failure is one failing result as the grouping sees it.
type Failure struct {
	Key
	// Signature is the failure's signature when its evaluator stamped one (empty: Key's).
	Signature string
	TraceID   string
	// Seen is when the failure's trace started (zero when unknown).
	Seen time.Time
}

// Group is every failure of one signature.
type Group struct {
	Cluster   Name   `json:"cluster"`
	Signature string `json:"signature"`
	Case      string `json:"case"`
	Step      string `json:"step"`
	From      string `json:"from,omitempty"`
	To        string `json:"to,omitempty"`
	// Message is the normalized message (Normalize) of the group's first failure.
	Message string `json:"message"`
	// Count is the number of failures; Traces the number of distinct traces they are on.
	Count  int `json:"count"`
	Traces int `json:"traces"`
	// FirstSeen and LastSeen are the starts of the earliest and latest trace (omitted when
	// no trace start was known).
	FirstSeen *time.Time `json:"first_seen,omitempty"`
	LastSeen  *time.Time `json:"last_seen,omitempty"`
	// TraceIDs are up to Representatives trace ids, earliest first.
	TraceIDs []string `json:"trace_ids"`
	// ImmediateFix is the cluster's hint with the group's agents filled in.
	ImmediateFix string `json:"immediate_fix"`
}

// Total is the failures of one cluster.
type Total struct {
	Cluster    Name `json:"cluster"`
	Count      int  `json:"count"`
	Signatures int  `json:"signatures"`
	// Unlisted counts failures of signatures beyond MaxGroups.
	Unlisted int `json:"unlisted,omitempty"`
	// ImmediateFix is the cluster's hint (FixFor with no agents).
	ImmediateFix string `json:"immediate_fix"`
}

// Summary is the grouping of a run's failures.
type Summary struct {
	// Clusters are the clusters with at least one failure, in catalogue order.
	Clusters []Total `json:"clusters"`
	// Groups are the signatures, by cluster in catalogue order, then by count (most first),
	// then by signature.
	Groups []Group `json:"groups"`
}

// Grouper groups failures by signature. It is not safe for concurrent use; its output does
// not depend on the order failures were added in.
type Grouper struct {
	groups   map[string]*group
	unlisted map[Name]int
}

type group struct {
	Group
	// earliest are the distinct traces seen at their earliest, kept for the representatives.
	earliest []seen
	traces   map[string]bool
	// first is the key the group's message and agents come from: the least (by trace
	// start, then trace id) failure, so the output does not depend on arrival order.
	first seen
}

type seen struct {
	at    time.Time
	trace string
}

func (a seen) before(b seen) bool {
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.trace < b.trace
}

// NewGrouper returns an empty Grouper.
func NewGrouper() *Grouper {
	return &Grouper{groups: map[string]*group{}, unlisted: map[Name]int{}}
}

// Add counts one failure.
func (gr *Grouper) Add(f Failure) {
	f.Cluster = f.Cluster.Or()
	sig := f.Signature
	if sig == "" {
		sig = f.Key.Signature()
	}
	g := gr.groups[sig]
	at := seen{f.Seen, f.TraceID}
	if g == nil {
		if len(gr.groups) >= MaxGroups {
			gr.unlisted[f.Cluster]++
			return
		}
		g = &group{Group: Group{Cluster: f.Cluster, Signature: sig}, traces: map[string]bool{}, first: at}
		g.setFirst(f)
		gr.groups[sig] = g
	} else if at.before(g.first) {
		g.first = at
		g.setFirst(f)
	}
	g.Count++
	if !f.Seen.IsZero() {
		if g.FirstSeen == nil || f.Seen.Before(*g.FirstSeen) {
			t := f.Seen
			g.FirstSeen = &t
		}
		if g.LastSeen == nil || f.Seen.After(*g.LastSeen) {
			t := f.Seen
			g.LastSeen = &t
		}
	}
	if !g.traces[f.TraceID] {
		g.traces[f.TraceID] = true
		g.Traces++
		g.earliest = append(g.earliest, at)
		sort.Slice(g.earliest, func(i, j int) bool { return g.earliest[i].before(g.earliest[j]) })
		if len(g.earliest) > Representatives {
			g.earliest = g.earliest[:Representatives]
		}
	}
}

func (g *group) setFirst(f Failure) {
	g.Case, g.Step, g.From, g.To = f.Case, f.Step, f.From, f.To
	g.Message = Normalize(f.Message)
	g.ImmediateFix = FixFor(f.Cluster, f.From, f.To)
}

// Summary returns the groups and the totals per cluster.
func (gr *Grouper) Summary() Summary {
	s := Summary{Clusters: []Total{}, Groups: []Group{}}
	totals := map[Name]*Total{}
	total := func(n Name) *Total {
		t := totals[n]
		if t == nil {
			t = &Total{Cluster: n, ImmediateFix: FixFor(n, "", "")}
			totals[n] = t
		}
		return t
	}
	for _, g := range gr.groups {
		out := g.Group
		out.TraceIDs = make([]string, len(g.earliest))
		for i, e := range g.earliest {
			out.TraceIDs[i] = e.trace
		}
		s.Groups = append(s.Groups, out)
		t := total(g.Cluster)
		t.Count += g.Count
		t.Signatures++
	}
	for n, c := range gr.unlisted {
		t := total(n)
		t.Count += c
		t.Unlisted += c
	}
	sort.Slice(s.Groups, func(i, j int) bool {
		a, b := s.Groups[i], s.Groups[j]
		if ra, rb := a.Cluster.rank(), b.Cluster.rank(); ra != rb {
			return ra < rb
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Signature < b.Signature
	})
	for _, n := range Names() {
		if t := totals[n]; t != nil {
			s.Clusters = append(s.Clusters, *t)
		}
	}
	return s
}
