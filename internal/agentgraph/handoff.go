package agentgraph

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
)

// Attribute keys of the HANDOFF span (traceAI's schema from seed 004, plus provenance).
const (
	AttrSource         = "handoff.source"
	AttrTarget         = "handoff.target"
	AttrSourceSpanID   = "handoff.source.span_id"
	AttrTargetSpanID   = "handoff.target.span_id"
	AttrSourceTraceID  = "handoff.source.trace_id"
	AttrDetection      = "handoff.detection"
	AttrInferred       = "handoff.inferred"
	AttrScopePrompt    = "handoff.scope_prompt"
	AttrAllowedTools   = "handoff.allowed_tools"
	AttrContextSummary = "handoff.context_summary"
	AttrReason         = "handoff.reason"
	AttrReturnValue    = "handoff.return_value"
	AttrError          = "handoff.error"
	AttrReceiverErrors = "handoff.receiver.errors"
	AttrParentID       = "handoff.parent_id"
	// AttrTransferMode is the draft GenAI gen_ai.transfer.mode of the dispatch
	// (return_to_caller | pass_control), when the framework recorded one.
	AttrTransferMode = "handoff.transfer_mode"
	// AttrSpanKind marks the span for traceAI-style consumers (fi.span.kind = HANDOFF).
	AttrSpanKind = "fi.span.kind"
	// SourceSuffix is appended to a content key to name the chain place it came from;
	// TriedSuffix lists the places tried when none held a value (source "none").
	SourceSuffix = ".source"
	TriedSuffix  = ".tried"
)

// Attributes the handoff processor writes on the spans it forwards; the assertion exporter
// reads them.
const (
	// AttrTraceComplete (false) and AttrReleaseReason mark the root span (or, without one,
	// the earliest span) of a trace released before it was complete.
	AttrTraceComplete = "handoff.trace.complete"
	AttrReleaseReason = "handoff.trace.release_reason"
	// AttrLateSpan marks spans forwarded outside their trace: late ones, and any that
	// arrived while the processor was not running. The exporter does not judge them again;
	// a handoff processor further down that assembles them into a trace of its own hands
	// them over as part of that trace (BatchTraces).
	AttrLateSpan = "handoff.late_span"
	// AttrInvalidTraceID marks spans whose trace id is all zeros: they belong to no trace,
	// so they are forwarded as they come, never assembled, and must not be judged.
	AttrInvalidTraceID = "handoff.invalid_trace_id"
)

// ContentMode is what a HANDOFF span carries of the content it copies.
type ContentMode string

// Content modes.
const (
	// ContentRedact copies content with what the redaction policy finds masked (the zero
	// value, and the processor's default).
	ContentRedact ContentMode = "redact"
	// ContentCopy copies content as it is.
	ContentCopy ContentMode = "copy"
	// ContentOmit writes no content attribute (nor an error message), only where the
	// content came from (<key>.source, <key>.tried).
	ContentOmit ContentMode = "omit"
)

// ContentPolicy decides what of the agents' content HANDOFF spans carry. It never touches
// the user's own spans: content is masked in the copy written on the HANDOFF span.
type ContentPolicy struct {
	// Mode is redact ("" too), copy or omit.
	Mode ContentMode
	// MaxBytes caps each content attribute (0 = no limit); cut at a UTF-8 boundary.
	MaxBytes int
	// Redactor masks content in redact mode (nil: redact.Default(), the built-in
	// detectors).
	Redactor *redact.Policy
}

// Omits reports whether content attributes are left out.
func (p ContentPolicy) Omits() bool { return p.Mode == ContentOmit }

