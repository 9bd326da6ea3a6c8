// boot.js (layer: web): takes the compute worker web/start.js started from the page's <head>, or starts it when
// that script did not run (the single-file page). app.js imports it first, so in the bundled page
// (scripts/build-site.mjs) this is the first code evaluated. (It was an `async` script of its
// own in index.html, meant to run first; Chromium ran it after app.js, which then started the worker at the end of
// its evaluation.) Then the page's start-up waits until the worker has started (its first message, 'started'; at
// most MAX_WAIT ms): Chromium starts a worker's thread from the page's main thread, and with app.js evaluating there
// (~0.15 s on a cold load) the worker's thread began only after it, while the first trace waits on the worker
// alone (its fetches, compile and run) and the main thread then sat idle. What the worker sends before app.js
// listens is kept and handed over. startWorker() starts a fresh one when the first has died (web/compute.js).
const MAX_WAIT = 300;

/** A new compute worker (the single-file page maps this URL to its embedded worker: scripts/build-single.mjs). */
export const startWorker = () => new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });

/**
 * A worker's error event in words: its message, file and line when the browser gives them (an uncaught error in
 * the worker), else what a bare error Event means (its script was refused or not found, or it died).
 */
export function describeWorkerError(e, started) {
  if (e && typeof e.message === 'string' && e.message) {
    const file = e.filename ? ` (${e.filename.replace(/^.*\/(?=[^/]+\/[^/]+$)/, '')}${e.lineno ? `:${e.lineno}` : ''}${e.colno ? `:${e.colno}` : ''})` : '';
    return `${e.message}${file}`;
  }
  return started ? 'the worker stopped without a message'
    : 'its script web/worker.js was refused or not found (the host must send .js as text/javascript; a Content Security Policy must allow it in worker-src)';
}

// started by web/start.js in the page's <head> when it ran (it keeps the worker's events until now), else here
const pre = window.__attnscopeEarlyWorker;
delete window.__attnscopeEarlyWorker;
const worker = pre?.worker ?? startWorker();
const early = pre?.early ?? [];
const keep = pre?.keep ?? ((e) => early.push(e));
if (!pre) {
  worker.addEventListener('message', keep);
  worker.addEventListener('error', keep);
}
const hasStarted = (e) => e.type === 'error' || e.data?.type === 'started';
// a worker started here waits for its thread (see above); one started from the <head> has had the parse and the
// first layout to get its thread, which then loads without the main thread, so app.js goes on at once
if (!pre && !early.some(hasStarted)) {
  await new Promise((resolve) => {
    const done = () => {
      worker.removeEventListener('message', on);
      worker.removeEventListener('error', on);
      clearTimeout(timer);
      resolve();
    };
    const on = (e) => {
      if (hasStarted(e)) done();
    };
    worker.addEventListener('message', on);
    worker.addEventListener('error', on);
    const timer = setTimeout(done, MAX_WAIT);
  });
}

/** The worker, its messages going to `onMessage` and its errors to `onError`, with every event so far replayed in order. */
export function takeWorker(onMessage, onError) {
  worker.removeEventListener('message', keep);
  worker.removeEventListener('error', keep);
  worker.addEventListener('message', onMessage);
  worker.addEventListener('error', onError);
  for (const e of early.splice(0)) (e.type === 'error' ? onError : onMessage)(e);
  return worker;
}
