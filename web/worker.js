// The compute worker (layer: web): owns the attnscope instance so typing never waits for the model.
// Messages in: { id, state }. Out: { type: 'ready', simd, version } once, then per run
// { id, ok: true, trace, ms } or { id, ok: false, error: { name, message } }.
import { createAttnScope } from '../bindings/js/index.js';
import { Pipeline } from './pipeline.js';

let ready = null;

function load() {
  if (!ready) {
    ready = createAttnScope().then((as) => {
      self.postMessage({ type: 'ready', simd: as.simd, version: as.version, model: typeof as.createModel === 'function' });
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

self.onmessage = async (e) => {
  const { id, state } = e.data;
  try {
    const pipeline = await load();
    const t0 = performance.now();
    const trace = await pipeline.run(state);
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
    self.postMessage({ id, ok: false, error: { name: err?.name ?? 'Error', message: String(err?.message ?? err) } });
  }
};
load();
