// Steps 1–5 of the guided path (layer: web): cues and retrieval, attention pooling without parameters
// (Nadaraya–Watson), scoring functions and √dₖ, Bahdanau attention in the trained dates-bahdanau model, and
// self-attention on "Your journey starts with one step". Each step's render(ctx, st) returns { body, task }:
// the elements of the step and its "try this" ({ key, vars, answer(), tol, explain }). Numbers come from the
// module (ctx.as, ctx.model(name)); `st` keeps the step's inputs across re-renders (language switch).
import { h, s, fmt } from '../dom.js';
import { t } from '../i18n.js';
import { EXAMPLE_TOKENS, EXAMPLE_EMBEDDINGS } from '../state.js';
import { live, tex, p, sub, matrix, bars, numberField, textField } from './ui.js';
import { gaussians, meanVar, mse, argmax } from './numbers.js';

// ---- 1 · cues and retrieval: a search over four videos, the query the learner's interest

const TOPICS = ['cooking', 'travel', 'music'];
const VIDEO_KEYS = [[2, 0.2, 0], [0.3, 2, 0.2], [1.5, 1.2, 0], [0, 0.2, 2]];

function searchWeights(as, q) {
  return as.scaledDotProductAttention({
    q: Float32Array.from(q), k: Float32Array.from(VIDEO_KEYS.flat()), v: Float32Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)),
    nq: 1, nk: 4, dk: 3, dv: 4, scale: 1,
  }).weights;
}

const cues = {
  id: 'cues',
  render(ctx, st) {
    st.q ??= [1, 1, 0];
    const titles = [0, 1, 2, 3].map((i) => t(`s1.video${i}`));
    const view = live(ctx, () => {
      const w = searchWeights(ctx.as, st.q);
      return [matrix(Float32Array.from(VIDEO_KEYS.flat()), 4, 3, { rowLabels: titles, colLabels: TOPICS.map((x) => t(`s1.${x}`)), digits: 1, shade: false, caption: t('s1.keys') }),
        h('p', { class: 'l-cap', text: t('s1.weights') }), bars(w, titles, { key: 'w', max: 1 })];
    });
    const fields = TOPICS.map((x, i) => numberField(`s1.${x}`, st.q[i], (v) => { st.q[i] = v; view.update(); }, { min: -3, max: 3, step: 0.1, range: true }));
    view.update();
    return {
      body: [p('s1.p1'), p('s1.p2'), tex(String.raw`\alpha_i = \operatorname{softmax}_i(\mathbf q\cdot\mathbf k_i)`), tex(String.raw`\mathbf o = \sum_i \alpha_i\,\mathbf v_i`),
        p('s1.p3'), sub('s1.live'), h('div', { class: 'l-fields' }, fields), view.el],
      task: { key: 's1.try', tol: 0.001, answer: () => searchWeights(ctx.as, [0, 0, 0])[0], explain: 's1.explain' },
    };
  },
};

// ---- 2 · attention pooling without parameters: Nadaraya–Watson on the bundled data, w on a slider

function plot(cfg, lines) {
  const W = 360; const H = 200; const pad = 24;
  const xs = [...cfg.xTrain, ...cfg.xTest]; const ys = [...cfg.yTrain, ...cfg.yTrue];
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)]; const [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  const X = (x) => pad + ((x - x0) / (x1 - x0)) * (W - 2 * pad);
  const Y = (y) => H - pad - ((y - y0) / (y1 - y0)) * (H - 2 * pad);
  const path = (ys2) => Array.from(cfg.xTest, (x, i) => `${i ? 'L' : 'M'}${X(x).toFixed(1)},${Y(ys2[i]).toFixed(1)}`).join('');
  return s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'l-plot', role: 'img', 'aria-label': t('s2.plotLabel') },
    s('line', { x1: pad, y1: H - pad, x2: W - pad, y2: H - pad, class: 'l-axis' }),
    Array.from(cfg.xTrain, (x, i) => s('circle', { cx: X(x).toFixed(1), cy: Y(cfg.yTrain[i]).toFixed(1), r: 2.2, class: 'l-dot' })),
    lines.map(([ys2, cls]) => s('path', { d: path(ys2), class: cls })));
}

