package agentgraph

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Chains compiled to key → slot maps. resolve walks a chain place by place, and each
// attribute place is a pcommon.Map.Get: a scan over the span's attributes. Build resolves
// a dozen chains per span, so it instead compiles the chains once (compiledFor, cached per
// Chains) into one table of the attribute keys they name, walks each span's attributes
// once (attrIndex.add) recording which of those keys it holds, and then resolves every
// chain from the recorded values (attrIndex.resolve), with resolve's exact precedence: the
// first place of the chain that holds a usable value wins, llm: places on the LLM child,
// event:, KEY#a.b and PREFIX.* places read as resolve reads them. slots_test.go checks
// that both agree on every span of every capture and corpus trace.

// Attribute keys the builder reads outside the chains, through the same index (fixedKeys
// lists them in this order; their ids come first in every keyTable).
const (
	fkErrorMessage = iota
	fkToolStatus
	fkOutputValue
	fkToolType
	fkTransferTarget
	fkHandoffTarget
	fkTransferMode
	fkLangGraphNode
	fkMetadata
	fkCallID // callIDKeys[i] is fkCallID+i
)

var fixedKeys = append([]string{
	fkErrorMessage: "error.message", fkToolStatus: "gen_ai.tool.status", fkOutputValue: "output.value",
	fkToolType: "gen_ai.tool.type", fkTransferTarget: "gen_ai.transfer.target.name",
	fkHandoffTarget: "gen_ai.agent.handoff.target.name", fkTransferMode: "gen_ai.transfer.mode",
	fkLangGraphNode: "langsmith.metadata.langgraph_node", fkMetadata: "metadata",
}, callIDKeys...)

// keyTable maps attribute keys to dense ids: open addressing on a hash of a key's length
// and three of its bytes, cheaper than a Go map's hash of the whole key for the keys a
// span holds and no chain names, which are most of them.
type keyTable struct {
	keys  []string // by id
	slots []int32  // id+1, 0 when free; len a power of two
	ids   map[string]int32
}

func keyHash(k string) uint32 {
	n := len(k)
	if n == 0 {
		return 0
	}
	h := uint32(n)*0x9e3779b1 ^ uint32(k[n-1])*0x85ebca77 ^ uint32(k[n/2])*0xc2b2ae3d ^ uint32(k[n/3])*0x27d4eb2f
	return h ^ h>>15
}

// id is the id of key, or -1 when the table does not hold it.
func (t *keyTable) id(k string) int32 {
	mask := uint32(len(t.slots) - 1)
	for i := keyHash(k) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if t.keys[s-1] == k {
			return s - 1
		}
	}
}

// add gives key an id (its existing one when it has one).
func (t *keyTable) add(k string) int32 {
	if id, ok := t.ids[k]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[string]int32{}
	}
	id := int32(len(t.keys))
	t.keys, t.ids[k] = append(t.keys, k), id
	return id
}

// seal builds the hash slots once every key is added.
func (t *keyTable) seal() {
	n := 16
	for n < 4*len(t.keys) {
		n *= 2
	}
	t.slots = make([]int32, n)
	mask := uint32(n - 1)
	for id, k := range t.keys {
		i := keyHash(k) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(id + 1)
	}
}

// Kinds of compiled places.
const (
	placeAttr  = iota // KEY
	placePath         // KEY#a.b (text chains) or KEY#FIELD (integer chains)
	placeFlat         // PREFIX.*
	placeEvent        // event:NAME:KEY
	placeNever        // event:NAME without a key: never holds a value
)

// slotPlace is one compiled place of a chain.
type slotPlace struct {
	src  string // the place as written: the Source of a value found there
	llm  bool   // looked up on the LLM child
	kind uint8
	key  int32  // placeAttr, placePath: the attribute key's id
	a, b string // placePath: -, the path; placeFlat: "PREFIX."; placeEvent: NAME, KEY
}

// slotChain is a chain compiled for attrIndex.resolve (text) or resolveInt (integer).
type slotChain struct {
	chain  Chain
	places []slotPlace
}

// compileText compiles a chain as resolve reads it.
func compileText(t *keyTable, chain Chain) slotChain {
	c := slotChain{chain: chain, places: make([]slotPlace, len(chain))}
	for i, place := range chain {
		p := slotPlace{src: place, key: -1}
		rest := place
		if r, ok := strings.CutPrefix(place, "llm:"); ok {
			p.llm, rest = true, r
		}
		if ev, ok := strings.CutPrefix(rest, "event:"); ok {
			if name, key, ok := strings.Cut(ev, ":"); ok {
				p.kind, p.a, p.b = placeEvent, name, key
			} else {
				p.kind = placeNever
			}
		} else if strings.HasSuffix(rest, ".*") {
			p.kind, p.a = placeFlat, rest[:len(rest)-1]
		} else if key, path, ok := strings.Cut(rest, "#"); ok {
			p.kind, p.key, p.b = placePath, t.add(key), path
		} else {
			p.kind, p.key = placeAttr, t.add(rest)
		}
		c.places[i] = p
	}
	return c
}

