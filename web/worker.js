// The compute worker (layer: web): owns the attnscope instance so typing never waits for the model. Its messages
// are web/protocol.js's: a run's trace, the user's checkpoint loaded (File objects, read here and never sent
// anywhere), a greedy continuation, a causal model's next-token top-k after one position, a bundled model's
// held-out score; 'started' at once, 'ready' once the module has loaded, 'progress' while a load or score runs.
import { createAttnScope } from '../bindings/js/index.js';
import { Pipeline } from './pipeline.js';
import * as msg from './protocol.js';
import { insideWork } from './inside-work.js';
import { translateWork } from './translate-work.js';
import { pairWork } from './pair-work.js';
import { fileStreamWork } from './attnfile-stream.js';

let ready = null;

function load() {
  if (!ready) {
    // relaxedSimd false: the page shows bit for bit what the attnscope package computes in Node (where relaxed
    // SIMD needs a flag), so numbers copied from it, and its exports, reproduce exactly
    ready = createAttnScope({ relaxedSimd: false }).then((as) => {
      self.postMessage(msg.ready({
        simd: as.simd,
        threads: as.threads,
        startup: as.startup ?? null, // which builds failed before this one, why one thread runs
        version: as.version,
        model: typeof as.createModel === 'function',
        pretrained: typeof as.loadPretrained === 'function', // features of newer builds, detected
        bundled: Array.isArray(as.bundledModels) && typeof as.loadBundled === 'function'
          ? as.bundledModels.map(({ name, task, architecture, description }) => ({ name, task, architecture, description }))
          : [],
      }));
      return new Pipeline(as);
    });
    // a failed load (dist/ being rebuilt) is retried on the next run
    ready.catch(() => { ready = null; });
  }
  return ready;
}

function buffers(obj, out = new Set()) {
  if (ArrayBuffer.isView(obj)) {
    if (obj.buffer instanceof ArrayBuffer) out.add(obj.buffer);
  } else if (obj && typeof obj === 'object') {
    for (const v of Object.values(obj)) buffers(v, out);
  }
  return out;
}

/** Each request kind's work: (pipeline, request, onProgress) → its value. */
const WORK = {
  run: (p, r) => p.run(r.state, r.need),
  load: (p, r, onProgress, signal) => p.loadCheckpoint(r.files, onProgress, signal),
  openFile: (p, r) => p.files.open(r.file),
  fileStream: (p, r, onProgress, signal) => fileStreamWork(p.files, r.args, onProgress, signal),
  heldout: (p, r, onProgress) => p.heldout(r.name, onProgress),
  next: (p, r) => p.nextAt(r.state, r.position, r.ids, r.end, r.topK),
  generate: (p, r) => p.generate(r.state, r.maxNewTokens),
  inside: (p, r, onProgress, signal) => insideWork(p, r.state, r.op, r.args, onProgress, signal),
  rope: (p, r) => p.as.ropeExplain(r.args),
  translate: (p, r) => translateWork(p, r.state, r.options),
  pair: (p, r) => pairWork(p, r.text, r.picks),
  memory: (p) => p.as.memoryStats(),
  crash: () => new Promise(() => {
    // an uncaught error, as a crash gives: the page restarts the worker (web/compute.js); never answered
    setTimeout(() => { throw new Error('the compute worker was made to crash (test hook)'); });
  }),
};

// said first, before the module loads: the page waits for it before its own start-up (web/boot.js)
self.postMessage(msg.started());

const aborts = new Map(); // id of a request → its AbortController: a 'cancel' aborts a checkpoint load or an inside sweep

self.onmessage = async (e) => {
  const { id, kind } = e.data;
  if (kind === 'cancel') {
    aborts.get(e.data.target)?.abort();
    return;
  }
  const ac = new AbortController();
  aborts.set(id, ac);
  try {
    const pipeline = await load();
    const t0 = performance.now();
    const value = await WORK[kind](pipeline, e.data, (fraction) => self.postMessage(msg.progress(id, fraction)), ac.signal);
    const answer = msg.done(id, kind, value, performance.now() - t0);
    if (kind !== 'run') {
      self.postMessage(answer);
      return;
    }
    // run() returns fresh copies (API.md), so their buffers are moved rather than copied
    try {
      self.postMessage(answer, [...buffers(value)]);
    } catch {
      self.postMessage(answer);
    }
  } catch (err) {
    self.postMessage(msg.failed(id, kind, err));
  } finally {
    aborts.delete(id);
  }
};
load();
