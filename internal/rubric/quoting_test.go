package rubric

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/redact"
	tr "github.com/otelcol-handoff/otelcol-handoff/internal/rules/rulestest"
)

// What the rubric checks quote from a trace must stay recognisable to the redaction the
// exporter applies to every message (redact.Default() here): a piece cut out of a secret
// (the token of "Bearer <token>", the words of an email) or a secret cut short is masked
// by the check itself.

// exported is a message as the exporter writes it: through the redaction policy.
func exported(s string) string { return redact.Default().Redact(s) }

// requireNoSecret fails when msg holds any part of the secrets (letter case aside).
func requireNoSecret(t *testing.T, msg string, parts ...string) {
	t.Helper()
	low := strings.ToLower(msg)
	for _, p := range parts {
		require.NotContains(t, low, strings.ToLower(p), msg)
	}
}

var (
	bearerParts = []string{"tok19", "abcdefGHIJ", "GHIJ-123"}
	errorParts  = []string{"user81", "example com", "example.com", "AKIA81", "QWERTYUIOP"}
)

func edgeOf(t *testing.T, g *agentgraph.Graph, from, to string) *agentgraph.Edge {
	t.Helper()
	for _, e := range g.Edges {
		if e.From.Name == from && e.To.Name == to {
			return e
		}
	}
	t.Fatalf("no handoff %s -> %s", from, to)
	return nil
}

func partNamed(t *testing.T, ps []Part, name string) Part {
	t.Helper()
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no part %q in %v", name, ps)
	return Part{}
}

// TestScopeInventedBearerTokenMasked: the receiver sends an Authorization header its
// sender never gave it. The identifier "tok19.abcdefGHIJ-123" is the token of "Bearer
// <token>": quoted alone it no longer reads as a bearer token, so the check quotes the mask.
func TestScopeInventedBearerTokenMasked(t *testing.T) {
	for _, header := range []string{
		"Authorization: Bearer tok19.abcdefGHIJ-123",
		"Authorization: Bearer\n  tok19.abcdefGHIJ-123", // shown on one line, it reads as one
	} {
		t.Run(header[len(header)-30:], func(t *testing.T) {
			tt := tr.New(0x51)
			planner := tt.Agent(nil, "planner", 0, 100).Input("refund order A-1001")
			dispatch := tt.Tool(planner, "refund_specialist", `{"task": "refund order A-1001"}`, 10, 60)
			refund := tt.Agent(dispatch, "refund_specialist", 11, 59).Input("refund order A-1001").Tools("issue_refund")
			args := `{"order": "A-1001", "headers": ` + jsonString(header) + `}`
			call := tt.Tool(refund, "issue_refund", args, 12, 20).Result("refunded")
			refund.Reply("refunded")
			g := tt.Graph()

			f := NewChecks(nil, nil).Check(Scope, edgeOf(t, g, "planner", "refund_specialist"), NewIndex(g), false)
			p := partNamed(t, f.Parts, "context supplied")
			require.Equal(t, PartFail, p.State, p.Detail)
			msg := exported(p.Detail)
			requireNoSecret(t, msg, bearerParts...)
			require.Equal(t, `refund_specialist used context planner never supplied: "[REDACTED:bearer]" in issue_refund (span `+
				call.SpanID().String()+`) (not in its input, the dispatch, or an earlier result)`, msg)
		})
	}
}

// TestScopeInventedIdentifiersKeptOrMasked: an identifier outside any secret is quoted as
// it is; one that is a secret's part, as the secret's mask.
func TestScopeInventedIdentifiersKeptOrMasked(t *testing.T) {
	args := `{"card": "[refund_tool_args] card 4190 0000 0000 0192 key sk-live-19AbCdEfGhIjKlMn0pQr aws AKIA19QWERTYUIOP1234 ` +
		`auth Bearer tok19.abcdefGHIJ-123 mail user19@example.com", "order": "A-9931"}`
	ids := identifiers(args)
	require.Equal(t, []string{"sk-live-19AbCdEfGhIjKlMn0pQr", "AKIA19QWERTYUIOP1234", "tok19.abcdefGHIJ-123", "user19@example.com", "A-9931"}, ids)
	var shown []string
	for _, id := range ids {
		shown = append(shown, shownIdentifier(id, args))
	}
	require.Equal(t, []string{"[REDACTED:api_key]", "[REDACTED:api_key]", "[REDACTED:bearer]", "[REDACTED:email]", "A-9931"}, shown)
	// The same token outside "Bearer ...", and prose around the word: nothing to mask.
	require.Equal(t, "tok19.abcdefGHIJ-123", shownIdentifier("tok19.abcdefGHIJ-123", `{"ref": "tok19.abcdefGHIJ-123"}`))
	require.Equal(t, "A-1001", shownIdentifier("A-1001", `{"q": "Bearer authentication for A-1001"}`))
	// Not JSON (identifiers come from JSON only): as is.
	require.Equal(t, "A-1", shownIdentifier("A-1", "A-1"))
}

