// The attention-family client (layer: web): additive attention and kernel regression computed in their own worker
// (./family-worker.js), apart from the model's, so dragging the bandwidth slider never waits for a model run. One
// request per kind in flight, the newest parameters sent when it returns, at most one draw per animation frame —
// dragging never queues stale work. The worker is started on the first request (after the first model result, so
// its module instance does not compete with the first trace). Marks: html[data-<kind>-busy], html[data-<kind>-runs].
import { t } from './i18n.js';

const marks = document.documentElement.dataset;

/** The worker's parameters for `kind` from the page state. */
function paramsOf(kind, s) {
  if (kind === 'additive') return { nq: s.adNq, nk: s.adNk, hidden: s.adHidden, validLen: Math.min(s.adValid, s.adNk), seed: s.adSeed };
  return { w: s.krW, seed: s.krSeed };
}

/** `state`: the page's (live); `draw(kind, { result, error })` draws a kind's view. */
export function createFamily(state, draw) {
  let worker = null;
  let seq = 0;
  const fam = Object.fromEntries(['additive', 'regression'].map((k) => [k, {
    busy: false, dirty: false, frame: false, result: null, error: null, runs: 0, params: null,
  }]));

  function request(kind) {
    const f = fam[kind];
    if (f.busy) {
      f.dirty = true;
      return;
    }
    f.busy = true;
    f.dirty = false;
    f.params = paramsOf(kind, state);
    marks[`${kind}Busy`] = '1';
    started().postMessage({ id: ++seq, kind, params: f.params });
  }

  function started() {
    if (worker) return worker;
    worker = new Worker(new URL('./family-worker.js', import.meta.url), { type: 'module' });
    worker.addEventListener('message', onMessage);
    worker.addEventListener('error', (e) => {
      for (const kind of Object.keys(fam)) {
        fam[kind].error = t('error.familyWorker', { message: e.message || t('error.seeConsole') });
        draw(kind, fam[kind]);
      }
    });
    return worker;
  }

  function onMessage(e) {
    const msg = e.data;
    if (msg.type === 'ready') return;
    const f = fam[msg.kind];
    f.busy = false;
    if (f.dirty) {
      request(msg.kind); // stale: draw only the newest
      return;
    }
    f.result = msg.ok ? msg.result : f.result;
    f.error = msg.ok ? null : msg.error.message;
    if (f.frame) return; // a draw is already due this frame: it draws this newer result
    f.frame = true;
    requestAnimationFrame(() => {
      f.frame = false;
      draw(msg.kind, f);
      f.runs += 1;
      marks[`${msg.kind}Runs`] = String(f.runs);
      if (!f.busy) delete marks[`${msg.kind}Busy`];
    });
  }

  return {
    request,
    /** Draws `kind`'s view again from its last result (a resize, the additive view's query, a language switch). */
    redraw(kind) { draw(kind, fam[kind]); },
    /** Kinds that have something to show. */
    drawn: () => Object.keys(fam).filter((k) => fam[k].result || fam[k].error),
    /** Each kind's last result, its parameters, error and run count (window.__attnscope.family). */
    snapshot: () => Object.freeze(Object.fromEntries(Object.entries(fam).map(([k, f]) => [k, Object.freeze({
      result: f.result, params: f.params, error: f.error, runs: f.runs,
    })]))),
  };
}
