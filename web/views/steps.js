// Step-by-step view (layer: web): for one query token i, one head h, one layer, the attention math in
// the order the core computes it — q_i, K, q_i·k_j, ÷√dₖ, mask, softmax (max, x − max, exp, Σ, ÷Σ),
// weights × V, concat and ×W_O, then each sub-block's residual sum and LayerNorm (μ, σ², (x−μ)/√(σ²+ε),
// ·γ+β) in post- or pre-norm order, the FFN (hidden, output) and, for encoder–decoder decoder layers, the
// cross-attention (the target token's q against the source keys). Views draw, they do not compute: every
// number is the module's, from the layer's full trace — dot products (attention.dots), the scale and the
// scaled scores, the softmax's max and Σexp (rowMax, rowSum; exp(x − max) is shown as weights × Σ),
// LayerNorm μ and σ² (normKMean, normKVar) — and only the element-wise steps between shown numbers
// (x − max, (x − μ)/√(σ² + ε)) are spelled out here.
import { h, fmt, tokenLabel } from '../dom.js';
import * as colors from '../colors.js';
import { heatmap } from './heatmap.js';
import { t } from '../i18n.js';

const row = (a, i, w) => a.subarray(i * w, (i + 1) * w);

// Rows longer than this are windowed: only the cells in view (and a margin) are in the DOM, made as the row
// scrolls — at 512 keys a step view held ~5,000 number cells, 70 ms to build on every head or token change.
const WINDOWED_AFTER = 96;
const CELL_PX = 60; // a windowed cell's pitch: .num's min-width 58 px + the row's 2 px gap (style.css .numtrack)
const WINDOW_CELLS = 40; // cells made before the row's width is known (2,400 px)

/** A labelled row of numbers (one per key, or one per dimension), coloured by value. */
function numRow({ labels, values, map = colors.signed, domain, name, emphasize }) {
  const [lo, hi] = domain ?? colors.domainOf(values, 'signed');
  // focusable, so a row wider than the page scrolls from the keyboard too (axe: scrollable-region-focusable)
  const box = h('div', {
    class: 'numrow', dataset: { name: name ?? '' }, 'data-no-i18n': '', tabindex: 0,
  });
  const cell = (v, j) => {
    // one element per number (label on the first line, styled by ::first-line): rows of 128 keys stay cheap
    const el = h('span', {
      class: `num${emphasize === j ? ' emph' : ''}`,
      dataset: { value: Number.isFinite(v) ? v : String(v), j },
      text: `${labels ? tokenLabel(labels[j], 8) : String(j)}\n${fmt(v)}`,
    });
    if (Number.isFinite(v)) {
      el.style.background = colors.cssColor(map, v, lo, hi);
      el.style.color = colors.textOn(map, v, lo, hi);
    } else el.classList.add('masked');
    return el;
  };
  if (values.length <= WINDOWED_AFTER) {
    values.forEach((v, j) => box.append(cell(v, j)));
    return box;
  }
  box.classList.add('windowed');
  box.dataset.count = String(values.length);
  const track = h('div', { class: 'numtrack' });
  track.style.width = `${values.length * CELL_PX}px`;
  box.append(track);
  const made = new Map(); // j -> cell
  const show = (first, last) => {
    for (const [j, el] of made) if (j < first || j > last) { el.remove(); made.delete(j); }
    for (let j = Math.max(0, first); j <= Math.min(values.length - 1, last); j++) {
      if (made.has(j)) continue;
      const el = cell(values[j], j);
      el.style.left = `${j * CELL_PX}px`;
      made.set(j, el);
      track.append(el);
    }
  };
  show(0, WINDOW_CELLS - 1);
  let queued = false;
  box.addEventListener('scroll', () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const first = Math.floor(box.scrollLeft / CELL_PX) - 8;
      show(first, first + Math.ceil(box.clientWidth / CELL_PX) + 16);
    });
  }, { passive: true });
  return box;
}

/** A vector: numbers when short, a one-row heatmap (exact values on hover) when long. */
function vec(values, name, width, domain) {
  if (values.length <= 24) return numRow({ values, name, domain });
  return heatmap({
    values, rows: 1, cols: values.length, map: colors.signed, domain, width, cellMax: 14,
    rowName: name, colName: t('axis.dim'), legend: false, dataset: { name },
  });
}

function step(num, title, formula, ...content) {
  return h('section', { class: 'step' },
    h('h4', {}, h('span', { class: 'step-num', text: String(num) }), title),
    formula ? h('p', { class: 'formula', text: formula }) : null,
    ...content);
}

