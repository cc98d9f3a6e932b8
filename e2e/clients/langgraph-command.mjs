// LangGraph scenario, instrumented by OpenInference: a StateGraph of two agent nodes. The
// triage node's model calls transfer_to_weather_specialist; the node runs that tool and
// returns new Command({ goto: 'weather_specialist' }). The specialist node runs its own
// model-and-tools loop (get_weather for Paris, then Berlin) and answers. The chat model is
// a scripted stub (LangChain's fakes cannot script tool calls); the spans are
// OpenInference's (@arizeai/openinference-instrumentation-langchain).
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node langgraph-command.mjs

import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { z } from 'zod';

import { ScriptedChatModel } from './lib/langgraph.mjs';
import { runScenario } from './lib/telemetry.mjs';
import { QUESTION, getWeather } from './lib/weather.mjs';

const SERVICE_NAME = 'e2e-langgraph-command';
const ANSWER = 'Paris: 18C, sunny. Berlin: 12C, rain.';

await runScenario(SERVICE_NAME, async () => {
  new LangChainInstrumentation().manuallyInstrument(CallbackManagerModule);

  const transfer = tool(async () => 'Transferred to weather_specialist', {
    name: 'transfer_to_weather_specialist',
    description: 'Hand the conversation to the weather specialist',
    schema: z.object({}),
  });
  const weather = tool(async ({ city }) => JSON.stringify(getWeather(city)), {
    name: 'get_weather',
    description: 'Get the current weather for a city',
    schema: z.object({ city: z.string().describe('City name') }),
  });

  const triageModel = new ScriptedChatModel('stub-triage-1', [
    { calls: [{ id: 'lg_t1', name: 'transfer_to_weather_specialist', args: {} }], usage: [30, 6] },
  ]).bindTools([transfer]);
  const specialistModel = new ScriptedChatModel('stub-weather-1', [
    { calls: [{ id: 'lg_w1', name: 'get_weather', args: { city: 'Paris' } }], usage: [45, 9] },
    { calls: [{ id: 'lg_w2', name: 'get_weather', args: { city: 'Berlin' } }], usage: [70, 9] },
    { text: ANSWER, usage: [95, 20] },
  ]).bindTools([weather]);

  const triage = async (state) => {
    const reply = await triageModel.invoke(state.messages);
    const call = reply.tool_calls?.[0];
    if (call?.name !== 'transfer_to_weather_specialist') {
      return { messages: [reply] };
    }
    const result = await transfer.invoke(call);
    return new Command({ goto: 'weather_specialist', update: { messages: [reply, result] } });
  };

  const specialist = async (state) => {
    const added = [];
    for (;;) {
      const reply = await specialistModel.invoke([...state.messages, ...added]);
      added.push(reply);
      if (!reply.tool_calls?.length) {
        return { messages: added };
      }
      for (const call of reply.tool_calls) {
        added.push(await weather.invoke(call));
      }
    }
  };

  const graph = new StateGraph(MessagesAnnotation)
    .addNode('triage', triage, { ends: ['weather_specialist'] })
    .addNode('weather_specialist', specialist)
    .addEdge(START, 'triage')
    .addEdge('weather_specialist', END)
    .compile({ name: 'weather_graph' });

  const out = await graph.invoke({ messages: [new HumanMessage(QUESTION)] });
  const last = out.messages.at(-1);
  if (!(last instanceof AIMessage) || last.content !== ANSWER) {
    throw new Error(`unexpected final message ${JSON.stringify(last)}`);
  }
  if (!out.messages.some((m) => m instanceof ToolMessage && m.name === 'transfer_to_weather_specialist')) {
    throw new Error('the transfer tool never ran');
  }
  return ANSWER;
});
