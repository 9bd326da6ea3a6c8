// start.js (layer: web): starts the compute worker as soon as the page's HTML comes in. scripts/build-site.mjs
// writes it inline into index.html's <head>, before the stylesheet (allowed by its hash in the page's CSP): as an
// external script it waited for its own request (~60 ms of a warm load's revalidation, beside the stylesheet's),
// and the worker's thread then started only after the first style and layout; inline, the browser fetches
// worker.js while the stylesheet and app.js come, and the thread starts before the first layout. So it runs before
// the page's module (web/app.js, bundled: ~300 kB compiled on a background thread, then evaluated). Its events
// until the page listens are kept; web/boot.js takes the worker and them. Nothing else: no module syntax (a classic
// script), no DOM, no URL but the document's (inline, it has no src). When a host's own CSP refuses it (no hash),
// web/boot.js starts the worker itself, as it does in the single-file page (scripts/build-single.mjs drops it).
(() => {
  try {
    const worker = new Worker(new URL('worker.js', document.baseURI), { type: 'module' });
    const early = [];
    const keep = (e) => early.push(e);
    worker.addEventListener('message', keep);
    worker.addEventListener('error', keep);
    Object.defineProperty(window, '__attnscopeEarlyWorker', { value: { worker, early, keep }, configurable: true });
  } catch {
    // (a browser without module workers, or one refusing this URL): web/boot.js starts it and reports why
  }
})();
