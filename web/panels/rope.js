// Panel 3b: rotary position embedding (issue 28), beside the sinusoidal table of panel 3. The loaded model's RoPE
// settings (model.config.rope) or, for a model without RoPE, Llama 3.2's (θ = 500000, llama3 ×32); a seeded sample q
// and k of one head (or q = k = 1, which shows the long-range decay). The panel's own controls (positions m, n, a
// shift s, the offset range) stay in this panel; each change asks the worker for as.ropeExplain and redraws.
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { mulberry32 } from '../rng.js';
import { ropeView } from '../views/rope.js';

/** Llama 3.2 1B's config.json: rope_theta 500000, rope_scaling llama3 factor 32, head_dim 64. */
export const LLAMA32 = Object.freeze({
  headDim: 64, theta: 500000, maxPositions: 131072,
  scaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 },
});
const RANGES = [64, 512, 4096, 32768];
const local = { m: 5, n: 2, shift: 100, range: 512, vectors: 'sample' };
let last = null; // the context of the last draw (controls redraw with it)
let asked = 0;

/** The RoPE settings the panel draws: the model's (a RoPE checkpoint), else Llama 3.2's. */
export function ropeSettings(config) {
  const r = config?.rope;
  if (!r) return { source: 'default', settings: LLAMA32 };
  const { theta, rotaryDim, maxPositions, type, ...scaling } = r;
  const headDim = config.headDim;
  return {
    source: 'model',
    settings: { headDim, theta, partialRotaryFactor: rotaryDim / headDim, maxPositions, scaling: { type, ...scaling } },
  };
}

function vectors(d, kind) {
  if (kind === 'ones') return [new Float32Array(d).fill(1), new Float32Array(d).fill(1)];
  const r = mulberry32(28);
  const v = () => Float32Array.from({ length: d }, () => 2 * r() - 1);
  return [v(), v()];
}

function control(name, label, input) {
  return h('label', { class: 'ctl' }, h('span', { text: label }), input);
}

function controls(ctx) {
  const num = (name, max) => {
    const el = h('input', { type: 'number', min: 0, max, step: 1, value: String(local[name]), dataset: { rope: name } });
    el.addEventListener('change', () => {
      const v = Math.trunc(Number(el.value));
      if (Number.isFinite(v) && v >= 0 && v <= max) { local[name] = v; redraw(ctx); }
    });
    return el;
  };
  const sel = (name, options) => {
    const el = h('select', { dataset: { rope: name } }, ...options.map(([v, text]) => h('option', { value: String(v), text })));
    el.value = String(local[name]);
    el.addEventListener('change', () => { local[name] = typeof local[name] === 'number' ? Number(el.value) : el.value; redraw(ctx); });
    return el;
  };
  return h('div', { class: 'agg-controls rope-controls' },
    control('m', t('rope.m'), num('m', 100000)),
    control('n', t('rope.n'), num('n', 100000)),
    control('shift', t('rope.shift'), num('shift', 1000000)),
    control('range', t('rope.range'), sel('range', RANGES.map((r) => [r, `0 … ${r}`]))),
    control('vectors', t('rope.vectors'), sel('vectors', [['sample', t('rope.sample')], ['ones', t('rope.ones')]])));
}

async function redraw(ctx) {
  const id = ++asked;
  const { source, settings } = ropeSettings(ctx.trace.config);
  const [q, k] = vectors(settings.headDim, local.vectors);
  const { m, n, shift } = local;
  const args = { ...settings, q, k, m, n };
  const out = $('rope-out');
  try {
    const [e, moved] = await Promise.all([
      ctx.act.rope({ ...args, from: Math.min(0, m - n), to: Math.max(local.range, m - n) }),
      ctx.act.rope({ ...args, m: m + shift, n: n + shift }),
    ]);
    if (id !== asked || !out.isConnected) return;
    replace(out, ropeView({ settings, source, q, k, m, n, shift, e, moved, width: ctx.width['rope-view'] }));
  } catch (err) {
    if (id === asked && out.isConnected) replace(out, h('p', { class: 'note error', role: 'alert', text: String(err?.message ?? err) }));
  } finally {
    if (id === asked) document.documentElement.dataset.rope = String(id);
  }
}

export const rope = {
  id: 'panel-rope',
  box: 'rope-view',
  shows: (ctx) => !ctx.trace.example,
  needs: () => [],
  // not the trace's serial: the panel depends on the model's RoPE settings only, so typing asks the worker nothing
  key: (ctx) => [JSON.stringify(ropeSettings(ctx.trace.config)), ctx.width['rope-view'], ctx.lang].join('|'),
  draw(ctx) {
    last = ctx;
    replace($('rope-view'), controls(ctx), h('div', { id: 'rope-out', 'aria-live': 'polite' }));
    redraw(ctx);
    return null;
  },
};

/** For tests and lessons: the panel's local settings (a copy) and a way to set them. */
export const ropeLocal = Object.freeze({
  get: () => ({ ...local }),
  set(next) {
    Object.assign(local, next);
    if (last) rope.draw(last);
  },
});