const pooling = {
  id: 'pooling',
  async render(ctx, st) {
    const model = await ctx.model('nadaraya-watson');
    const cfg = model.config;
    st.w ??= 1;
    const run = (w) => ctx.as.kernelRegression({ xTrain: cfg.xTrain, yTrain: cfg.yTrain, xQuery: cfg.xTest, w });
    const learned = run(cfg.w);
    const view = live(ctx, () => {
      const r = run(st.w);
      return [plot(cfg, [[cfg.yTrue, 'l-line-true'], [learned.yPred, 'l-line-learned'], [r.yPred, 'l-line-w']]),
        h('ul', { class: 'l-legend' }, h('li', { class: 'l-lg-true', text: t('s2.legendTrue') }), h('li', { class: 'l-lg-w', text: t('s2.legendW', { w: st.w }) }),
          h('li', { class: 'l-lg-learned', text: t('s2.legendLearned', { w: fmt(cfg.w, 3) }) })),
        h('p', { class: 'l-cap' }, t('s2.mseW', { w: st.w }), ' ', h('b', { text: fmt(mse(r.yPred, cfg.yTrue), 4), dataset: { k: 'mse-w' } }), ' · ',
          t('s2.mseLearned'), ' ', h('b', { text: fmt(mse(learned.yPred, cfg.yTrue), 4), dataset: { k: 'mse-learned' } })),
        h('p', { class: 'l-cap', text: t('s2.row', { x: fmt(cfg.xTest[25], 2) }) }),
        matrix(r.weights.subarray(25 * 50, 26 * 50), 1, 50, { digits: 2, key: 'kw' })];
    });
    view.update();
    return {
      body: [p('s2.p1'), tex(String.raw`f(x) = \frac{1}{n}\sum_{i=1}^{n} y_i`),
        p('s2.p2'), tex(String.raw`f(x) = \sum_{i=1}^{n} \operatorname{softmax}_i\!\Big(-\tfrac12\big((x - x_i)\,w\big)^2\Big)\, y_i`),
        p('s2.p3', { w: fmt(cfg.w, 3) }), sub('s2.live'),
        h('div', { class: 'l-fields' }, numberField('s2.w', st.w, (v) => { st.w = v; view.update(); }, { min: 0, max: 20, step: 0.1, range: true, id: 's2-w' })),
        view.el],
      task: { key: 's2.try', tol: 0.01, answer: () => run(0).yPred[0], explain: 's2.explain' },
    };
  },
};

// ---- 3 · scoring functions: additive vs scaled dot product, the variance behind ÷√dₖ, masked softmax

const DKS = [4, 16, 64, 256];
const PAIRS = 128;

/** Variance of q·k and of q·k/√dₖ over PAIRS² dot products of seeded standard-normal vectors, by the module. */
export function dotVariance(as, dk) {
  const q = gaussians(PAIRS * dk, 1000 + dk);
  const k = gaussians(PAIRS * dk, 2000 + dk);
  const v = new Float32Array(PAIRS);
  const raw = as.scaledDotProductAttention({ q, k, v, nq: PAIRS, nk: PAIRS, dk, dv: 1, scale: 1 });
  const scaled = as.scaledDotProductAttention({ q, k, v, nq: PAIRS, nk: PAIRS, dk, dv: 1 });
  return { raw: meanVar(raw.scores).variance, scaled: meanVar(scaled.scores).variance, maxRaw: Math.max(...raw.weights.subarray(0, PAIRS)), maxScaled: Math.max(...scaled.weights.subarray(0, PAIRS)) };
}

const SCORE_ROW = { queries: [0.5, -1], keys: [1, 0.2, -0.4, 1.1, 0.9, -0.3, 0.1, 0.8, -1.2, 0.5], wq: [0.6, -0.3, 0.8, 0.1, -0.5, 0.7, 0.2, 0.4], wk: [0.3, 0.9, -0.6, 0.2, 0.5, -0.1, 0.7, -0.8], wv: [1.2, -0.7, 0.9, 0.5] };