// refundTransfer: triage transfers to refund_specialist (one way), whose refund call fails
// with an error that names the customer's email and an AWS key id; refund_specialist's
// answer, the last word, echoes them.
func refundTransfer(answer string) (*agentgraph.Graph, *tr.Span) {
	tt := tr.New(0x52)
	triage := tt.Agent(nil, "triage", 0, 10)
	tt.Tool(triage, "transfer_to_refund_specialist", `{}`, 5, 6)
	refund := tt.Agent(nil, "refund_specialist", 11, 30).Input("refund order A-1001")
	call := tt.Tool(refund, "issue_refund", `{"order": "A-1001"}`, 12, 20).Error("PaymentError", "user81@example.com AKIA81QWERTYUIOP1234 rejected")
	refund.Reply(answer)
	return tt.Graph(), call
}

// TestRecoverySurfacedWordsMasked: the error's words found in the answer are quoted as the
// evidence; the words of the email and the key id are quoted as their masks, not
// lower-cased and space-joined ("user81 example com akia81qwertyuiop1234"), which no
// detector recognises.
func TestRecoverySurfacedWordsMasked(t *testing.T) {
	g, call := refundTransfer("Refund for user81@example.com: AKIA81QWERTYUIOP1234 rejected.")
	f := NewChecks(nil, nil).Check(Recovery, edgeOf(t, g, "triage", "refund_specialist"), NewIndex(g), false)
	require.NotEmpty(t, f.Parts)
	p := f.Parts[0]
	require.Equal(t, PartPass, p.State, p.Detail)
	msg := exported(p.Detail)
	requireNoSecret(t, msg, errorParts...)
	require.Equal(t, `issue_refund (span `+call.SpanID().String()+`) failed ("PaymentError: [REDACTED:email] [REDACTED:api_key] rejected"); `+
		`refund_specialist surfaced it in its answer ("[REDACTED:email] [REDACTED:api_key] rejected")`, msg)
}

// TestSurfacesEvidence: the evidence keeps the error's own spelling of a word that is no
// secret, masks (once per run of masked words) those that are part of one, in the error
// or in the answer, and a failure word inside a secret is no report of the failure.
func TestSurfacesEvidence(t *testing.T) {
	err := &agentgraph.ErrorInfo{Type: "PaymentError", Message: "user81@example.com AKIA81QWERTYUIOP1234 rejected"}
	ev, ok := surfaces("Refund for user81@example.com: AKIA81QWERTYUIOP1234 rejected.", err, "refund order A-1001")
	require.True(t, ok)
	require.Equal(t, "[REDACTED:email] [REDACTED:api_key] rejected", ev)

	// The answer spells the key id in lower case: the error's words are still masked.
	ev, ok = surfaces("user81@example.com akia81qwertyuiop1234 rejected", err, "")
	require.True(t, ok)
	requireNoSecret(t, exported(quote(ev, 40)), errorParts...)

	ev, ok = surfaces("Atlantis is an unknown city", &agentgraph.ErrorInfo{Message: "weather service: unknown city Atlantis"}, "weather for Paris and Atlantis")
	require.True(t, ok)
	require.Equal(t, "unknown city", ev)
	ev, ok = surfaces("There is no city called Atlantis here, it is unknown", &agentgraph.ErrorInfo{Message: "Unknown City: Atlantis"}, "weather")
	require.True(t, ok)
	require.Equal(t, "Unknown City Atlantis", ev, "the error's own spelling")

	// "error" inside an email address reports nothing.
	_, ok = surfaces("Write to error.desk@example.com about it.", &agentgraph.ErrorInfo{Message: "card expired"}, "")
	require.False(t, ok)
	ev, ok = surfaces("An error occurred.", &agentgraph.ErrorInfo{Message: "card expired"}, "")
	require.True(t, ok)
	require.Equal(t, "error", ev)
}

// TestQuoteRedactsBeforeCutting: content is masked before it is cut at n bytes, so a
// secret that straddles the cut is not left as a prefix too short for any detector.
func TestQuoteRedactsBeforeCutting(t *testing.T) {
	pad := strings.Repeat("x", 70)
	for _, tt := range []struct{ in, secret string }{
		// Cut at 80 bytes, each leaves a few characters of the secret that no detector reads
		// as one: "AKIA8…", "Bearer to…", "eyJhbGciO…".
		{"PaymentError: " + pad[:60] + " AKIA81QWERTYUIOP1234 rejected", "AKIA8"},
		{"PaymentError: " + pad[:56] + " Bearer tok19.abcdefGHIJ-123", "Bearer to"},
		{pad + " eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhb"},
	} {
		for _, q := range []string{quote(tt.in, 80), code(tt.in, 80)} {
			msg := exported(q)
			require.NotContains(t, msg, tt.secret, msg)
			require.Contains(t, msg, "[REDACTED", msg)
			require.LessOrEqual(t, len(q), 80+len("[REDACTED:api_key]…")+2, q)
		}
	}
	// A mask is never cut in the middle.
	require.Equal(t, `"`+pad+` [REDACTED:api_key]"`, quote(pad+" sk-live-19AbCdEfGhIjKlMn0pQr", 80))
	require.Equal(t, `"`+pad+` [REDACTED:api_key]…"`, quote(pad+" sk-live-19AbCdEfGhIjKlMn0pQr and more", 80))
	// Nothing to mask: as before.
	require.Equal(t, `"a b c"`, quote("a\n b\tc", 80))
	require.Equal(t, `"`+strings.Repeat("y", 10)+`…"`, quote(strings.Repeat("y", 30), 10))
}
