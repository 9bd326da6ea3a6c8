// The compute client (layer: web): the page's one door to the compute worker (./worker.js, messages in
// ./protocol.js). One id space for everything it sends. Runs: the newest wins — a run asked for while one is
// computing is sent when that one returns, and the returning one is then dropped, so typing never queues stale
// traces; a completion (the same input again, for the parts the first run left out) is a run too. Everything else
// (load, next, generate, heldout) is a call: a promise of its value, with progress reported on the way.
// A worker that dies after it started (an uncaught error: out of memory, a crash) is replaced by a new one: the
// calls it held are rejected, the run it was computing is sent again, and the page keeps what it shows.
import * as msg from './protocol.js';

/** Restarts in a row without an answer between them after which a dying worker is left dead (it would loop). */
const MAX_RESTARTS = 3;

/**
 * The client, to be given its worker with attach(worker) (web/boot.js started it; its early messages are
 * replayed into onMessage). `hooks`:
 *   next()                  → { state, need } of the run to send now (read when it is sent, not when asked for)
 *   onRun(answer, run)      a run's answer (not superseded): answer { ok, value | error, ms }, run { state, need, t0, completion, serial }
 *   onReady(info)           the module has loaded: { simd, threads, startup, version, model, pretrained, bundled }
 *   onBusy()                a run is now due or computing (the render scheduler marks the page busy)
 *   onSent(need, completion) what each run asked for (window.__attnscope.requests)
 *   start(onMessage, onError) → a new worker wired to them (web/boot.js startWorker)
 *   onFailed(event, started) the worker failed: it never started (started false) or died too often to restart
 *   onRestart(event)        the worker died and a new one was started in its place
 */
export function createCompute(hooks) {
  let worker = null;
  let seq = 0;
  let inflight = null; // the run computing: { id, state, need, t0, completion }
  let pending = false; // a newer run is due when it returns
  let timer = 0; // a run scheduled, not yet due
  const calls = new Map(); // id → { resolve, reject, onProgress }
  let started = false; // the worker said 'started'
  let restarts = 0; // in a row, without an answer since

  function send(run) {
    inflight = { id: ++seq, t0: performance.now(), ...run };
    worker.postMessage(msg.request('run', inflight.id, { state: run.state, need: run.need }));
    hooks.onSent(run.need, !!run.completion);
  }

  /** Sends the newest run, or, while one computes, marks it due for when that one returns. */
  function request() {
    timer = 0; // due: a run is no longer only scheduled
    if (inflight) {
      pending = true;
      return;
    }
    send({ ...hooks.next(), completion: false });
    hooks.onBusy();
  }

  /** The newest run now (a keystroke: it reaches the worker in its input event), or queued behind the one computing. */
  function now() {
    clearTimeout(timer);
    timer = 0;
    hooks.onBusy();
    request();
  }

  /** The newest run, sent in `delay` ms (a newer call moves it). */
  function schedule(delay = 120) {
    clearTimeout(timer);
    hooks.onBusy();
    timer = setTimeout(request, delay);
  }

  /**
   * The same input run again for every part (`state`: the trace's own, `serial`: its number, given back with the
   * answer); only when nothing else is due. Returns whether it was sent.
   */
  function complete(state, serial) {
    if (inflight || pending || timer) return false;
    send({ state, need: { all: true, full: true }, completion: true, serial });
    return true;
  }

  /** A request other than a run: a promise of { value, ms }; `onProgress(fraction)` while it works. */
  function call(kind, args, onProgress = null) {
    const id = ++seq;
    const answer = new Promise((resolve, reject) => calls.set(id, { resolve, reject, onProgress }));
    worker.postMessage(msg.request(kind, id, args));
    answer.id = id; // what a 'cancel' request names
    return answer;
  }

  /** The worker's error event: before it started, it cannot start; after, it died (or is in an unknown state). */
  function onError(e) {
    if (!started || restarts >= MAX_RESTARTS) {
      hooks.onFailed(e, started);
      return;
    }
    restarts += 1;
    worker.terminate();
    started = false;
    const lost = new Error('the compute worker stopped and was restarted; try again');
    for (const c of calls.values()) c.reject(lost);
    calls.clear();
    worker = hooks.start(onMessage, onError);
    hooks.onRestart(e);
    const run = inflight;
    inflight = null;
    if (run?.completion) send(run); // the same trace's missing parts, asked for again
    else if (run || pending) {
      pending = false;
      request(); // the newest input, computed by the new worker
    }
  }

  function onMessage(e) {
    const m = e.data;
    if (m.type === 'started') { // the worker is up (web/boot.js waits for it)
      started = true;
      return;
    }
    if (m.type === 'done') restarts = 0;
    if (m.type === 'ready') {
      const { type, ...info } = m;
      hooks.onReady(info);
      return;
    }
    if (m.type === 'progress') {
      calls.get(m.id)?.onProgress?.(m.fraction);
      return;
    }
    if (m.kind !== 'run') {
      const c = calls.get(m.id);
      calls.delete(m.id);
      if (m.ok) c?.resolve({ value: m.value, ms: m.ms });
      else c?.reject(Object.assign(new Error(m.error.message), { name: m.error.name }));
      return;
    }
    const run = inflight;
    inflight = null;
    if (pending) {
      pending = false;
      request(); // stale: draw only the newest
      return;
    }
    hooks.onRun(m, run);
  }

  return {
    attach(w) { worker = w; },
    now,
    schedule,
    complete,
    call,
    onMessage,
    onError,
    /** Test hook: makes the worker die of an uncaught error (harmless unless called). */
    crash: () => worker.postMessage(msg.request('crash', ++seq, {})),
    /** A run is due, computing or about to be sent (a completion counts). */
    busy: () => !!(inflight || pending || timer),
    /** A newer input is on its way: its trace will replace the one drawn (a completion does not count). */
    newer: () => !!((inflight && !inflight.completion) || pending || timer),
  };
}