const scoring = {
  id: 'scoring',
  render(ctx, st) {
    st.validLen ??= 3;
    const rows = DKS.map((dk) => ({ dk, ...dotVariance(ctx.as, dk) }));
    const table = h('div', { class: 'l-scroll' }, h('table', { class: 'l-matrix l-plain' },
      h('thead', {}, h('tr', {}, ['s3.colDk', 's3.colVar', 's3.colVarScaled', 's3.colMax', 's3.colMaxScaled'].map((k) => h('th', { scope: 'col', text: t(k) })))),
      h('tbody', {}, rows.map((r) => h('tr', {}, h('th', { scope: 'row', text: String(r.dk) }),
        h('td', { text: fmt(r.raw, 2), dataset: { k: `var-${r.dk}` } }), h('td', { text: fmt(r.scaled, 3), dataset: { k: `vars-${r.dk}` } }),
        h('td', { text: fmt(r.maxRaw, 3), dataset: { k: `max-${r.dk}` } }), h('td', { text: fmt(r.maxScaled, 3), dataset: { k: `maxs-${r.dk}` } }))))));
    const view = live(ctx, () => {
      const r = ctx.as.additiveAttention({
        queries: Float32Array.from(SCORE_ROW.queries), keys: Float32Array.from(SCORE_ROW.keys), values: new Float32Array(5),
        nq: 1, nk: 5, dq: 2, dk: 2, dv: 1, hidden: 4, wq: Float32Array.from(SCORE_ROW.wq), wk: Float32Array.from(SCORE_ROW.wk), wv: Float32Array.from(SCORE_ROW.wv), validLen: st.validLen,
      });
      const labels = [1, 2, 3, 4, 5].map((j) => `k${j}`);
      return [matrix(r.scores, 1, 5, { colLabels: labels, digits: 3, key: 'ad-score', shade: false, caption: t('s3.scores') }),
        matrix(r.weights, 1, 5, { colLabels: labels, digits: 4, key: 'ad-w', caption: t('s3.weights') })];
    });
    view.update();
    return {
      body: [p('s3.p1'), tex(String.raw`a(\mathbf q,\mathbf k) = \mathbf w_v^\top \tanh(\mathbf W_q\mathbf q + \mathbf W_k\mathbf k)`), tex(String.raw`a(\mathbf q,\mathbf k) = \frac{\mathbf q^\top\mathbf k}{\sqrt{d_k}}`),
        p('s3.p2'), tex(String.raw`\operatorname{Var}(\mathbf q^\top\mathbf k) = \sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i) = d_k`), tex(String.raw`\operatorname{Var}\!\Big(\frac{\mathbf q^\top\mathbf k}{\sqrt{d_k}}\Big) = 1`),
        sub('s3.live1'), p('s3.tableNote', { pairs: PAIRS }, 'l-cap'), table,
        sub('s3.live2'), p('s3.p3'), tex(String.raw`\operatorname{softmax}(\mathbf s)_j = \frac{e^{s_j}\,[j < \text{validLen}]}{\sum_{l < \text{validLen}} e^{s_l}}`),
        h('div', { class: 'l-fields' }, numberField('s3.validLen', st.validLen, (v) => { st.validLen = Math.round(v); view.update(); }, { min: 0, max: 5, step: 1, range: true, id: 's3-valid' })),
        view.el],
      task: { key: 's3.try', tol: 10, answer: () => 100, explain: 's3.explain' },
    };
  },
};

// ---- 4 · Bahdanau attention in the trained GRU encoder–decoder (dates-bahdanau)

