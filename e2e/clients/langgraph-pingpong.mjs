// LangGraph scenario, instrumented by OpenInference: a writer and a critic bouncing a
// draft between them with Command(goto) until the critic approves. The writer's model
// first calls search_notes, then transfer_to_critic; the critic's model sends the draft
// back twice (transfer_to_writer) and approves the third version. So the handoffs are
// writer -> critic -> writer -> critic -> writer -> critic: a loop of two agents that turns
// twice. The chat models are scripted stubs (lib/langgraph.mjs); the spans are
// OpenInference's (@arizeai/openinference-instrumentation-langchain).
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node langgraph-pingpong.mjs

import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { z } from 'zod';

import { ScriptedChatModel } from './lib/langgraph.mjs';
import { runScenario } from './lib/telemetry.mjs';

const SERVICE_NAME = 'e2e-langgraph-pingpong';
const REQUEST = 'Write a two-sentence product note for the Lisbon office opening.';
const APPROVED = 'Approved: the third draft is ready to publish.';

await runScenario(SERVICE_NAME, async () => {
  new LangChainInstrumentation().manuallyInstrument(CallbackManagerModule);

  const searchNotes = tool(async ({ topic }) => JSON.stringify({ topic, notes: ['opens 2 March', '40 desks'] }), {
    name: 'search_notes',
    description: 'Search the team notes on a topic',
    schema: z.object({ topic: z.string().describe('What to search for') }),
  });
  const toCritic = tool(async () => 'Transferred to critic', {
    name: 'transfer_to_critic',
    description: 'Hand the draft to the critic for review',
    schema: z.object({ draft: z.string().describe('The draft to review') }),
  });
  const toWriter = tool(async () => 'Transferred to writer', {
    name: 'transfer_to_writer',
    description: 'Send the draft back to the writer with what to change',
    schema: z.object({ feedback: z.string().describe('What to change') }),
  });

  const writerModel = new ScriptedChatModel('stub-writer-1', [
    { calls: [{ id: 'pp_w1', name: 'search_notes', args: { topic: 'Lisbon office' } }], usage: [40, 8] },
    { calls: [{ id: 'pp_w2', name: 'transfer_to_critic', args: { draft: 'Our Lisbon office opens soon.' } }], usage: [60, 12] },
    { calls: [{ id: 'pp_w3', name: 'transfer_to_critic', args: { draft: 'Our Lisbon office opens on 2 March.' } }], usage: [80, 12] },
    { calls: [{ id: 'pp_w4', name: 'transfer_to_critic', args: { draft: 'Our Lisbon office opens on 2 March with 40 desks.' } }], usage: [95, 14] },
  ]).bindTools([searchNotes, toCritic]);
  const criticModel = new ScriptedChatModel('stub-critic-1', [
    { calls: [{ id: 'pp_c1', name: 'transfer_to_writer', args: { feedback: 'Give the date.' } }], usage: [50, 7] },
    { calls: [{ id: 'pp_c2', name: 'transfer_to_writer', args: { feedback: 'Say how big it is.' } }], usage: [65, 8] },
    { text: APPROVED, usage: [80, 10] },
  ]).bindTools([toWriter]);

  const writer = async (state) => {
    const added = [];
    for (;;) {
      const reply = await writerModel.invoke([...state.messages, ...added]);
      added.push(reply);
      const call = reply.tool_calls?.[0];
      if (call?.name === 'transfer_to_critic') {
        added.push(await toCritic.invoke(call));
        return new Command({ goto: 'critic', update: { messages: added } });
      }
      if (call?.name !== 'search_notes') {
        throw new Error(`writer: unexpected reply ${JSON.stringify(reply)}`);
      }
      added.push(await searchNotes.invoke(call));
    }
  };

  const critic = async (state) => {
    const reply = await criticModel.invoke(state.messages);
    const call = reply.tool_calls?.[0];
    if (call?.name === 'transfer_to_writer') {
      const result = await toWriter.invoke(call);
      return new Command({ goto: 'writer', update: { messages: [reply, result] } });
    }
    return new Command({ goto: END, update: { messages: [reply] } });
  };

  const graph = new StateGraph(MessagesAnnotation)
    .addNode('writer', writer, { ends: ['critic'] })
    .addNode('critic', critic, { ends: ['writer', END] })
    .addEdge(START, 'writer')
    .compile({ name: 'note_graph' });

  const out = await graph.invoke({ messages: [new HumanMessage(REQUEST)] });
  const last = out.messages.at(-1);
  if (!(last instanceof AIMessage) || last.content !== APPROVED) {
    throw new Error(`unexpected final message ${JSON.stringify(last)}`);
  }
  return APPROVED;
});
