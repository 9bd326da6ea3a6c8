// Steps 6–10 of the guided path (layer: web): learned projections ("it" in the trained english model),
// positional encoding, multi-head attention, the Transformer block (LayerNorm's μ and σ²), causal masking and
// greedy decoding. Same contract as steps-a.js: render(ctx, st) → { body, task }.
import { h, fmt, tokenLabel } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';
import { live, tex, p, sub, matrix, bars, numberField, textField } from './ui.js';
import { meanVar, meanDistance, argmax } from './numbers.js';

/** A canvas heatmap, one pixel per cell scaled by CSS; `lut` a colors.js map, values mapped from [lo, hi]. */
function heat(values, rows, cols, { lut = colors.weights, lo = 0, hi = 1, label, cls = 'l-heat' } = {}) {
  const c = h('canvas', { width: cols, height: rows, class: cls, role: 'img', 'aria-label': label });
  const g = c.getContext('2d');
  const img = g.createImageData(cols, rows);
  for (let i = 0; i < rows * cols; i++) {
    const v = values[i];
    const rgb = Number.isFinite(v) ? lut.rgb.subarray(Math.max(0, Math.min(255, Math.round(((v - lo) / (hi - lo)) * 255))) * 3) : colors.MASKED;
    img.data.set([rgb[0], rgb[1], rgb[2], 255], i * 4);
  }
  g.putImageData(img, 0, 0);
  return c;
}

function select(labelKey, options, value, onChange, id) {
  const el = h('select', { id }, options.map(([v, text]) => h('option', { value: String(v), text, selected: v === value })));
  el.addEventListener('change', () => onChange(Number(el.value)));
  return h('label', { class: 'l-field' }, h('span', { text: t(labelKey) }), el);
}

const range = (n) => Array.from({ length: n }, (_, i) => i);

// ---- 6 · learned projections: where does "it" look in the trained english model?

const IT_TEXT = 'The animal didn\'t cross the street because it was too tired';

/** The query position: the 't' of the first " it" in the text, else the last character. */
const itPosition = (text) => {
  const i = text.indexOf(' it');
  return i >= 0 ? i + 2 : text.length - 1;
};

const projections = {
  id: 'projections',
  async render(ctx, st) {
    const model = await ctx.model('english');
    st.text ??= IT_TEXT;
    st.layer ??= 2;
    st.head ??= 0;
    let row = null;
    const view = live(ctx, () => {
      const r = model.run(st.text);
      const n = r.n; const H = r.numHeads;
      const q = Math.min(itPosition(st.text), n - 1);
      const w = r.layers[st.layer].attention.weights;
      row = w.subarray((st.head * n + q) * n, (st.head * n + q) * n + q + 1);
      const order = range(q + 1).sort((a, b) => row[b] - row[a]).slice(0, 5);
      const strip = h('p', { class: 'l-strip', 'aria-label': t('s6.stripLabel') }, range(n).map((j) => {
        const chip = h('span', { class: j === q ? 'l-chip l-chip-q' : 'l-chip', text: r.tokens[j] === ' ' ? '␣' : r.tokens[j] });
        if (j <= q) {
          const i = Math.round(Math.min(1, row[j] / Math.max(...row)) * 255) * 3;
          chip.style.background = `rgb(${colors.weights.rgb[i]},${colors.weights.rgb[i + 1]},${colors.weights.rgb[i + 2]})`;
          chip.style.color = row[j] / Math.max(...row) > 0.55 ? '#111' : '#fff';
        }
        return chip;
      }));
      return [h('p', { class: 'l-cap', text: t('s6.shapes', { d: r.dModel, hd: r.headDim, H }) }),
        h('p', { class: 'l-cap', text: t('s6.query', { pos: q + 1, layer: st.layer + 1, head: st.head + 1 }) }), strip,
        h('p', { class: 'l-cap', text: t('s6.top') }),
        bars(order.map((j) => row[j]), order.map((j) => `${tokenLabel(r.tokens[j])} @${j + 1}`), { key: 'top', max: 1 })];
    });
    const cfg = model.config;
    view.update();
    return {
      body: [p('s6.p1'), tex(String.raw`\mathbf Q = \mathbf X\mathbf W_Q,\quad \mathbf K = \mathbf X\mathbf W_K,\quad \mathbf V = \mathbf X\mathbf W_V`), tex(String.raw`\operatorname{Attention} = \operatorname{softmax}\!\Big(\frac{\mathbf Q\mathbf K^\top}{\sqrt{d_k}}\Big)\mathbf V`),
        p('s6.p2'), sub('s6.live'),
        h('div', { class: 'l-fields' }, textField('s6.text', st.text, (v) => { st.text = v; view.update(); }, 's6-text'),
          select('s6.layer', range(cfg.numLayers).map((i) => [i, String(i + 1)]), st.layer, (v) => { st.layer = v; view.update(); }, 's6-layer'),
          select('s6.head', range(cfg.numHeads).map((i) => [i, String(i + 1)]), st.head, (v) => { st.head = v; view.update(); }, 's6-head')),
        view.el, p('s6.p3')],
      task: { key: 's6.try', tol: 0.005, answer: () => (row ? Math.max(...row) : NaN), explain: 's6.explain' },
    };
  },
};