/**
 * The attention steps for query row i of attention trace A (nq query rows, nk keys labelled kTokens):
 * q, K, q·k, scale, mask, softmax, × V, concat, × W_O. Appends to `body`, yielding after each step (a
 * generator, for stepsViewSliced); returns the next step number.
 */
function* attentionSteps(body, k, o) {
  const { A, i, hh, H, d, nk, qTokens, kTokens, simple, vw, prefix = '', kName = t('axis.key'), qFrom = 'x_i', kFrom = 'X' } = o;
  const nq = A.weights.length / (H * nk);
  const hd = d / H;
  const scale = A.scale;
  const Q = o.Q ?? A.q; // simple attention keeps no q/k/v: they are the layer input
  const KV = o.KV ?? A.k;
  const qi = row(Q, i, d).subarray(hh * hd, (hh + 1) * hd);
  const K = new Float32Array(nk * hd);
  const V = new Float32Array(nk * hd);
  for (let j = 0; j < nk; j++) {
    K.set(row(KV, j, d).subarray(hh * hd, (hh + 1) * hd), j * hd);
    V.set(row(o.KV ?? A.v, j, d).subarray(hh * hd, (hh + 1) * hd), j * hd);
  }
  const at = hh * nq + i; // row (head hh, query i) of the [H, nq, nk] and [H, nq] tensors
  const dots = row(A.dots, at, nk);
  const scores = row(A.scores, at, nk);
  const weights = row(A.weights, at, nk);
  const mx = A.rowMax[at];
  const sum = A.rowSum[at];
  const blocked = Array.from(scores, (v) => v === -Infinity);
  const shifted = Array.from(scores, (v) => (v === -Infinity ? -Infinity : v - mx));
  const exps = Array.from(weights, (w) => w * sum); // = exp(x − max): the weights before ÷ Σ
  const headOut = simple ? row(A.output, i, d) : row(A.concat, i, d).subarray(hh * hd, (hh + 1) * hd);
  const self = qTokens === kTokens;
  const emph = self ? i : undefined;
  const n = (name) => `${prefix}${name}`;

  body.append(step(k++, t(prefix ? 'steps.qCross' : 'steps.q', { token: tokenLabel(qTokens[i], 24) }), simple ? t('steps.qSimple') : t('steps.qFormula', { from: qFrom, c0: hh * hd, c1: (hh + 1) * hd - 1, h: hh + 1 }), vec(qi, n('q'), vw)));
  yield;
  body.append(step(k++, t(prefix ? 'steps.keysCross' : 'steps.keys'), simple ? 'K = X' : t('steps.keysFormula', { from: kFrom }), heatmap({
    values: K, rows: nk, cols: hd, map: colors.signed, rowLabels: kTokens, rowName: kName, colName: t('axis.dim'),
    width: vw, cellMax: 20, heightMax: 360, legend: false, dataset: { name: n('K') },
  })));
  yield;
  body.append(step(k++, t('steps.dots'), t('steps.dotsFormula'), numRow({ labels: kTokens, values: dots, name: n('dots'), emphasize: emph })));
  yield;
  body.append(step(k++, simple ? t('steps.noScale') : `÷ √dₖ = ÷ √${hd} = × ${fmt(scale, 6)}`, t(blocked.includes(true) ? 'steps.scaleFormulaBlocked' : 'steps.scaleFormula', { scale: fmt(scale, 6) }),
    numRow({ labels: kTokens, values: Array.from(scores, (v) => (v === -Infinity ? NaN : v)), name: n('scaled'), emphasize: emph })));
  yield;
  const nBlocked = blocked.filter(Boolean).length;
  body.append(step(k++, t('steps.mask'), nBlocked ? t('steps.maskBlocked', { n: nBlocked }) : t('steps.maskNone'),
    numRow({ labels: kTokens, values: scores, name: n('masked'), emphasize: emph })));
  yield;
  body.append(step(k++, 'softmax', t('steps.softmaxFormula', { max: fmt(mx), sum: fmt(sum) }),
    h('div', { class: 'sub', text: 'x − max' }), numRow({ labels: kTokens, values: shifted, name: n('shifted') }),
    h('div', { class: 'sub', text: t('steps.expSub') }), numRow({ labels: kTokens, values: exps, map: colors.magnitude, domain: [0, 1], name: n('exp') }),
    h('div', { class: 'sub', text: t('steps.divide', { sum: fmt(sum) }) }),
    numRow({ labels: kTokens, values: weights, map: colors.weights, domain: [0, 1], name: n('weights') })));
  yield;
  body.append(step(k++, t('steps.timesV'), simple ? 'context_i = Σ_j w_ij · x_j' : t('steps.timesVFormula'), heatmap({
    values: V, rows: nk, cols: hd, map: colors.signed, rowLabels: kTokens, rowName: t(prefix ? 'axis.sourceValue' : 'axis.value'), colName: t('axis.dim'),
    width: vw, cellMax: 20, heightMax: 360, legend: false, title: t('steps.vTitle'), dataset: { name: n('V') },
  }), h('div', { class: 'sub', text: t('steps.headOut') }), vec(headOut, n('head-out'), vw)));
  yield;
  if (!simple && H > 1) {
    body.append(step(k++, t('steps.concat'), t('steps.concatFormula', { H, hd, d }), vec(row(A.concat, i, d), n('concat'), vw)));
  }
  if (!simple && A.output !== A.concat) {
    body.append(step(k++, '× W_O', t(prefix ? 'steps.woCross' : 'steps.wo'), vec(row(A.output, i, d), n('attn-out'), vw)));
  }
  return k;
}

