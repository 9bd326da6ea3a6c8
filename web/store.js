// The page's store (layer: web; transformer-explainer's src/store, playground's state.ts): the link's state
// (web/state.js), the view flags that are not in the link, what the worker has given (trace, module info), and
// the one table of what a change of each key triggers. Panels and controls change the store; the effects
// registered by app.js (recompute, redraw, family views, the link) follow from the table, in one order.
import { parse } from './state.js';

/** Every effect, in the order one change runs them. */
export const EFFECTS = Object.freeze([
  'recompute-now', // a run sent at once (or queued behind the one computing): a keystroke reaches the worker in its event
  'link', // the link written now
  'link-soon', // the link written in a task of its own (replaceState takes 10–20 ms with a long text)
  'controls', // the controls' visibility follows the state
  'redraw', // the panels drawn again from the trace held
  'refetch', // a run, only if the trace lacks the shown layer in full
  'recompute', // a run after the change's delay (a newer change moves it)
  'family:additive', // the additive-attention worker asked again
  'family:regression', // the kernel-regression worker asked again
  'family-view:additive', // the additive view drawn again from its last result
  'language', // the UI language switched
]);

const TYPED = ['recompute-now', 'link-soon', 'controls'];
const RECOMPUTE = ['link', 'controls', 'recompute'];
const REDRAW = ['link', 'redraw'];
const ADDITIVE = ['link', 'family:additive'];
const REGRESSION = ['link', 'family:regression'];

/** What a change of each key triggers. */
export const TRIGGERS = Object.freeze({
  text: TYPED, source: TYPED, target: TYPED,
  mode: RECOMPUTE, model: RECOMPUTE, tokenizer: RECOMPUTE, arch: RECOMPUTE, attention: RECOMPUTE, positional: RECOMPUTE,
  activation: RECOMPUTE, normFirst: RECOMPUTE, padding: RECOMPUTE, dModel: RECOMPUTE, numHeads: RECOMPUTE, numLayers: RECOMPUTE,
  dFF: RECOMPUTE, seed: RECOMPUTE, base: RECOMPUTE, pePositions: RECOMPUTE, padTo: RECOMPUTE, grow: RECOMPUTE,
  ex: ['link', 'recompute'], // the worked example's embeddings
  layer: ['link', 'redraw', 'refetch'],
  heads: ['link-soon', 'redraw'],
  token: ['link-soon', 'redraw'],
  agg: REDRAW, thr: REDRAW, topk: REDRAW, nosink: REDRAW,
  words: ['redraw'], // not in the link
  adNq: ADDITIVE, adNk: ADDITIVE, adHidden: ADDITIVE, adValid: ADDITIVE, adSeed: ADDITIVE,
  adQ: ['link', 'family-view:additive'],
  krW: REGRESSION, krSeed: REGRESSION,
  lang: ['link', 'language'],
});

/** Keys whose change shows another model or input: its heads and layer start over. */
const NEW_MODEL = ['mode', 'numHeads', 'attention', 'model'];

/** A store whose state is read from `hash` (the user's checkpoint is not in a link: a link naming it gets 'random'). */
export function createStore(hash) {
  const state = parse(hash);
  if (state.model === 'checkpoint' || state.model === 'file') state.model = 'random'; // nor an attention file
  const view = { words: false, nosink: false }; // words: merge sub-words into words (attention panel, model view); nosink: hide the first token's weight (web/sinks.js)
  const data = {
    trace: null, // the newest trace drawn
    traceState: null, // the state it was computed for
    serial: 0, // one number per trace received (panels' keys)
    runs: 0, // runs finished (drawn or failed)
    info: {
      simd: null, threads: null, startup: null, version: null, model: null, ready: false, failed: false, restarted: null, pretrained: false, bundled: [], checkpoint: null, attnFile: null,
    },
    timing: { compute: null, render: null, total: null },
    error: null, // the message shown in the error banner
    picking: false, // "your own checkpoint…" chosen, no checkpoint loaded yet
    pickingFile: false, // "an attention file…" chosen, no file open yet
    follow: false, // the causal panel generated a token: the next trace shows its row
  };
  const handlers = new Map(); // effect → fn(opts)

  function run(effects, opts) {
    for (const e of EFFECTS) if (effects.has(e)) handlers.get(e)?.(opts);
  }
  const set = (key, value) => { if (key in view) view[key] = value; else state[key] = value; };

  return {
    state,
    view,
    data,
    /** Registers what effect `name` does. */
    on(name, fn) {
      if (!EFFECTS.includes(name)) throw new TypeError(`store.on: effect (${name}) must be one of ${EFFECTS.join(', ')}`);
      handlers.set(name, fn);
    },
    /** Sets `values` and runs what their keys trigger (even when a value is unchanged: a click redraws). */
    update(values, opts = {}) {
      const effects = new Set();
      for (const [k, v] of Object.entries(values)) {
        set(k, v);
        for (const e of TRIGGERS[k]) effects.add(e);
      }
      run(effects, opts);
    },
    /**
     * A control's change of `key` (nothing when unchanged): another input or model shows its output whole, a new
     * model starts at layer 0 with every head; then what the key triggers. `opts.delay`: the recompute's (ms).
     */
    change(key, value, opts = {}) {
      if (state[key] === value) return;
      state[key] = value;
      if (key !== 'grow' && state.grow) state.grow = 0;
      if (NEW_MODEL.includes(key)) {
        state.heads = 'all';
        state.layer = 0;
      }
      if (key === 'numLayers' && state.layer >= value) state.layer = 0;
      run(new Set(TRIGGERS[key]), opts);
    },
  };
}