// Apply redacts (in redact mode) and caps one content value. Invalid UTF-8 becomes U+FFFD
// first, so the cap (cut back to a rune start) holds on the text that is written.
func (p ContentPolicy) Apply(s string) string {
	if !utf8.ValidString(s) { // valid text (nearly all) is checked 8 ASCII bytes at a time
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if p.Mode != ContentCopy {
		s = p.Redactor.Redact(s)
	}
	if p.MaxBytes > 0 && len(s) > p.MaxBytes {
		cut := p.MaxBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// HandoffSpanID is the deterministic span id of the HANDOFF span of the edge into the
// receiver span: a replay or a second collector produces the same id.
func HandoffSpanID(traceID pcommon.TraceID, receiver pcommon.SpanID) pcommon.SpanID {
	// sha256(trace id, receiver span id, "handoff"), hashed from one array on the stack.
	const salt = "handoff"
	var in [len(traceID) + len(receiver) + len(salt)]byte
	copy(in[copy(in[:], traceID[:]):], receiver[:])
	copy(in[len(traceID)+len(receiver):], salt)
	sum := sha256.Sum256(in[:])
	var id pcommon.SpanID
	copy(id[:], sum[:])
	if id.IsEmpty() {
		id[7] = 1
	}
	return id
}

// handoffSpanID is the id of the span that stands for e: the explicit handoff span when the
// framework emitted one, else the synthesized one.
func handoffSpanID(g *Graph, e *Edge) pcommon.SpanID {
	if e.Via != nil && e.Via.Role == RoleHandoff {
		return e.Via.ID
	}
	return HandoffSpanID(g.TraceID, e.To.Span.ID)
}

// HandoffSpanIDOf is the span id of the HANDOFF span that stands for edge e of g: the
// framework's own handoff span, else the one AppendHandoffs synthesizes.
func (g *Graph) HandoffSpanIDOf(e *Edge) pcommon.SpanID { return handoffSpanID(g, e) }

// AppendHandoffs adds one HANDOFF span per edge of g to dst, or enriches the framework's own
// handoff span where one exists (never a twin). It returns the number of spans added.
func AppendHandoffs(g *Graph, dst ptrace.Traces, policy ContentPolicy) int {
	added := 0
	// The HANDOFF scope of each resource the new spans go under (a trace has few: the map
	// stays on the stack).
	scopes := make(map[pcommon.Resource]ptrace.SpanSlice)
	for _, e := range g.Edges {
		if e.Via != nil && e.Via.Role == RoleHandoff {
			fillHandoff(g, e, e.Via.Pdata, policy, false)
			continue
		}
		res := e.From.Span.Resource
		if e.From.Remote != nil {
			res = e.To.Span.Resource // the sender's resource is in the other trace
		}
		spans, found := scopes[res]
		if !found {
			rs := dst.ResourceSpans().AppendEmpty()
			res.CopyTo(rs.Resource())
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(ScopeName)
			spans = ss.Spans()
			scopes[res] = spans
		}
		sp := spans.AppendEmpty()
		sp.SetTraceID(g.TraceID)
		sp.SetSpanID(handoffSpanID(g, e))
		if e.From.Remote != nil {
			// A parent in another trace would orphan the span here: keep the receiver's
			// parent and point at the sender with a link.
			sp.SetParentSpanID(e.To.Span.ParentID)
			l := sp.Links().AppendEmpty()
			l.SetTraceID(e.From.Remote.TraceID)
			l.SetSpanID(e.From.Remote.SpanID)
		} else {
			sp.SetParentSpanID(e.From.Span.ID)
		}
		sp.SetName("handoff " + e.From.Name + " -> " + e.To.Name)
		sp.SetKind(ptrace.SpanKindInternal)
		sp.SetStartTimestamp(e.To.Span.Pdata.StartTimestamp())
		sp.SetEndTimestamp(e.To.Span.Pdata.EndTimestamp())
		fillHandoff(g, e, sp, policy, true)
		added++
	}
	return added
}

// handoffAttrCount is how many attributes fillHandoff writes on a new span for e: its
// attribute slice is made that long at once, not grown 1, 2, 4, … slots nor left with
// unused room.
func handoffAttrCount(e *Edge, prompt Value, hasError bool, policy ContentPolicy) int {
	value := func(v Value) int {
		if v.Found() && policy.Omits() {
			return 1 // <key>.source
		}
		return 2 // the content and <key>.source, or <key>.source and <key>.tried
	}
	// kind, source, target, both span ids, detection, inferred, receiver errors
	n := 8 + value(prompt) + value(e.To.Output)
	if e.From.Remote != nil {
		n += 2
	}
	if e.To.AllowedTools != nil {
		n += 2
	}
	if e.Context.Found() {
		n += value(e.Context)
	}
	if e.Reason.Found() {
		n += value(e.Reason)
	}
	if e.Mode != "" {
		n++
	}
	if hasError {
		n++
	}
	if e.From.In != nil {
		n++
	}
	if sub := e.To.Subtree; sub.LLMCalls > 0 || sub.CostUSD > 0 || len(sub.UnpricedModels) > 0 {
		n += 2
		if len(sub.UnpricedModels) > 0 {
			n++
		}
	}
	return n
}

// contentKey names a content attribute and the attributes that say where it came from.
type contentKey struct{ content, source, tried string }

// The content attributes' keys, joined once (not per span).
var (
	keyScopePrompt    = contentKey{AttrScopePrompt, AttrScopePrompt + SourceSuffix, AttrScopePrompt + TriedSuffix}
	keyContextSummary = contentKey{AttrContextSummary, AttrContextSummary + SourceSuffix, AttrContextSummary + TriedSuffix}
	keyReason         = contentKey{AttrReason, AttrReason + SourceSuffix, AttrReason + TriedSuffix}
	keyReturnValue    = contentKey{AttrReturnValue, AttrReturnValue + SourceSuffix, AttrReturnValue + TriedSuffix}
)

// fillHandoff writes the HANDOFF attributes. On a framework's own span (overwrite=false)
// it only adds what is missing.
func fillHandoff(g *Graph, e *Edge, sp ptrace.Span, policy ContentPolicy, overwrite bool) {
	attrs := sp.Attributes()
	prompt := scopePrompt(e)
	errInfo := handoffError(e)
	if overwrite {
		attrs.EnsureCapacity(attrs.Len() + handoffAttrCount(e, prompt, errInfo != nil, policy))
	}
	// missing: the key is to be written (on a new span every key is; no lookup).
	missing := func(key string) bool {
		if overwrite {
			return true
		}
		_, exists := attrs.Get(key)
		return !exists
	}
	put := func(key, val string) {
		if missing(key) {
			attrs.PutStr(key, val)
		}
	}
	putValue := func(key contentKey, v Value) {
		if v.Found() {
			if !policy.Omits() {
				put(key.content, policy.Apply(v.Text))
			}
			put(key.source, v.Source)
			return
		}
		put(key.source, SourceNone)
		if missing(key.tried) {
			tried := attrs.PutEmptySlice(key.tried)
			tried.EnsureCapacity(len(v.Tried))
			for _, t := range v.Tried {
				tried.AppendEmpty().SetStr(t)
			}
		}
	}
	put(AttrSpanKind, "HANDOFF")
	put(AttrSource, e.From.Name)
	put(AttrTarget, e.To.Name)
	put(AttrSourceSpanID, spanIDHex(e.From.Span.ID))
	if e.From.Remote != nil {
		put(AttrSourceTraceID, e.From.Remote.TraceID.String())
		put(AttrSourceResolution, e.From.Remote.Resolution)
	}
	put(AttrTargetSpanID, spanIDHex(e.To.Span.ID))
	put(AttrDetection, e.Detection)
	if missing(AttrInferred) {
		attrs.PutBool(AttrInferred, e.Inferred)
	}
	putValue(keyScopePrompt, prompt)
	if e.To.AllowedTools != nil {
		if missing(AttrAllowedTools) {
			tools := attrs.PutEmptySlice(AttrAllowedTools)
			tools.EnsureCapacity(len(e.To.AllowedTools))
			for _, t := range e.To.AllowedTools {
				tools.AppendEmpty().SetStr(t)
			}
			put(AttrAllowedTools+SourceSuffix, e.To.AllowedFrom)
		}
	}
	if e.Context.Found() {
		putValue(keyContextSummary, e.Context)
	}
	if e.Reason.Found() {
		putValue(keyReason, e.Reason)
	}
	if e.Mode != "" {
		put(AttrTransferMode, e.Mode)
	}
	putValue(keyReturnValue, e.To.Output)
	if errInfo != nil {
		shown := *errInfo
		if policy.Omits() {
			shown.Message = "" // content: the type and source stay
		}
		b, _ := json.Marshal(shown)
		put(AttrError, policy.Apply(string(b)))
		if overwrite {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage(policy.Apply(shown.Message))
		}
	}
	if missing(AttrReceiverErrors) {
		attrs.PutInt(AttrReceiverErrors, int64(e.To.Subtree.Errors))
	}
	if e.From.In != nil {
		put(AttrParentID, spanIDHex(handoffSpanID(g, e.From.In)))
	}
	if sub := e.To.Subtree; sub.LLMCalls > 0 || sub.CostUSD > 0 || len(sub.UnpricedModels) > 0 {
		if missing(AttrCostUSD) {
			attrs.PutDouble(AttrCostUSD, sub.CostUSD)
			attrs.PutBool(AttrCostComplete, len(sub.UnpricedModels) == 0)
			if len(sub.UnpricedModels) > 0 {
				list := attrs.PutEmptySlice(AttrUnpricedModels)
				list.EnsureCapacity(len(sub.UnpricedModels))
				for _, u := range sub.UnpricedModels {
					list.AppendEmpty().SetStr(u)
				}
			}
		}
	}
}

// spanIDHex is id.String() (16 lowercase hex digits, "" for the empty id) in one
// allocation.
func spanIDHex(id pcommon.SpanID) string {
	if id.IsEmpty() {
		return ""
	}
	var b [16]byte
	hex.Encode(b[:], id[:])
	return string(b[:])
}

// handoffError is the error of the round trip: the receiver's own span, else the span
// that carried the dispatch.
func handoffError(e *Edge) *ErrorInfo {
	if e.To.Span.Error != nil {
		return e.To.Span.Error
	}
	if e.Via != nil && e.Via.Error != nil {
		return e.Via.Error
	}
	return nil
}
