// The compute worker (layer: web): owns the attnscope instance so typing never waits for the model.
// Messages in: { id, state, need? } (a run; need: Pipeline.run's), { id, kind: 'load', files } (the user's checkpoint: File objects, read
// here and never sent anywhere), { id, kind: 'generate', state, maxNewTokens }, { id, kind: 'next', state, position, ids, end, topK }
// (a causal model's next-token top-k after one position), { id, kind: 'heldout', name }
// (a bundled model's held-out score, measured here). Out: { type: 'started' } at once; { type: 'ready', simd,
// version, model, pretrained, bundled } once; { type: 'progress', id, fraction } while a checkpoint loads or a score is measured; per
// request { id, kind?, ok: true, trace | config | generated | next, ms } or { id, kind?, ok: false, error: { name, message } }.
import { createAttnScope } from '../bindings/js/index.js';
import { Pipeline } from './pipeline.js';

let ready = null;

function load() {
  if (!ready) {
    // relaxedSimd false: the page shows bit for bit what the attnscope package computes in Node (where relaxed
    // SIMD needs a flag), so numbers copied from it, and its exports, reproduce exactly
    ready = createAttnScope({ relaxedSimd: false }).then((as) => {
      self.postMessage({
        type: 'ready',
        simd: as.simd,
        version: as.version,
        model: typeof as.createModel === 'function',
        pretrained: typeof as.loadPretrained === 'function', // features of newer builds, detected
        bundled: Array.isArray(as.bundledModels) && typeof as.loadBundled === 'function'
          ? as.bundledModels.map(({ name, task, architecture, description }) => ({ name, task, architecture, description }))
          : [],
      });
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

// said first, before the module loads: the page waits for it before its own start-up (web/boot.js)
self.postMessage({ type: 'started' });

self.onmessage = async (e) => {
  const { id, state, kind } = e.data;
  try {
    const pipeline = await load();
    const t0 = performance.now();
    if (kind === 'load') {
      const onProgress = (fraction) => self.postMessage({ type: 'progress', id, fraction });
      const config = await pipeline.loadCheckpoint(e.data.files, onProgress);
      self.postMessage({ id, kind, ok: true, config, ms: performance.now() - t0 });
      return;
    }
    if (kind === 'heldout') {
      const onProgress = (fraction) => self.postMessage({ type: 'progress', id, fraction });
      const result = await pipeline.heldout(e.data.name, onProgress);
      self.postMessage({ id, kind, ok: true, result, ms: performance.now() - t0 });
      return;
    }
    if (kind === 'next') {
      const { position, ids, end, topK } = e.data;
      const next = await pipeline.nextAt(state, position, ids, end, topK);
      self.postMessage({ id, kind, ok: true, next, ms: performance.now() - t0 });
      return;
    }
    if (kind === 'generate') {
      const generated = await pipeline.generate(state, e.data.maxNewTokens);
      self.postMessage({ id, kind, ok: true, generated, ms: performance.now() - t0 });
      return;
    }
    const trace = await pipeline.run(state, e.data.need);
    const ms = performance.now() - t0;
    const msg = { id, ok: true, trace, ms };
    // run() returns fresh copies (API.md), so their buffers are moved rather than copied
    const transfer = [...buffers(trace)];
    try {
      self.postMessage(msg, transfer);
    } catch {
      self.postMessage(msg);
    }
  } catch (err) {
    self.postMessage({ id, kind, ok: false, error: { name: err?.name ?? 'Error', message: String(err?.message ?? err) } });
  }
};
load();
