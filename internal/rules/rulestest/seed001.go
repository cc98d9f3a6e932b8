package rulestest

import "fmt"

// Example is a seed-001 example's pair of traces: one that satisfies it, one that does not.
type Example struct {
	Pass, Fail func(id byte) *Trace
}

// Seed001 has, for every example of seed 001 (by its test name, see
// internal/rules/testdata/seed001.yaml), a trace that satisfies it and one that does not.
var Seed001 = map[string]Example{
	"completes_cleanly": {
		Pass: func(id byte) *Trace { t, _ := Assistant(id, "pong"); return t },
		Fail: func(id byte) *Trace { t, root := Assistant(id, "partial answer"); root.Fail("tool crashed"); return t },
	},
	"returns_id_10": {
		Pass: func(id byte) *Trace { t, _ := Assistant(id, `{"id": 10, "name": "ten"}`); return t },
		Fail: func(id byte) *Trace { t, _ := Assistant(id, `{"id": 11}`); return t },
	},
	"greets_user": {
		Pass: func(id byte) *Trace { t, _ := Assistant(id, "Well hello there!"); return t },
		Fail: func(id byte) *Trace { t, _ := Assistant(id, "Hi! How can I help?"); return t },
	},
	"high_confidence_only": {
		Pass: func(id byte) *Trace { t, _ := Assistant(id, `{"label": "invoice", "confidence": 0.93}`); return t },
		Fail: func(id byte) *Trace { t, _ := Assistant(id, `{"label": "unknown", "confidence": 0.93}`); return t },
	},
	"rejects_invalid_input": {
		Pass: func(id byte) *Trace {
			t, root := Assistant(id, "")
			root.Fail("ValidationError: missing vendor")
			return t
		},
		Fail: func(id byte) *Trace { t, _ := Assistant(id, "Created invoice for vendor \"\""); return t },
	},
	"uses_calculator": {
		Pass: func(id byte) *Trace {
			t, root := Assistant(id, "10")
			t.Tool(root, "math.calculator.add", `{"a": 4, "b": 6}`, 10, 20)
			return t
		},
		Fail: func(id byte) *Trace {
			t, root := Assistant(id, "10")
			t.Tool(root, "math.calculator.multiply", `{"a": 4, "b": 6}`, 10, 20)
			return t
		},
	},
	"calls_add_at_least_five_times": {
		Pass: func(id byte) *Trace { return Adds(id, 1, 2, 3, 4, 5, 6) },
		Fail: func(id byte) *Trace { return Adds(id, 1, 2, 3, 4) },
	},
	"calls_send_exactly_once": {
		Pass: func(id byte) *Trace {
			t, root := Assistant(id, "sent")
			t.Tool(root, "digest.build", `{}`, 5, 8)
			t.Tool(root, "notifications.send", `{"to": "team"}`, 10, 20)
			return t
		},
		Fail: func(id byte) *Trace {
			t, root := Assistant(id, "sent")
			t.Tool(root, "notifications.send", `{"to": "team"}`, 10, 20)
			t.Tool(root, "notifications.send", `{"to": "team"}`, 30, 40)
			return t
		},
	},
	"calls_add_with_payload_args": {
		Pass: func(id byte) *Trace { return AddPairs(id, [2]int{1, 1}, [2]int{4, 6}) },
		Fail: func(id byte) *Trace { return AddPairs(id, [2]int{4, 5}, [2]int{6, 4}) },
	},
	"calls_add_for_each_pair": {
		Pass: func(id byte) *Trace { return AddPairs(id, [2]int{7, 8}, [2]int{4, 6}) },
		// DESIGN.md section 7: a=4, a=7, a=4.
		Fail: func(id byte) *Trace { return AddPairs(id, [2]int{4, 6}, [2]int{7, 8}, [2]int{4, 1}) },
	},
	"fetches_then_sends": {
		Pass: func(id byte) *Trace {
			t, root := Assistant(id, "done")
			t.Tool(root, "orders.lookup", `{"id": "o-1"}`, 10, 20)
			t.Tool(root, "customers.get", `{"id": "c-1"}`, 21, 25)
			t.Tool(root, "notifications.send", `{"to": "c-1"}`, 30, 40)
			return t
		},
		Fail: func(id byte) *Trace {
			t, root := Assistant(id, "done")
			t.Tool(root, "notifications.send", `{"to": "c-1"}`, 10, 20)
			t.Tool(root, "orders.lookup", `{"id": "o-1"}`, 30, 40)
			return t
		},
	},
	"fetches_the_row_we_just_inserted": {
		Pass: func(id byte) *Trace { return FetchRow(id, "row-42", "row-42") },
		Fail: func(id byte) *Trace { return FetchRow(id, "row-42", "row-7") },
	},
	"plain_chat_no_tools": {
		Pass: func(id byte) *Trace {
			t, root := Assistant(id, "hi!")
			t.Tool(root, "memory.recall", `{}`, 10, 20)
			return t
		},
		Fail: func(id byte) *Trace {
			t, root := Assistant(id, "hi!")
			t.Tool(root, "notifications.send", `{}`, 10, 20)
			return t
		},
	},
	"dispatches_to_summarizer": {
		Pass: func(id byte) *Trace {
			return Summarize(id, `{"text": "a long text"}`, `{"summary": "short"}`, "llm.complete")
		},
		Fail: func(id byte) *Trace { return Summarize(id, `{"text": ""}`, `{"summary": ""}`, "email.send") },
	},
	"forwards_charge_id_unchanged": {
		Pass: func(id byte) *Trace { return Refund(id, "ch_123", `{"charge_id": "ch_123", "reason": "duplicate"}`) },
		Fail: func(id byte) *Trace { return Refund(id, "ch_123", `{"charge_id": "ch_999"}`) },
	},
	"dispatches_summarizer_then_publisher": {
		Pass: func(id byte) *Trace { return Publish(id, "summaries") },
		Fail: func(id byte) *Trace { return Publish(id, "drafts") },
	},
	"fans_out_telemetry": {
		Pass: func(id byte) *Trace { return Telemetry(id, "checkout") },
		Fail: func(id byte) *Trace { return Telemetry(id, "cart", "checkout") },
	},
}