// compileInt compiles a chain as resolveInt reads it: KEY#FIELD, else the whole place is
// an attribute key.
func compileInt(t *keyTable, chain Chain) slotChain {
	c := slotChain{chain: chain, places: make([]slotPlace, len(chain))}
	for i, place := range chain {
		p := slotPlace{src: place, kind: placeAttr}
		if h := strings.IndexByte(place, '#'); h >= 0 {
			p.kind, p.b = placePath, place[h+1:]
			place = place[:h]
		}
		p.key = t.add(place)
		c.places[i] = p
	}
	return c
}

// compiledChains are the chains Build resolves per span, compiled.
type compiledChains struct {
	src  Chains // what they were compiled from (withDefaults applied)
	keys keyTable
	// words is the size of a span's key bitset in uint64s.
	words int

	agentName, toolName, toolArgs, toolResult slotChain
	input, output, allowedTools, errorType    slotChain
	handoffFrom, handoffTo, handoffReason     slotChain
	inputTokens, outputTokens                 slotChain
	// The cost chains priceSpan (cost.go) resolves.
	responseModel, requestModel, provider slotChain
	cacheReadTokens, cacheWriteTokens     slotChain
	// role[id] is the role key (classify.go) key id is, or -1.
	role []int8
	// requests are requestPlaces (delegation.go), compiled.
	requests slotChain
	// llmOutput is the output chain's llm: places, read on an LLM span (delegation.go
	// llmOutputPlaces), compiled.
	llmOutput slotChain
}

func compileChains(c Chains) *compiledChains {
	cc := &compiledChains{src: c}
	t := &cc.keys
	for _, k := range fixedKeys {
		t.add(k)
	}
	cc.agentName, cc.toolName = compileText(t, c.AgentName), compileText(t, c.ToolName)
	cc.toolArgs, cc.toolResult = compileText(t, c.ToolArgs), compileText(t, c.ToolResult)
	cc.input, cc.output = compileText(t, c.Input), compileText(t, c.Output)
	cc.allowedTools, cc.errorType = compileText(t, c.AllowedTools), compileText(t, c.ErrorType)
	cc.handoffFrom, cc.handoffTo = compileText(t, c.HandoffFrom), compileText(t, c.HandoffTo)
	cc.handoffReason = compileText(t, c.HandoffReason)
	cc.inputTokens, cc.outputTokens = compileInt(t, c.InputTokens), compileInt(t, c.OutputTokens)
	cc.responseModel, cc.requestModel = compileText(t, c.ResponseModel), compileText(t, c.RequestModel)
	cc.provider = compileText(t, c.Provider)
	cc.cacheReadTokens, cc.cacheWriteTokens = compileInt(t, c.CacheReadTokens), compileInt(t, c.CacheWriteTokens)
	cc.requests = compileText(t, requestPlaces)
	cc.llmOutput = compileText(t, llmOutputPlaces(c))
	for _, k := range roleKeyNames {
		t.add(k)
	}
	cc.seal()
	return cc
}

// seal readies cc for use once every key is in its table.
func (cc *compiledChains) seal() {
	t := &cc.keys
	cc.role = slices.Repeat([]int8{-1}, len(t.keys))
	for i, k := range roleKeyNames {
		if id, ok := t.ids[k]; ok {
			cc.role[id] = int8(i)
		}
	}
	t.seal()
	cc.words = (len(t.keys) + 63) / 64
}

// sameChains reports whether a and b hold the same places (cheap when they share their
// arrays, as the chains of one Options do on every trace).
func sameChains(a, b *Chains) bool {
	fa, fb := a.fields(), b.fields()
	for i := range fa {
		if !slices.Equal(fa[i].chain, fb[i].chain) {
			return false
		}
	}
	return true
}

// compiledCache holds the chains compiled last (most recent first, at most
// maxCompiledChains): a collector has one set per configured processor or exporter.
var compiledCache atomic.Pointer[[]*compiledChains]

const maxCompiledChains = 8

// compiledFor is c compiled, from the cache when the same chains were compiled before.
func compiledFor(c Chains) *compiledChains {
	if list := compiledCache.Load(); list != nil {
		for _, cc := range *list {
			if sameChains(&cc.src, &c) {
				return cc
			}
		}
	}
	// The compiled chains keep their own copy: the caller may change its slices later.
	cc := compileChains(c.clone())
	for {
		old := compiledCache.Load()
		next := []*compiledChains{cc}
		if old != nil {
			next = append(next, (*old)[:min(len(*old), maxCompiledChains-1)]...)
		}
		if compiledCache.CompareAndSwap(old, &next) {
			return cc
		}
	}
}

// attrEntry is one recorded attribute of a span.
type attrEntry struct {
	id int32
	v  pcommon.Value
}

// attrIndex records, for the spans of one Build, which keys of the compiled table each
// span holds (a bitset per span) and their values (the first of duplicate keys, as
// pcommon.Map.Get finds). A span's entries are ents[off[s.ix]:off[s.ix+1]].
type attrIndex struct {
	cc   *compiledChains
	bits []uint64
	ents []attrEntry
	off  []int32
}

