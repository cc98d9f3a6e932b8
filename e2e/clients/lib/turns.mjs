// The script of a stub model, shared by the frameworks' stub models (lib/vercel.mjs,
// lib/mastra.mjs, lib/strands.mjs): its turns played in order.

/**
 * Plays turns in order: next(options) returns the next turn of the script, failing loudly
 * when the model is called more often than scripted or when the turn calls a tool (each
 * turn.calls[].tool, or turn.tool) that the request did not offer. calls() is how many
 * times the model was called.
 */
export function turnPlayer(modelId, turns) {
  let calls = 0;
  return {
    calls: () => calls,
    next(options) {
      const turn = turns[calls];
      calls++;
      if (!turn) {
        throw new Error(`${modelId}: called ${calls} times, only ${turns.length} turns scripted`);
      }
      const offered = (options.tools ?? []).map((t) => t.name);
      const called = turn.calls ? turn.calls.map((c) => c.tool) : turn.tool ? [turn.tool] : [];
      for (const tool of called) {
        if (!offered.includes(tool)) {
          throw new Error(`${modelId}: turn ${calls} calls ${tool}, but the agent offered only ${offered.join(', ')}`);
        }
      }
      return turn;
    },
  };
}
