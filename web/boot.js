// boot.js (layer: web): starts the compute worker before anything else of the page runs. app.js imports it first,
// so in the bundled page (scripts/build-site.mjs) this is the first code evaluated: the worker fetches attnscope and
// compiles its wasm while the rest of app.js evaluates and the page is laid out (~0.1–0.2 s on a cold load). (It was
// an `async` script of its own in index.html, meant to run first; Chromium ran it after app.js, so app.js started
// the worker at the end of its evaluation.) What the worker sends before app.js listens is kept and handed over.
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const early = [];
const keep = (e) => early.push(e);
worker.addEventListener('message', keep);
worker.addEventListener('error', keep);

/** The worker, its messages going to `onMessage` and its errors to `onError`, with every event so far replayed in order. */
export function takeWorker(onMessage, onError) {
  worker.removeEventListener('message', keep);
  worker.removeEventListener('error', keep);
  worker.addEventListener('message', onMessage);
  worker.addEventListener('error', onError);
  for (const e of early.splice(0)) (e.type === 'error' ? onError : onMessage)(e);
  return worker;
}