const bahdanau = {
  id: 'bahdanau',
  async render(ctx, st) {
    const model = await ctx.model('dates-bahdanau');
    st.source ??= '22 Nov 2026';
    st.step ??= 6;
    let last = null;
    const view = live(ctx, () => {
      const r = model.run(st.source);
      last = r;
      const T = r.steps; const S = r.sourceLength;
      st.step = Math.max(1, Math.min(st.step, T));
      const row = r.weights.subarray((st.step - 1) * S, st.step * S);
      const slider = numberField('s4.step', st.step, (v) => { st.step = Math.round(v); view.update(); }, { min: 1, max: T, step: 1, range: true, id: 's4-step' });
      return [h('p', { class: 'l-cap' }, t('s4.output'), ' ', h('b', { class: 'l-mono', text: r.tokens.filter((x) => x !== '</s>').join(''), dataset: { k: 'output' } })),
        matrix(r.weights, T, S, { rowLabels: r.tokens, colLabels: r.sourceTokens, digits: 2, key: 'al', mark: st.step - 1, caption: t('s4.alignment') }),
        h('div', { class: 'l-fields' }, slider),
        h('p', { class: 'l-cap', text: t('s4.stepNote', { t: st.step, tok: r.tokens[st.step - 1] }) }), bars(row, r.sourceTokens.map((x, j) => `${j + 1} · ${x === ' ' ? '␣' : x}`), { key: 'row', max: 1 })];
    });
    view.update();
    return {
      body: [p('s4.p1'), tex(String.raw`\mathbf c_{t} = \sum_{j=1}^{S} \alpha_{t,j}\,\mathbf h_j`), tex(String.raw`\alpha_{t,j} = \operatorname{softmax}_j\big(\mathbf w_v^\top\tanh(\mathbf W_q\mathbf s_{t-1} + \mathbf W_k\mathbf h_j)\big)`),
        p('s4.p2'), sub('s4.live'),
        h('div', { class: 'l-fields' }, textField('s4.source', st.source, (v) => { st.source = v; view.update(); }, 's4-source')), view.el],
      task: {
        key: 's4.try', tol: 0, explain: 's4.explain',
        answer: () => (last ? argmax(last.weights, (st.step - 1) * last.sourceLength, st.step * last.sourceLength) + 1 : NaN),
      },
    };
  },
};

// ---- 5 · self-attention step by step: "Your journey starts with one step"

const journey = {
  id: 'journey',
  render(ctx, st) {
    st.x ??= EXAMPLE_EMBEDDINGS.map((r) => [...r]);
    let last = null;
    const view = live(ctx, () => {
      const r = ctx.as.simpleSelfAttention({ x: Float32Array.from(st.x.flat()), n: 6, d: 3 });
      last = r;
      return [sub('s5.scores'), tex(String.raw`\omega_{ij} = \mathbf x_i \cdot \mathbf x_j`),
        matrix(r.scores, 6, 6, { rowLabels: EXAMPLE_TOKENS, colLabels: EXAMPLE_TOKENS, key: 'sc', mark: 1 }),
        sub('s5.weights'), tex(String.raw`\alpha_{ij} = \frac{e^{\omega_{ij}}}{\sum_{l} e^{\omega_{il}}}`),
        matrix(r.weights, 6, 6, { rowLabels: EXAMPLE_TOKENS, colLabels: EXAMPLE_TOKENS, key: 'w', mark: 1 }),
        sub('s5.context'), tex(String.raw`\mathbf z_i = \sum_j \alpha_{ij}\,\mathbf x_j`),
        matrix(r.context, 6, 3, { rowLabels: EXAMPLE_TOKENS, colLabels: ['1', '2', '3'], key: 'ctx', mark: 1 })];
    });
    const inputs = h('div', { class: 'l-scroll' }, h('table', { class: 'l-matrix l-inputs' },
      h('caption', { text: t('s5.inputs') }),
      h('tbody', {}, EXAMPLE_TOKENS.map((tok, i) => h('tr', {}, h('th', { scope: 'row', text: tok }),
        [0, 1, 2].map((j) => {
          const input = h('input', { type: 'number', step: '0.01', value: String(st.x[i][j]), 'aria-label': t('s5.cell', { tok, j: j + 1 }), dataset: { x: `${i}-${j}` } });
          input.addEventListener('input', () => {
            const v = Number(input.value);
            if (input.value !== '' && Number.isFinite(v)) { st.x[i][j] = v; view.update(); }
          });
          return h('td', {}, input);
        }))))));
    view.update();
    return {
      body: [p('s5.p1'), p('s5.p2'), inputs, view.el, p('s5.p3')],
      task: { key: 's5.try', tol: 0.001, answer: () => (last ? last.scores[6] : NaN), explain: 's5.explain' },
    };
  },
};

export const STEPS_A = [cues, pooling, scoring, bahdanau, journey];