/** LayerNorm of one row with the μ and σ² the module normalised with; `out` is the module's normK row. */
function layerNormStep(num, name, title, src, out, stats, eps, vw, srcLabel = 'x') {
  const { mu, v } = stats;
  const sd = Math.sqrt(v + eps);
  const z = Float32Array.from(src, (t) => (t - mu) / sd);
  return step(num, title, `LN(x) = (x − μ) / √(σ² + ε) · γ + β, ε = ${eps}`,
    h('div', { class: 'sub', text: `x = ${srcLabel}` }), vec(src, `${name}-in`, vw),
    h('p', { class: 'formula', dataset: { name: `${name}-stats`, mu: String(mu), var: String(v) }, text: t('steps.lnStats', { mu: fmt(mu, 6), v: fmt(v, 6), sd: fmt(sd, 6) }) }),
    h('div', { class: 'sub', text: '(x − μ) / √(σ² + ε)' }), vec(z, `${name}-z`, vw),
    h('div', { class: 'sub', text: t('steps.lnOut', { name }) }), vec(out, name, vw));
}

function residualStep(num, title, formula, a, aLabel, b, bLabel, sum, name, vw) {
  return step(num, title, formula,
    h('div', { class: 'sub', text: aLabel }), vec(a, `${name}-a`, vw),
    h('div', { class: 'sub', text: `+ ${bLabel}` }), vec(b, `${name}-b`, vw),
    h('div', { class: 'sub', text: t('steps.resOut', { name }) }), vec(sum, name, vw));
}

/**
 * stepsViewSliced({ trace, layer, head, token, width, onSelect }): the view built in slices: { el, more(ms) } — `el` has the first steps; each more(ms) appends steps for
 * about `ms` milliseconds and says whether any are left (at 512 keys the whole view is ~70 ms of DOM building,
 * which the page spreads over idle periods).
 */
export function stepsViewSliced(o) {
  const g = stepsParts(o);
  const { value: el } = g.next();
  let done = false;
  return {
    el,
    more(ms) {
      const t0 = performance.now();
      while (!done && performance.now() - t0 < ms) done = !!g.next().done;
      return !done;
    },
  };
}

