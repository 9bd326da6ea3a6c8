// boot.js (layer: web): starts the compute worker before the page's own module graph has loaded. index.html
// runs this module (no imports) ahead of app.js, so the worker fetches attnscope and compiles its wasm while the
// ~40 modules of the page are still arriving — on a cold load these were one after the other. Messages that
// arrive before app.js listens are kept and handed over with the worker (take).
// index.html loads it `async`: it runs as soon as it arrives, while the page is still being parsed; should
// app.js run first, it starts the worker itself and leaves a mark, and this starts none.
if (!globalThis.__attnscopeBoot) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const early = [];
  const keep = (e) => early.push(e);
  worker.addEventListener('message', keep);

  globalThis.__attnscopeBoot = {
    /** The worker, with `listener` attached and given every message it sent so far, in order. */
    take(listener) {
      worker.removeEventListener('message', keep);
      worker.addEventListener('message', listener);
      for (const e of early.splice(0)) listener(e);
      return worker;
    },
  };
}
