// The compute worker's messages (layer: web; no DOM): one table shared by the page's client (./compute.js) and
// the worker (./worker.js), so each side builds and reads the same shapes. One id space: every request the page
// sends carries a fresh id from the client, and every answer names the id it answers.
//
//   page → worker   { id, kind, ...args }            kind ∈ KINDS, args as listed there
//   worker → page   { type: 'started' }              at once, before the module loads (web/boot.js waits for it)
//                   { type: 'ready', simd, threads, startup, version, model, pretrained, bundled }   once the module has loaded
//                   { type: 'progress', id, fraction }                            while a load or score is measured
//                   { type: 'done', id, kind, ok: true, value, ms } | { type: 'done', id, kind, ok: false, error }

/** What the worker does, and the arguments each request carries besides { id, kind }. */
export const KINDS = Object.freeze({
  run: ['state', 'need'], // the trace for a state: { all, full } narrows it to what is drawn (web/pipeline.js)
  openFile: ['file'], // the user's attention file (a File, read in the worker with Blob.slice, never sent anywhere) → its summary
  fileStream: ['args'], // a big attention file streamed head by head (web/attnfile-stream.js): { op: rollout | model | means, layer }
  load: ['files'], // the user's checkpoint (File objects, read in the worker, never sent anywhere) → its config
  next: ['state', 'position', 'ids', 'end', 'topK'], // a causal model's next-token top-k after one position
  generate: ['state', 'maxNewTokens'], // greedy continuation → { text, tokens, ids, stoppedAtEnd }
  heldout: ['name'], // a bundled model's held-out score, measured in the worker
  inside: ['state', 'op', 'args'], // looking inside (web/inside-work.js): lens, ablate, sweep, patch → its result
  cancel: ['target'], // stop the request with id `target` (a checkpoint load, an inside sweep, a file stream: it rejects with an AbortError); no answer
  rope: ['args'], // as.ropeExplain(args): the RoPE panel's numbers (issue 28)
  translate: ['state', 'options'], // an encoder–decoder's target for the text and its cross-attention (web/translate-work.js)
  pair: ['text', 'picks'], // the english vs english-rope switch (web/pair-work.js): one head of each on the text
  memory: [], // the module's as.memoryStats() (wasm heap size and bytes allocated): the page soak (bench/page_soak.mjs)
  crash: [], // a test hook (window.__attnscope.crashWorker): the worker dies of an uncaught error; never sent otherwise
});

/** A request of `kind` with id `id`; `args` must hold exactly the kind's arguments. */
export function request(kind, id, args) {
  const names = KINDS[kind];
  if (!names) throw new TypeError(`request: kind (${kind}) must be one of ${Object.keys(KINDS).join(', ')}`);
  const extra = Object.keys(args).filter((k) => !names.includes(k));
  if (extra.length) throw new TypeError(`request: ${kind} takes ${names.join(', ')}, not ${extra.join(', ')}`);
  return { id, kind, ...args };
}

export const started = () => ({ type: 'started' });
export const ready = (info) => ({ type: 'ready', ...info });
export const progress = (id, fraction) => ({ type: 'progress', id, fraction });
export const done = (id, kind, value, ms) => ({ type: 'done', id, kind, ok: true, value, ms });
/** A failed request's answer: the error's name and message only (an Error does not cross postMessage whole). */
export const failed = (id, kind, err) => ({
  type: 'done', id, kind, ok: false, error: { name: err?.name ?? 'Error', message: String(err?.message ?? err) },
});