/** The view as a generator: yields the body first, then once after each step appended to it. */
function* stepsParts(o) {
  const { trace, width } = o;
  const L = trace.layers[o.layer];
  const A = L.attention;
  const n = trace.n;
  const i = Math.min(o.token, n - 1);
  const H = A.weights.length / (n * n);
  const d = trace.dModel;
  const hd = d / H;
  const hh = Math.min(o.head, H - 1);
  if (!L.full) {
    // the page asks for the shown layer's full trace; until that run returns this layer has weights only
    yield h('div', { class: 'view-body steps', dataset: { token: i, head: hh, layer: o.layer, pending: '1' } },
      h('p', { class: 'note', text: t('steps.pending', { l: o.layer + 1 }) }));
    return;
  }
  const simple = L.kind === 'simple';
  const toks = trace.tokens;
  const vw = Math.min(width, 640);
  const eps = trace.eps ?? 1e-5;
  const preNorm = !!(trace.normFirst ?? false);
  const dm = trace.dModel;
  const r = (a) => row(a, i, dm);
  const stats = (K) => ({ mu: L[`norm${K}Mean`][i], v: L[`norm${K}Var`][i] });

  const tokenPicker = h('select', { class: 'token-pick', 'aria-label': t('steps.queryToken'), 'data-no-i18n': '' });
  toks.forEach((t, j) => tokenPicker.append(h('option', { value: j, selected: j === i, text: `${j}: ${tokenLabel(t, 24)}` })));
  tokenPicker.addEventListener('change', () => o.onSelect?.(Number(tokenPicker.value)));

  const body = h('div', { class: 'view-body steps', dataset: { token: i, head: hh, layer: o.layer } });
  yield body;
  body.append(h('div', { class: 'steps-head' },
    h('label', {}, t('steps.queryToken'), ' ', tokenPicker),
    h('span', { class: 'note', text: `${t('steps.where', { l: o.layer + 1, h: hh + 1, H, hd })} · ${t(simple ? 'steps.simple' : preNorm ? 'steps.preNorm' : 'steps.postNorm')}` })));
  if (trace.nReal != null && i >= trace.nReal) {
    body.append(h('p', { class: 'note', dataset: { name: 'pad-note' }, text: t('steps.padNote', { token: toks[i] }) }));
  }
  const full = !simple && L.residual1 && L.norm1;
  let k = 1;
  if (full && preNorm) {
    body.append(layerNormStep(k++, 'norm1', t('steps.ln1Pre'), r(L.input), r(L.norm1), stats(1), eps, vw, t('steps.layerInput')));
  }
  k = yield* attentionSteps(body, k, {
    A, i, hh, H, d, nk: n, qTokens: toks, kTokens: toks, simple, vw, Q: simple ? L.input : undefined, KV: simple ? L.input : undefined, qFrom: full && preNorm ? 'norm1_i' : 'x_i', kFrom: full && preNorm ? 'norm1' : 'X',
  });
  if (!full) return;

  // Sub-blocks after self-attention: residual + LayerNorm, [cross-attention], FFN — in the layer's order.
  const cross = L.cross && L.residual3 ? L.cross : null;
  const blocks = cross ? ['attn', 'cross', 'ffn'] : ['attn', 'ffn'];
  let prev = r(L.input);
  let prevName = t('steps.layerInput');
  for (const [bi, b] of blocks.entries()) {
    const K = bi + 1;
    const res = r(L[`residual${K}`]);
    const nrm = r(L[`norm${K}`]);
    const last = bi === blocks.length - 1;
    if (preNorm && bi > 0) {
      body.append(layerNormStep(k++, `norm${K}`, t(b === 'cross' ? 'steps.lnPreCross' : 'steps.lnPreFfn', { K }), prev, nrm, stats(K), eps, vw, prevName));
    }
    let out;
    let outName;
    if (b === 'attn') {
      out = r(A.output);
      outName = t('steps.attnOut');
    } else if (b === 'cross') {
      const S = trace.source;
      body.append(h('h4', { class: 'steps-sub', text: t('steps.crossTitle', { token: tokenLabel(toks[i], 24), n: S ? S.n : '' }) }));
      k = yield* attentionSteps(body, k, {
        A: cross, i, hh, H, d: dm, nk: cross.k.length / dm, qTokens: toks, kTokens: S ? S.tokens : toks, simple: false, vw, prefix: 'cross-', kName: t('axis.sourceKey'),
        qFrom: preNorm ? 'norm2_i' : 'norm1_i', kFrom: t('steps.encoderOut'),
      });
      out = r(cross.output);
      outName = t('steps.crossOut');
    } else {
      const dFF = L.ffHidden.length / n;
      const inName = preNorm ? `norm${K}` : `norm${K - 1}`;
      body.append(step(k++, t('steps.ffnHidden'), t('steps.ffnHiddenFormula', { input: inName, n: dFF }), vec(row(L.ffHidden, i, dFF), 'ffHidden', vw)));
      out = r(L.ffOutput);
      outName = t('steps.ffnOut');
      body.append(step(k++, t('steps.ffnOut'), t('steps.ffnOutFormula'), vec(out, 'ffOutput', vw)));
    }
    body.append(residualStep(k++, t('steps.residual', { K }), `residual${K} = ${preNorm || bi === 0 ? (bi === 0 ? 'x' : `residual${K - 1}`) : `norm${K - 1}`} + ${outName}${preNorm && last ? ` = ${t('steps.layerOut')}` : ''}`,
      prev, prevName, out, outName, res, `residual${K}`, vw));
    if (!preNorm) {
      body.append(layerNormStep(k++, `norm${K}`, `${t('steps.ln', { K })}${last ? ` = ${t('steps.layerOut')}` : ''}`, res, nrm, stats(K), eps, vw, `residual${K}`));
      prev = nrm;
      prevName = `norm${K}`;
    } else {
      prev = res;
      prevName = `residual${K}`;
    }
    yield;
  }
  body.append(step(k++, t('steps.layerOut'), t('steps.layerOutFormula', { name: preNorm ? `residual${blocks.length}` : `norm${blocks.length}` }), vec(r(L.output), 'layer-out', vw)));
}