// ---- 7 · positional encoding: sin/cos, wavelengths, relative offsets as rotations

const PE_N = 48;
const PE_D = 16;

/** The context vector of "dog" in "dog bites man" and "man bites dog", without and with PE (4-d, simple attention). */
const ORDER_X = { dog: [0.9, 0.1, 0.3, 0.2], bites: [0.1, 0.8, 0.2, 0.5], man: [0.7, 0.2, 0.6, 0.1] };
export function orderContexts(as) {
  const pe = as.positionalEncoding({ n: 3, d: 4 });
  const rows = [];
  for (const withPe of [false, true]) {
    for (const words of [['dog', 'bites', 'man'], ['man', 'bites', 'dog']]) {
      const x = Float32Array.from(words.flatMap((w, i) => ORDER_X[w].map((v, j) => v + (withPe ? pe[i * 4 + j] : 0))));
      const at = words.indexOf('dog');
      rows.push(...as.simpleSelfAttention({ x, n: 3, d: 4 }).context.subarray(at * 4, at * 4 + 4));
    }
  }
  return Float32Array.from(rows);
}

const positional = {
  id: 'positional',
  render(ctx, st) {
    st.pos ??= 5;
    st.offset ??= 3;
    const pe = ctx.as.positionalEncoding({ n: PE_N, d: PE_D });
    const waves = range(PE_D / 2).map((i) => 2 * Math.PI * 10000 ** ((2 * i) / PE_D));
    const view = live(ctx, () => {
      const { pos, offset } = st;
      const pair = 1; // dimensions 2 and 3: ω = 10000^(-2/16)
      const om = 10000 ** (-(2 * pair) / PE_D);
      const a = pe[pos * PE_D + 2 * pair]; const b = pe[pos * PE_D + 2 * pair + 1];
      const rot = [Math.cos(om * offset) * a + Math.sin(om * offset) * b, -Math.sin(om * offset) * a + Math.cos(om * offset) * b];
      const at = Math.min(pos + offset, PE_N - 1);
      return [h('p', { class: 'l-cap', text: t('s7.rotation', { p: pos, k: offset }) }),
        matrix(Float32Array.from([a, b, rot[0], rot[1], pe[at * PE_D + 2], pe[at * PE_D + 3]]), 3, 2, {
          rowLabels: [t('s7.rowP', { p: pos }), t('s7.rowRot', { k: offset }), t('s7.rowPk', { pk: pos + offset })], colLabels: ['sin', 'cos'], key: 'rot', shade: false,
        })];
    });
    view.update();
    return {
      body: [p('s7.p1'), tex(String.raw`PE_{(p,\,2i)} = \sin\!\Big(\frac{p}{10000^{2i/d}}\Big)`), tex(String.raw`PE_{(p,\,2i+1)} = \cos\!\Big(\frac{p}{10000^{2i/d}}\Big)`), tex(String.raw`\mathbf x_p = \mathbf e_p + PE_p`),
        sub('s7.live0'), p('s7.order', {}, 'l-cap'),
        matrix(orderContexts(ctx.as), 4, 4, { rowLabels: [t('s7.ordA'), t('s7.ordB'), t('s7.ordApe'), t('s7.ordBpe')], colLabels: ['1', '2', '3', '4'], key: 'ord', shade: false }),
        p('s7.p2'), sub('s7.live1', { n: PE_N, d: PE_D }),
        heat(Float32Array.from({ length: PE_N * PE_D }, (_, k) => pe[(k % PE_N) * PE_D + Math.floor(k / PE_N)]), PE_D, PE_N, { lut: colors.signed, lo: -1, hi: 1, label: t('s7.heatLabel', { n: PE_N, d: PE_D }), cls: 'l-heat l-heat-pe' }),
        matrix(Float32Array.from(waves), 1, PE_D / 2, { colLabels: range(PE_D / 2).map((i) => `i=${i}`), digits: 1, shade: false, key: 'wave', caption: t('s7.waves') }),
        sub('s7.live2'), p('s7.p3'), tex(String.raw`\begin{pmatrix} PE_{(p+k,\,2i)} \\ PE_{(p+k,\,2i+1)} \end{pmatrix} = \begin{pmatrix} \cos k\omega_i & \sin k\omega_i \\ -\sin k\omega_i & \cos k\omega_i \end{pmatrix} \begin{pmatrix} PE_{(p,\,2i)} \\ PE_{(p,\,2i+1)} \end{pmatrix}`),
        h('div', { class: 'l-fields' }, numberField('s7.p', st.pos, (v) => { st.pos = Math.round(v); view.update(); }, { min: 0, max: 20, step: 1, range: true, id: 's7-p' }),
          numberField('s7.k', st.offset, (v) => { st.offset = Math.round(v); view.update(); }, { min: 0, max: 20, step: 1, range: true, id: 's7-k' })),
        view.el],
      task: { key: 's7.try', tol: 0.001, answer: () => pe[2 * PE_D + 1], explain: 's7.explain' },
    };
  },
};