// Assistant starts a trace whose root agent "assistant" replies reply (an OTel GenAI
// messages array; "" = no output captured).
func Assistant(id byte, reply string) (*Trace, *Span) {
	t := New(id)
	root := t.Agent(nil, "assistant", 0, 100)
	if reply != "" {
		root.Reply(reply)
	}
	return t, root
}

// Adds: one math.calculator.add(a, 1) call per value of as.
func Adds(id byte, as ...int) *Trace {
	t, root := Assistant(id, "sum")
	for i, a := range as {
		t.Tool(root, "math.calculator.add", fmt.Sprintf(`{"a": %d, "b": 1}`, a), 10+10*i, 15+10*i)
	}
	return t
}

// AddPairs: one math.calculator.add(a, b) call per pair.
func AddPairs(id byte, pairs ...[2]int) *Trace {
	t, root := Assistant(id, "sums")
	for i, p := range pairs {
		t.Tool(root, "math.calculator.add", fmt.Sprintf(`{"a": %d, "b": %d}`, p[0], p[1]), 10+10*i, 15+10*i)
	}
	return t
}

// FetchRow: the runner's root span stashes the fixture id in test.context.test_uuid; the
// agent fetches (and returns) the row got.
func FetchRow(id byte, fixture, got string) *Trace {
	t := New(id)
	run := t.Other(nil, "test insert_then_query", 0, 200).Attr("test.context.test_uuid", fixture)
	root := t.Agent(run, "assistant", 10, 190).Reply(fmt.Sprintf(`{"row": {"id": %q}}`, got))
	t.Tool(root, "db.fetch_row", fmt.Sprintf(`{"uuid": %q}`, got), 20, 30)
	return t
}

// Summarize: dispatcher → trigger_agent(summarizer, payload, wait_for_response=true) →
// summarizer replying reply and calling tool.
func Summarize(id byte, payload, reply, tool string) *Trace {
	t := New(id)
	root := t.Agent(nil, "dispatcher", 0, 100).Reply("dispatched")
	call := t.Tool(root, "trigger_agent", fmt.Sprintf(`{"agent_name": "summarizer", "payload": %s, "wait_for_response": true}`, payload), 10, 90)
	sum := t.Agent(call, "summarizer", 11, 89).Reply(reply)
	t.Tool(sum, tool, `{"prompt": "summarize"}`, 20, 30)
	return t
}

// Refund: the charge id is stashed on the resource (test.context.charge_id); the agent
// triggers billing-refunder with a JSON-string payload.
func Refund(id byte, fixture, payload string) *Trace {
	t := New(id)
	t.Resource().PutStr("test.context.charge_id", fixture)
	root := t.Agent(nil, "billing-agent", 0, 100).Reply("refund requested")
	call := t.Tool(root, "trigger_agent", fmt.Sprintf(`{"agent_name": "billing-refunder", "payload": %q, "wait_for_response": true}`, payload), 10, 90)
	t.Agent(call, "billing-refunder", 11, 89).Reply("refunded")
	return t
}

// Publish: dispatcher → summarizer → publisher → kafka.publish(topic), as nested sub-agents.
func Publish(id byte, topic string) *Trace {
	t := New(id)
	root := t.Agent(nil, "dispatcher", 0, 100).Reply("ok")
	sum := t.Agent(root, "summarizer", 10, 90).Reply(`{"summary": "short"}`)
	pub := t.Agent(sum, "publisher", 20, 80).Reply("published")
	t.Tool(pub, "kafka.publish", fmt.Sprintf(`{"topic": %q}`, topic), 30, 40)
	return t
}

// Telemetry: checkout-agent fires trigger_agent(telemetry-writer,
// wait_for_response=false) once per event; each writer runs on after the agent ended.
func Telemetry(id byte, events ...string) *Trace {
	t := New(id)
	root := t.Agent(nil, "checkout-agent", 0, 100).Reply("checked out")
	for i, ev := range events {
		call := t.Tool(root, "trigger_agent", fmt.Sprintf(`{"agent_name": "telemetry-writer", "payload": {"event": %q}, "wait_for_response": false}`, ev), 10+20*i, 12+20*i)
		t.Agent(call, "telemetry-writer", 11+20*i, 150+20*i).Reply("written")
	}
	return t
}