var attrIndexPool = sync.Pool{New: func() any { return new(attrIndex) }}

// newAttrIndex is an empty index for spans of cc, its buffers reused from earlier builds.
func newAttrIndex(cc *compiledChains, spans int) *attrIndex {
	ix := attrIndexPool.Get().(*attrIndex)
	ix.cc = cc
	ix.bits = slices.Grow(ix.bits[:0], spans*cc.words)
	ix.off = append(slices.Grow(ix.off[:0], spans+1), 0)
	ix.ents = ix.ents[:0]
	return ix
}

// release returns the index to the pool, holding no pdata (the entries past len were
// cleared when the index was last released).
func (ix *attrIndex) release() {
	clear(ix.ents)
	ix.cc = nil
	attrIndexPool.Put(ix)
}

// add walks s's attributes once, recording the compiled keys it holds, and the role keys
// in ra (nil: not asked); s.ix becomes its number in the index.
func (ix *attrIndex) add(s *Span, ra *roleAttrs) {
	s.ix = int32(len(ix.off) - 1)
	base := len(ix.bits)
	for range ix.cc.words {
		ix.bits = append(ix.bits, 0)
	}
	word := ix.bits[base:]
	t := &ix.cc.keys
	for k, v := range s.Pdata.Attributes().All() {
		id := t.id(k)
		if id < 0 {
			continue
		}
		if r := ix.cc.role[id]; r >= 0 && ra != nil {
			ra.set(int(r), v) // the last of duplicates, as classifyRole always read them
		}
		w, bit := &word[id>>6], uint64(1)<<(id&63)
		if *w&bit != 0 {
			continue // a duplicate key: the first one counts
		}
		*w |= bit
		ix.ents = append(ix.ents, attrEntry{id, v})
	}
	ix.off = append(ix.off, int32(len(ix.ents)))
}

// get is s's value of key id, as s.Pdata.Attributes().Get would find it.
func (ix *attrIndex) get(s *Span, id int32) (pcommon.Value, bool) {
	if ix.bits[int(s.ix)*ix.cc.words+int(id>>6)]&(1<<(id&63)) == 0 {
		return pcommon.Value{}, false
	}
	for _, e := range ix.ents[ix.off[s.ix]:ix.off[s.ix+1]] {
		if e.id == id {
			return e.v, true
		}
	}
	return pcommon.Value{}, false
}

// count is how many keys of the compiled table s holds.
func (ix *attrIndex) count(s *Span) int { return int(ix.off[s.ix+1] - ix.off[s.ix]) }

// attr is attrStr(s.Pdata, fixedKeys[id]), read from the index while Build runs (ix is
// then not nil) and from the span otherwise.
func (ix *attrIndex) attr(s *Span, id int32) string {
	if ix == nil {
		return attrStr(s.Pdata, fixedKeys[id])
	}
	return ix.str(s, id)
}

// str is attrStr(s.Pdata, fixedKeys[id]).
func (ix *attrIndex) str(s *Span, id int32) string {
	if v, ok := ix.get(s, id); ok {
		return asText(v)
	}
	return ""
}

// lookup is lookupPlaceIn for a compiled place on s.
func (ix *attrIndex) lookup(s *Span, p *slotPlace, texts pathTexts) (string, bool) {
	switch p.kind {
	case placeAttr:
		v, ok := ix.get(s, p.key)
		return valueText(v, ok)
	case placePath:
		v, ok := ix.get(s, p.key)
		return pathValueText(v, ok, p.b, texts)
	case placeFlat:
		return flattenedUnder(s.Pdata.Attributes(), p.a)
	case placeEvent:
		return eventText(s.Pdata, p.a, p.b)
	}
	return "", false
}

// resolve is resolveIn(s.Pdata, c.chain, llmChild, texts).
func (ix *attrIndex) resolve(s *Span, c *slotChain, llmChild *Span, texts pathTexts) Value {
	for i := range c.places {
		p := &c.places[i]
		target := s
		if p.llm {
			if llmChild == nil {
				continue
			}
			target = llmChild
		}
		if t, ok := ix.lookup(target, p, texts); ok {
			return Value{Text: t, Source: p.src}
		}
	}
	return Value{Source: SourceNone, Tried: c.chain}
}

// resolveInt is resolveInt(s.Pdata, c.chain) for a chain compiled with compileInt.
func (ix *attrIndex) resolveInt(s *Span, c *slotChain) (int64, string, bool) {
	if ix.count(s) == 0 {
		return 0, "", false
	}
	for i := range c.places {
		p := &c.places[i]
		v, ok := ix.get(s, p.key)
		if !ok {
			continue
		}
		if p.kind == placePath {
			if n, ok := jsonFieldIn(v, p.b); ok {
				return n, p.src, true
			}
			continue
		}
		if n, ok := intValue(v); ok {
			return n, p.src, true
		}
	}
	return 0, "", false
}