// ---- 8 · multi-head attention: the trained english model's heads side by side

const heads = {
  id: 'heads',
  async render(ctx, st) {
    const model = await ctx.model('english');
    st.text ??= 'the cat sat on the mat, and the dog sat too';
    st.layer ??= 0;
    let dist = null;
    const view = live(ctx, () => {
      const r = model.run(st.text);
      const n = r.n; const H = r.numHeads;
      const w = r.layers[st.layer].attention.weights;
      dist = meanDistance(w, H, n);
      return [h('div', { class: 'l-heads' }, range(H).map((hd) => h('figure', { class: 'l-head' },
        heat(w.subarray(hd * n * n, (hd + 1) * n * n), n, n, { label: t('s8.headLabel', { head: hd + 1, layer: st.layer + 1 }) }),
        h('figcaption', {}, t('s8.head', { head: hd + 1 }), ' · ', t('s8.dist'), ' ', h('b', { text: fmt(dist[hd], 2), dataset: { k: `dist-${hd}` } }))))),
      p('s8.shapes', { H, hd: r.headDim, d: r.dModel }, 'l-cap')];
    });
    view.update();
    return {
      body: [p('s8.p1'), tex(String.raw`\operatorname{head}_h = \operatorname{Attention}(\mathbf X\mathbf W_Q^{(h)}, \mathbf X\mathbf W_K^{(h)}, \mathbf X\mathbf W_V^{(h)})`), tex(String.raw`\operatorname{MultiHead}(\mathbf X) = [\operatorname{head}_1;\dots;\operatorname{head}_H]\,\mathbf W_O`),
        p('s8.p2'), tex(String.raw`\bar d_h = \frac1n\sum_i\sum_j \alpha^{(h)}_{ij}\,|i-j|`), sub('s8.live'),
        h('div', { class: 'l-fields' }, textField('s8.text', st.text, (v) => { st.text = v; view.update(); }, 's8-text'),
          select('s8.layer', range(model.config.numLayers).map((i) => [i, String(i + 1)]), st.layer, (v) => { st.layer = v; view.update(); }, 's8-layer')),
        view.el],
      task: { key: 's8.try', tol: 0, answer: () => (dist ? argmax(dist) + 1 : NaN), explain: 's8.explain' },
    };
  },
};

// ---- 9 · the Transformer block: residuals, LayerNorm (μ, σ²), the feed-forward network, pre- vs post-norm

const parseVector = (text) => String(text).split(/[\s,，;]+/).filter(Boolean).map(Number);

