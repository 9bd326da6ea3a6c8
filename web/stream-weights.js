// Whether the page streams a checkpoint's layers from the user's file (layer: web, runs in the worker; no DOM).
// loadPretrained's streamWeights (README "Streamed weights") keeps each decoder layer in the file and reads it into
// one layer buffer before its forward: the results are the same bit for bit, each run reads every layer once. The
// page turns it on when the weights are above its budget — 1 GB, or a quarter of the device's memory where the
// browser tells it (navigator.deviceMemory, Chrome: a rounded figure in GB) and that is less — for the checkpoints
// whose model_type the module says it streams (as.streamableModelTypes: the core's list of decoder families, not a
// copy kept here), and only where a File can be read synchronously (FileReaderSync: a worker). The wasm heap then
// holds one layer of a Llama-3.2-1B (2.47 GB of BF16) and none of its 525 MB token table instead of everything; the
// renderer at 2,048 tokens measured 847 MiB with all 16 layers streamed (README "Streamed weights"; 1,937 MB with 4
// layers before the reads stopped leaving garbage and the table was streamed), under issue 28's 1.5 GB.

export const STREAM_ABOVE = 1e9; // bytes of weights

/** The budget in bytes: STREAM_ABOVE, or a quarter of the device's memory when that is less. */
export function streamBudget(nav = globalThis.navigator) {
  const gb = nav?.deviceMemory;
  return typeof gb === 'number' && gb > 0 ? Math.min(STREAM_ABOVE, (gb * 1e9) / 4) : STREAM_ABOVE;
}

/**
 * { stream, bytes, budget } for a checkpoint: config.json's text and its weights (a File or the shards' Files).
 * `types`: the model_types the module streams (as.streamableModelTypes; none from a build without it).
 * `canReadSync`: whether this context has FileReaderSync (a worker).
 */
export function streamChoice(configText, weights, { types, budget = streamBudget(), canReadSync = typeof FileReaderSync === 'function' }) {
  const bytes = [weights].flat().reduce((n, w) => n + (w?.size ?? 0), 0);
  let type = '';
  try {
    type = JSON.parse(configText)?.model_type ?? '';
  } catch {
    // not JSON: loadPretrained says so, naming config.json
  }
  return { stream: canReadSync && Array.isArray(types) && types.includes(type) && bytes > budget, bytes, budget };
}
