// start.js (layer: web): starts the compute worker while the page is still being parsed. A classic script in
// index.html's <head>, so it runs before the page's module (web/app.js, bundled: ~300 kB compiled on a
// background thread, then evaluated) and before the browser's first style, layout and paint of the page: the
// worker's thread, its script, the glue, the cached wasm and the pool thread then load while the main thread does
// those. (Started from app.js, the worker began only once app.js ran, ~0.4 s into a warm load, and app.js then
// waited for it: web/boot.js.) Its events until the page listens are kept; web/boot.js takes the worker and them.
// Nothing else: no module syntax (a classic script), no DOM. The single-file page (scripts/build-single.mjs)
// leaves this script out; its bundled web/boot.js starts the worker itself.
(() => {
  try {
    const worker = new Worker(new URL('worker.js', document.currentScript.src), { type: 'module' });
    const early = [];
    const keep = (e) => early.push(e);
    worker.addEventListener('message', keep);
    worker.addEventListener('error', keep);
    Object.defineProperty(window, '__attnscopeEarlyWorker', { value: { worker, early, keep }, configurable: true });
  } catch {
    // (a browser without module workers, or one refusing this URL): web/boot.js starts it and reports why
  }
})();
