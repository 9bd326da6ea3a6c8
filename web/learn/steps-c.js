// Steps 11–13 of the guided path (layer: web; issue 28): rotary position embedding, shared keys and values (GQA/MQA
// and the KV cache), attention sinks. Same contract as steps-a.js: render(ctx, st) → { body, task }. Every number
// comes from the module: as.ropeExplain (the main page's RoPE panel), a model run, as.headScores.
import { h, fmt } from '../dom.js';
import { t } from '../i18n.js';
import { live, tex, p, sub, matrix, bars, numberField } from './ui.js';
import { kvCacheBytes } from '../sinks.js';

/** Llama 3.2 1B's config.json (RoPE and attention shape). */
const LLAMA32 = { headDim: 64, theta: 500000, maxPositions: 131072, scaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 } };
const LLAMA32_SHAPE = { numLayers: 16, numHeads: 32, numKeyValueHeads: 8, headDim: 64 };

// ---- 11 · rotary position embedding: rotate q and k, the score depends on m − n

const rope = {
  id: 'rope',
  render(ctx, st) {
    st.m ??= 7;
    st.n ??= 3;
    st.shift ??= 50;
    let moved = null;
    const ones = new Float32Array(LLAMA32.headDim).fill(1);
    const view = live(ctx, () => {
      const e = ctx.as.ropeExplain({ ...LLAMA32, q: ones, k: ones, m: st.m, n: st.n, from: 0, to: 64 });
      moved = ctx.as.ropeExplain({ ...LLAMA32, q: ones, k: ones, m: st.m + st.shift, n: st.n + st.shift });
      const idx = [0, 8, 16, 24, 31];
      return [h('p', { class: 'l-cap', text: t('s11.angles', { m: st.m }) }),
        matrix(Float32Array.from(idx, (i) => e.angleQ[i]), 1, idx.length, { colLabels: idx.map((i) => `i=${i}`), digits: 4, key: 'angles', shade: false }),
        h('p', { class: 'l-cap', dataset: { k: 'scores' }, text: t('s11.scores', { m: st.m, n: st.n, s: fmt(e.score, 4), m2: st.m + st.shift, n2: st.n + st.shift, s2: fmt(moved.score, 4) }) }),
        h('p', { class: 'l-cap', text: t('s11.decay') }),
        bars(Float32Array.from([0, 4, 16, 32, 64], (d) => e.curve[d]), ['0', '4', '16', '32', '64'], { key: 'decay', max: e.curve[0] })];
    });
    view.update();
    return {
      body: [p('s11.p1'), tex(String.raw`\begin{pmatrix} x'_i \\ x'_{i+d/2} \end{pmatrix} = \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix} \begin{pmatrix} x_i \\ x_{i+d/2} \end{pmatrix},\quad \theta_i = \theta^{-2i/d}`),
        tex(String.raw`(R_m \mathbf q)\cdot(R_n \mathbf k) = \mathbf q \cdot R_{n-m} \mathbf k`), p('s11.p2'), sub('s11.live'),
        h('div', { class: 'l-fields' },
          numberField('s11.m', st.m, (v) => { st.m = Math.max(0, Math.round(v)); view.update(); }, { min: 0, max: 100000, step: 1, id: 's11-m' }),
          numberField('s11.n', st.n, (v) => { st.n = Math.max(0, Math.round(v)); view.update(); }, { min: 0, max: 100000, step: 1, id: 's11-n' }),
          numberField('s11.shift', st.shift, (v) => { st.shift = Math.max(0, Math.round(v)); view.update(); }, { min: 0, max: 100000, step: 1, id: 's11-shift' })),
        view.el, p('s11.p3')],
      task: { key: 's11.try', tol: 0.001, answer: () => (moved ? moved.score : NaN), explain: 's11.explain' },
    };
  },
};

// ---- 12 · sharing keys and values: GQA / MQA and the KV cache

const kv = {
  id: 'kv',
  render(ctx, st) {
    st.kv ??= 8;
    st.tokens ??= 2048;
    let c = null;
    const view = live(ctx, () => {
      const shape = { ...LLAMA32_SHAPE, numKeyValueHeads: st.kv };
      c = kvCacheBytes(shape, st.tokens, 2);
      const group = LLAMA32_SHAPE.numHeads / st.kv;
      return [h('p', { class: 'l-cap', dataset: { k: 'group' }, text: t('s12.group', { H: LLAMA32_SHAPE.numHeads, kv: st.kv, g: group }) }),
        bars(Float32Array.of(c.shared / 2 ** 20, c.full / 2 ** 20), [t('s12.shared'), t('s12.full')], { key: 'cache', digits: 1 })];
    });
    view.update();
    return {
      body: [p('s12.p1'), tex(String.raw`\text{head } h \text{ reads K/V head } \lfloor h / (H / H_{kv}) \rfloor`),
        tex(String.raw`\text{KV cache} = 2 \cdot L \cdot H_{kv} \cdot d_{head} \cdot n \cdot \text{bytes}`), p('s12.p2'), sub('s12.live'),
        h('div', { class: 'l-fields' },
          numberField('s12.kv', st.kv, (v) => { if ([1, 2, 4, 8, 16, 32].includes(v)) { st.kv = v; view.update(); } }, { min: 1, max: 32, step: 1, id: 's12-kv' }),
          numberField('s12.tokens', st.tokens, (v) => { if (v >= 1) { st.tokens = Math.round(v); view.update(); } }, { min: 1, max: 131072, step: 1, id: 's12-tokens' })),
        view.el, p('s12.p3')],
      task: { key: 's12.try', tol: 0.05, answer: () => (c ? c.shared / 2 ** 20 : NaN), explain: 's12.explain' },
    };
  },
};

// ---- 13 · attention sinks: how much weight lands on the first token

const sinks = {
  id: 'sinks',
  async render(ctx, st) {
    const model = await ctx.model('english');
    st.text ??= 'The cat sat on the mat because it was tired.';
    let top = NaN;
    const view = live(ctx, () => {
      const r = model.run(st.text);
      const H = r.numHeads;
      const s = ctx.as.headScores({ weights: r.layers.map((L) => L.attention.weights), numHeads: H, n: r.n }).sinkShare;
      top = Math.max(...s);
      return [h('p', { class: 'l-cap', text: t('s13.table', { n: r.n }) }),
        matrix(s, r.layers.length, H, { rowLabels: r.layers.map((_, l) => `L${l + 1}`), colLabels: Array.from({ length: H }, (_, i) => `H${i + 1}`), digits: 3, key: 'sink' })];
    });
    view.update();
    return {
      body: [p('s13.p1'), tex(String.raw`\text{sink}(h) = \frac{1}{n}\sum_{i=1}^{n} w^{(h)}_{i,1}`), p('s13.p2'), sub('s13.live'), view.el,
        h('p', { class: 'l-p' }, t('s13.p3'), ' ', h('a', { href: '../', text: t('s10.fullPage') }))],
      task: { key: 's13.try', tol: 0.002, answer: () => top, explain: 's13.explain' },
    };
  },
};

export const STEPS_C = [rope, kv, sinks];
