package judge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// maxReason bounds the reason kept from an answer.
const maxReason = 500

// ParseResponse reads a chat-completions response and its verdict, strictly: the first
// choice's message content must be one JSON object with exactly the fields score (a number
// from 0 to 1), pass (a boolean) and reason (a string), optionally inside one Markdown code
// fence. Anything else is an off-schema answer, reported with what was wrong (never with
// the content itself).
func ParseResponse(data []byte) (Verdict, error) {
	var resp struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal string  `json:"refusal"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return Verdict{}, offSchema("the response is not a chat-completions JSON object (%s)", jsonProblem(err))
	}
	if len(resp.Choices) == 0 {
		return Verdict{}, offSchema("the response has no choices")
	}
	msg := resp.Choices[0].Message
	if msg.Refusal != "" {
		return Verdict{}, offSchema("the judge refused to grade")
	}
	if msg.Content == nil || strings.TrimSpace(*msg.Content) == "" {
		return Verdict{}, offSchema("the answer is empty")
	}
	return ParseVerdict(*msg.Content)
}

// ParseVerdict parses the judge's answer text (see ParseResponse).
func ParseVerdict(content string) (Verdict, error) {
	text := stripFence(strings.TrimSpace(content))
	if !strings.HasPrefix(text, "{") {
		return Verdict{}, offSchema("the answer is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	var raw struct {
		Score  json.RawMessage `json:"score"`
		Pass   *bool           `json:"pass"`
		Reason *string         `json:"reason"`
	}
	if err := dec.Decode(&raw); err != nil {
		return Verdict{}, offSchema("%s", jsonProblem(err))
	}
	if dec.More() {
		return Verdict{}, offSchema("text after the JSON object")
	}
	var missing []string
	if raw.Score == nil || string(raw.Score) == "null" {
		missing = append(missing, "score")
	}
	if raw.Pass == nil {
		missing = append(missing, "pass")
	}
	if raw.Reason == nil {
		missing = append(missing, "reason")
	}
	if len(missing) > 0 {
		return Verdict{}, offSchema("missing %s", strings.Join(missing, ", "))
	}
	var score float64
	if err := json.Unmarshal(raw.Score, &score); err != nil || math.IsNaN(score) || math.IsInf(score, 0) {
		return Verdict{}, offSchema("score is not a number")
	}
	if score < 0 || score > 1 {
		return Verdict{}, offSchema("score %g is outside [0, 1]", score)
	}
	return Verdict{Score: score, Pass: *raw.Pass, Reason: truncate(oneLine(*raw.Reason), maxReason)}, nil
}

func offSchema(format string, args ...any) error {
	return fmt.Errorf("judge answered off-schema: "+format+
		`; want one JSON object {"score": 0..1, "pass": true|false, "reason": "..."}`, args...)
}

// stripFence removes one surrounding Markdown code fence (```json ... ```).
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	inner := s[3 : len(s)-3]
	if nl := strings.IndexByte(inner, '\n'); nl >= 0 && !strings.Contains(inner[:nl], "{") {
		inner = inner[nl+1:] // the info string (json)
	}
	return strings.TrimSpace(inner)
}

// jsonProblem describes a decoding error without quoting content.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s has the wrong type (%s, want %s)", typ.Field, typ.Value, typ.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unexpected field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "invalid JSON"
}
