// Package judgetest runs a fake OpenAI-compatible judge on 127.0.0.1 (httptest) that
// answers from fixtures: pass, fail, malformed (prose instead of JSON), offschema (JSON of
// the wrong shape), ratelimited (HTTP 429), and timeout (answers only after the client has
// given up).
package judgetest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed fixtures/*.json
var fixtures embed.FS

// Reply is one answer of the fake judge.
type Reply struct {
	Status int
	Body   string
	Header map[string]string
	// Delay holds the answer back (the handler returns early when the client gives up).
	Delay time.Duration
}

// Fixture names.
const (
	Pass        = "pass"
	Fail        = "fail"
	Malformed   = "malformed"
	OffSchema   = "offschema"
	RateLimited = "ratelimited"
	Timeout     = "timeout"
)

// Fixture returns the reply of a named fixture. timeout delays a pass answer by a minute.
func Fixture(name string) Reply {
	switch name {
	case Timeout:
		r := Fixture(Pass)
		r.Delay = time.Minute
		return r
	case RateLimited:
		b, err := fixtures.ReadFile("fixtures/ratelimited.json")
		if err != nil {
			panic(err)
		}
		return Reply{Status: http.StatusTooManyRequests, Body: string(b), Header: map[string]string{"Retry-After": "0"}}
	}
	b, err := fixtures.ReadFile("fixtures/" + name + ".json")
	if err != nil {
		panic(fmt.Sprintf("judgetest: no fixture %q", name))
	}
	return Reply{Status: http.StatusOK, Body: string(b)}
}

// Answer is a 200 chat completion whose message content is content.
func Answer(content string) Reply {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake-judge",
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content},
		}},
	})
	return Reply{Status: http.StatusOK, Body: string(b)}
}

// Verdict is a 200 answer with a well-formed verdict.
func Verdict(score float64, pass bool, reason string) Reply {
	b, _ := json.Marshal(map[string]any{"score": score, "pass": pass, "reason": reason})
	return Answer(string(b))
}

// Request is what the fake judge received.
type Request struct {
	Model          string          `json:"model"`
	Temperature    *float64        `json:"temperature"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Messages       []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	// Authorization is the header as received.
	Authorization string `json:"-"`
	// Query is the request URL's query, as received.
	Query string `json:"-"`
	Raw   []byte `json:"-"`
}

// System and User return the messages' contents.
func (r Request) System() string { return r.message("system") }

// User returns the user message's content.
func (r Request) User() string { return r.message("user") }

func (r Request) message(role string) string {
	for _, m := range r.Messages {
		if m.Role == role {
			return m.Content
		}
	}
	return ""
}

// Responder picks the reply to the n-th request (0-based, counted over the server's life).
type Responder func(req Request, n int) Reply

// Always answers every request with the named fixture.
func Always(name string) Responder { return func(Request, int) Reply { return Fixture(name) } }

// Sequence answers the n-th request with names[n] (the last one repeated).
func Sequence(names ...string) Responder {
	return func(_ Request, n int) Reply { return Fixture(names[min(n, len(names)-1)]) }
}

// Route is a substring of the user message and the fixture answering it.
type Route struct{ Contains, Fixture string }

// ByContent answers with the fixture of the first route whose substring the user message
// contains, else with fallback.
func ByContent(fallback string, routes ...Route) Responder {
	return func(req Request, _ int) Reply {
		user := req.User()
		for _, r := range routes {
			if strings.Contains(user, r.Contains) {
				return Fixture(r.Fixture)
			}
		}
		return Fixture(fallback)
	}
}

// Server is a fake judge listening on 127.0.0.1.
type Server struct {
	// URL is the base URL to configure as the judge endpoint.
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	requests []Request
	respond  Responder
}

// New starts a fake judge, closed when the test ends.
func New(t testing.TB, respond Responder) *Server {
	s := &Server{respond: respond}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// SetResponder replaces the responder.
func (s *Server) SetResponder(r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = r
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count is the number of requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var req Request
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	req.Query = r.URL.RawQuery
	req.Raw = raw
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	respond := s.respond
	s.mu.Unlock()
	reply := respond(req, n)
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, reply.Body)
}
