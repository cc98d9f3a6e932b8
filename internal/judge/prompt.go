package judge

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/otelcol-handoff/otelcol-handoff/internal/textsafe"
)

// TemplateVersion names the prompt template in use (prompts/<version>.tmpl). It is part
// of every cache key and shown in reports, so verdicts of different templates are never
// mixed up.
const TemplateVersion = "handoff_v1"

//go:embed prompts/*.tmpl
var promptFiles embed.FS

var prompt = template.Must(template.New(TemplateVersion).ParseFS(promptFiles, "prompts/"+TemplateVersion+".tmpl"))

// Field is one piece of captured content shown to the judge, e.g. scope_prompt.
type Field struct {
	Name string
	Text string
}

// Request is one grading: a rubric and the content it reads.
type Request struct {
	// Rubric names the rubric (e.g. ScopeFidelity, GROUNDEDNESS).
	Rubric string
	// Criteria is the rubric's text.
	Criteria string
	// Fields is the content, in the order shown.
	Fields []Field
}

// fieldName keeps field names usable as delimiters.
var fieldName = regexp.MustCompile(`[^a-z0-9_]+`)

// render produces the system and user messages of a request whose fields are already
// prepared (redacted, limited).
func render(req Request) (system, user string, err error) {
	var sb, ub bytes.Buffer
	if err := prompt.ExecuteTemplate(&sb, "system", req); err != nil {
		return "", "", fmt.Errorf("render judge prompt: %w", err)
	}
	if err := prompt.ExecuteTemplate(&ub, "user", req); err != nil {
		return "", "", fmt.Errorf("render judge prompt: %w", err)
	}
	return sb.String(), ub.String(), nil
}

// prepare redacts and size-limits every field, and neutralizes every closing tag inside
// its content (so content cannot close its block, or any other, and pose as
// instructions).
func (c *Client) prepare(req Request) Request {
	out := Request{Rubric: oneLine(req.Rubric), Criteria: c.clean(req.Criteria, c.cfg.MaxContentBytes)}
	for _, f := range req.Fields {
		name := fieldName.ReplaceAllString(strings.ToLower(f.Name), "_")
		out.Fields = append(out.Fields, Field{Name: name, Text: c.clean(f.Text, c.cfg.MaxContentBytes)})
	}
	return out
}

// clean removes the config's secrets (should content carry the key), applies the
// redaction policy and the fencing, then the size limit.
func (c *Client) clean(s string, limit int) string {
	s = c.policy.Redact(c.secrets.Scrub(s))
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return truncate(Fence(s), limit)
}

// closingTag is the start of any closing tag: "<", then "/", in ASCII or their full-width
// and small forms, with any whitespace, separator or invisible format character around
// the slash, and a tag name after it. Whatever the name and its case, content could
// otherwise close its fence (</Receiver_Input >, </SCOPE_PROMPT>, < / reason>).
var closingTag = regexp.MustCompile(`[<\x{FF1C}\x{FE64}][\s\p{Z}\p{Cf}]*[/\x{FF0F}][\s\p{Z}\p{Cf}]*[\pL_]`)

// Fence neutralizes every closing tag in content: its "<" is written as "&lt;", so the
// judge still reads it and no fence of the prompt can be closed from inside.
func Fence(s string) string {
	if !strings.ContainsAny(s, "<\uFF1C\uFE64") {
		return s
	}
	return closingTag.ReplaceAllStringFunc(s, func(m string) string {
		_, size := utf8.DecodeRuneInString(m)
		return "&lt;" + m[size:]
	})
}

// truncate cuts s to at most limit bytes at a UTF-8 boundary, marking the cut.
func truncate(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := textsafe.Cut(s, limit)
	return cut + fmt.Sprintf(" [truncated %d bytes]", len(s)-len(cut))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