const block = {
  id: 'block',
  render(ctx, st) {
    st.x ??= '1, 2, 3, 4';
    let out = null;
    const view = live(ctx, () => {
      const x = parseVector(st.x);
      out = null;
      if (x.length < 2 || !x.every(Number.isFinite)) return p('s9.bad', {}, 'l-error');
      const y = ctx.as.layerNorm({ x: Float32Array.from(x), n: 1, d: x.length });
      out = y;
      const { mean, variance } = meanVar(Float32Array.from(x));
      return [h('p', { class: 'l-cap' }, 'μ = ', h('b', { text: fmt(mean, 4), dataset: { k: 'mu' } }), ' · σ² = ', h('b', { text: fmt(variance, 4), dataset: { k: 'var' } })),
        matrix(Float32Array.from([...x, ...y]), 2, x.length, { rowLabels: ['x', 'LayerNorm(x)'], digits: 4, key: 'ln', shade: false })];
    });
    view.update();
    return {
      body: [p('s9.p1'), p('s9.post', {}, 'l-cap'), tex(String.raw`\begin{aligned} \mathbf x &\leftarrow \operatorname{LN}(\mathbf x + \operatorname{MHA}(\mathbf x)) \\ \mathbf x &\leftarrow \operatorname{LN}(\mathbf x + \operatorname{FFN}(\mathbf x)) \end{aligned}`),
        p('s9.pre', {}, 'l-cap'), tex(String.raw`\begin{aligned} \mathbf x &\leftarrow \mathbf x + \operatorname{MHA}(\operatorname{LN}(\mathbf x)) \\ \mathbf x &\leftarrow \mathbf x + \operatorname{FFN}(\operatorname{LN}(\mathbf x)) \end{aligned}`),
        p('s9.p2'), tex(String.raw`\operatorname{LN}(\mathbf x)_i = \gamma_i\,\frac{x_i - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta_i`), tex(String.raw`\mu = \frac1d\sum_i x_i,\quad \sigma^2 = \frac1d\sum_i (x_i-\mu)^2`),
        tex(String.raw`\operatorname{FFN}(\mathbf x) = \operatorname{GELU}(\mathbf x\mathbf W_1 + \mathbf b_1)\,\mathbf W_2 + \mathbf b_2`),
        p('s9.p3'), sub('s9.live'),
        h('div', { class: 'l-fields' }, textField('s9.x', st.x, (v) => { st.x = v; view.update(); }, 's9-x')), view.el],
      task: { key: 's9.try', tol: 0.001, answer: () => (out ? out[0] : NaN), explain: 's9.explain' },
    };
  },
};

// ---- 10 · causal masking and decoding: the triangle, the next-token softmax, greedy generation

const causal = {
  id: 'causal',
  async render(ctx, st) {
    const model = await ctx.model('english');
    st.prompt ??= 'The cat sat on th';
    let n = 0;
    const gen = h('p', { class: 'l-cap l-mono', dataset: { k: 'generated' } });
    const view = live(ctx, () => {
      const r = model.run(st.prompt);
      n = r.n;
      const m = Math.min(n, 8);
      const sc = Float32Array.from({ length: m * m }, (_, k) => r.layers[0].attention.scores[Math.floor(k / m) * n + (k % m)]);
      gen.textContent = '';
      return [h('p', { class: 'l-cap', text: t('s10.maskNote', { m }) }),
        matrix(sc, m, m, { rowLabels: r.tokens.slice(0, m), colLabels: r.tokens.slice(0, m), digits: 2, key: 'sc', shade: false }),
        h('p', { class: 'l-cap', text: t('s10.next') }),
        bars(r.next.probs, r.next.tokens, { key: 'next', max: 1 })];
    });
    const button = h('button', { type: 'button', class: 'l-btn', id: 's10-generate', text: t('s10.generate') });
    button.addEventListener('click', () => {
      gen.textContent = st.prompt + model.generate(st.prompt, { maxNewTokens: 40 }).text;
      ctx.drawn();
    });
    view.update();
    return {
      body: [p('s10.p1'), tex(String.raw`s_{ij} = \frac{\mathbf q_i\cdot\mathbf k_j}{\sqrt{d_k}} + m_{ij}`), tex(String.raw`m_{ij} = 0 \;(j \le i),\;\; m_{ij} = -\infty \;(j > i)`),
        tex(String.raw`P(x_{t+1} \mid x_{\le t}) = \operatorname{softmax}(\mathbf h_t \mathbf U)`),
        h('p', { class: 'l-p' }, t('s10.p2'), ' ', h('a', { href: '../', text: t('s10.fullPage') })), sub('s10.live'),
        h('div', { class: 'l-fields' }, textField('s10.prompt', st.prompt, (v) => { st.prompt = v; view.update(); }, 's10-prompt')),
        view.el, h('div', { class: 'l-fields' }, button), gen, p('s10.p3')],
      task: { key: 's10.try', tol: 0, answer: () => (n * (n - 1)) / 2, explain: 's10.explain', explainVars: () => ({ n }) },
    };
  },
};

export const STEPS_B = [projections, positional, heads, block, causal];
