// Step-by-step view (layer: web): for one query token i, one head h, one layer, the attention math in
// the order the core computes it — q_i, K, q_i·k_j, ÷√dₖ, mask, softmax (max, x − max, exp, Σ, ÷Σ),
// weights × V, concat and ×W_O, then residual + LayerNorm + FFN. The scores, weights and outputs are
// the module's numbers from the trace; the in-between rows (dot products, exp) are recomputed here only
// to show the arithmetic, and the view shows that they lead to the module's result.
import { h, fmt, tokenLabel } from '../dom.js';
import * as colors from '../colors.js';
import { heatmap } from './heatmap.js';

const row = (a, i, w) => a.subarray(i * w, (i + 1) * w);

/** A labelled row of numbers (one per key, or one per dimension), coloured by value. */
function numRow({ labels, values, map = colors.signed, domain, name, emphasize }) {
  const [lo, hi] = domain ?? colors.domainOf(values, 'signed');
  const box = h('div', { class: 'numrow', dataset: { name: name ?? '' } });
  values.forEach((v, j) => {
    // one element per number (label on the first line, styled by ::first-line): rows of 128 keys stay cheap
    const cell = h('span', {
      class: `num${emphasize === j ? ' emph' : ''}`,
      dataset: { value: Number.isFinite(v) ? v : String(v) },
      text: `${labels ? tokenLabel(labels[j], 8) : String(j)}\n${fmt(v)}`,
    });
    if (Number.isFinite(v)) {
      cell.style.background = colors.cssColor(map, v, lo, hi);
      cell.style.color = colors.textOn(map, v, lo, hi);
    } else cell.classList.add('masked');
    box.append(cell);
  });
  return box;
}

/** A vector: numbers when short, a one-row heatmap (exact values on hover) when long. */
function vec(values, name, width, domain) {
  if (values.length <= 24) return numRow({ values, name, domain });
  return heatmap({
    values, rows: 1, cols: values.length, map: colors.signed, domain, width, cellMax: 14,
    rowName: name, colName: 'dim', legend: false, dataset: { name },
  });
}

function step(num, title, formula, ...content) {
  return h('section', { class: 'step' },
    h('h4', {}, h('span', { class: 'step-num', text: String(num) }), title),
    formula ? h('p', { class: 'formula', text: formula }) : null,
    ...content);
}

/** stepsView({ trace, layer, head, token, width, onSelect, cross? }) → HTMLElement */
export function stepsView(o) {
  const { trace, width } = o;
  const L = trace.layers[o.layer];
  const A = L.attention;
  const n = trace.n;
  const i = Math.min(o.token, n - 1);
  const H = A.weights.length / (n * n);
  const hd = A.q.length / n / H;
  const d = A.q.length / n;
  const hh = Math.min(o.head, H - 1);
  const simple = L.kind === 'simple';
  const scale = A.scale ?? (simple ? 1 : 1 / Math.sqrt(hd));
  const toks = trace.tokens;
  const qi = row(A.q, i, d).subarray(hh * hd, (hh + 1) * hd);
  const K = new Float32Array(n * hd);
  const V = new Float32Array(n * hd);
  for (let j = 0; j < n; j++) {
    K.set(row(A.k, j, d).subarray(hh * hd, (hh + 1) * hd), j * hd);
    V.set(row(A.v, j, d).subarray(hh * hd, (hh + 1) * hd), j * hd);
  }
  const dots = Array.from({ length: n }, (_, j) => {
    let acc = 0;
    for (let c = 0; c < hd; c++) acc += qi[c] * K[j * hd + c];
    return acc;
  });
  const scores = row(A.scores, hh * n + i, n);
  const weights = row(A.weights, hh * n + i, n);
  const blocked = Array.from(scores, (v) => v === -Infinity);
  const finite = Array.from(scores).filter(Number.isFinite);
  const mx = finite.length ? Math.max(...finite) : 0;
  const shifted = Array.from(scores, (v) => (Number.isFinite(v) ? v - mx : -Infinity));
  const exps = shifted.map((v) => (Number.isFinite(v) ? Math.exp(v) : 0));
  const sum = exps.reduce((a, b) => a + b, 0);
  const headOut = row(A.concat, i, d).subarray(hh * hd, (hh + 1) * hd);
  const vw = Math.min(width, 640);

  const tokenPicker = h('select', { class: 'token-pick', 'aria-label': 'query token' });
  toks.forEach((t, j) => tokenPicker.append(h('option', { value: j, selected: j === i, text: `${j}: ${tokenLabel(t, 24)}` })));
  tokenPicker.addEventListener('change', () => o.onSelect?.(Number(tokenPicker.value)));

  const body = h('div', { class: 'view-body steps', dataset: { token: i, head: hh, layer: o.layer } });
  body.append(h('div', { class: 'steps-head' },
    h('label', {}, 'Query token ', tokenPicker),
    h('span', { class: 'note', text: `layer ${o.layer + 1}, head ${hh + 1} of ${H} · dₖ = ${hd}${simple ? ' · simple attention: q = k = v = x, no weights' : ''}` })));
  if (trace.nReal != null && i >= trace.nReal) {
    body.append(h('p', { class: 'note', text: `“${toks[i]}” is padding: as a query it is fully masked (all weights 0, output discarded), and as a key no real token can attend to it. Pick a real token.` }));
    return body;
  }
  let k = 1;
  body.append(step(k++, `q for “${tokenLabel(toks[i], 24)}”`, simple ? 'q_i = x_i (no W_Q in the simple version)' : `q_i = x_i · W_Q, columns ${hh * hd}…${(hh + 1) * hd - 1} (head ${hh + 1})`, vec(qi, 'q', vw)));
  body.append(step(k++, 'every key k_j', simple ? 'K = X' : 'K = X · W_K (this head\'s columns)', heatmap({
    values: K, rows: n, cols: hd, map: colors.signed, rowLabels: toks, rowName: 'key', colName: 'dim',
    width: vw, cellMax: 20, heightMax: 360, legend: false, dataset: { name: 'K' },
  })));
  body.append(step(k++, 'dot products', 'q_i · k_j for every key j', numRow({ labels: toks, values: dots, name: 'dots', emphasize: i })));
  body.append(step(k++, simple ? 'no scaling' : `÷ √dₖ = ÷ √${hd} = × ${fmt(scale)}`, 'scores_ij = q_i · k_j · scale (the module\'s scores)',
    numRow({ labels: toks, values: Array.from(scores, (v, j) => (blocked[j] ? dots[j] * scale : v)), name: 'scaled', emphasize: i })));
  const nBlocked = blocked.filter(Boolean).length;
  body.append(step(k++, 'mask', nBlocked ? `${nBlocked} blocked key(s) become −∞ (causal: j > i; padding: <pad> keys)` : 'no key is blocked for this query',
    numRow({ labels: toks, values: Array.from(scores), name: 'masked', emphasize: i })));
  body.append(step(k++, 'softmax', `max = ${fmt(mx)}; subtract it so exp never overflows, then exp, sum (Σ = ${fmt(sum)}), divide`,
    h('div', { class: 'sub', text: 'x − max' }), numRow({ labels: toks, values: shifted, name: 'shifted' }),
    h('div', { class: 'sub', text: 'exp(x − max)' }), numRow({ labels: toks, values: exps, map: colors.magnitude, domain: [0, 1], name: 'exp' }),
    h('div', { class: 'sub', text: `÷ ${fmt(sum)} = attention weights (module), Σ = ${fmt(weights.reduce((a, b) => a + b, 0))}` }),
    numRow({ labels: toks, values: Array.from(weights), map: colors.weights, domain: [0, 1], name: 'weights' })));
  body.append(step(k++, 'weights × V', simple ? 'context_i = Σ_j w_ij · x_j' : 'head output = Σ_j w_ij · v_j', heatmap({
    values: V, rows: n, cols: hd, map: colors.signed, rowLabels: toks, rowName: 'value', colName: 'dim',
    width: vw, cellMax: 20, heightMax: 360, legend: false, title: 'V (this head)', dataset: { name: 'V' },
  }), h('div', { class: 'sub', text: '= head output' }), vec(headOut, 'head-out', vw)));
  if (!simple && H > 1) {
    body.append(step(k++, 'concat heads', `[head 1 | … | head ${H}], ${H} × ${hd} = ${d} numbers`, vec(row(A.concat, i, d), 'concat', vw)));
  }
  if (!simple && A.output !== A.concat) {
    body.append(step(k++, '× W_O', 'attention output = concat · W_O', vec(row(A.output, i, d), 'attn-out', vw)));
  }
  if (L.ffHidden) {
    const dm = trace.dModel;
    const parts = [h('div', { class: 'sub', text: 'x_i (layer input)' }), vec(row(L.input, i, dm), 'x', vw)];
    // the sum is shown for the reader (the trace has no separate residual tensor)
    const res = Array.from(row(L.input, i, dm), (x, c) => x + A.output[i * dm + c]);
    parts.push(h('div', { class: 'sub', text: 'x_i + attention output (the residual sum; LayerNorm follows in post-norm)' }), vec(Float32Array.from(res), 'residual1', vw));
    if (L.norm1) parts.push(h('div', { class: 'sub', text: 'LayerNorm' }), vec(row(L.norm1, i, dm), 'norm1', vw));
    const dFF = L.ffHidden.length / n;
    parts.push(h('div', { class: 'sub', text: `FFN hidden, activation(x · W₁ + b₁), ${dFF} units` }), vec(row(L.ffHidden, i, dFF), 'ffHidden', vw));
    if (L.ffOut) parts.push(h('div', { class: 'sub', text: 'FFN output, · W₂ + b₂' }), vec(row(L.ffOut, i, dm), 'ffOut', vw));
    parts.push(h('div', { class: 'sub', text: '+ residual, LayerNorm = layer output' }), vec(row(L.output, i, dm), 'layer-out', vw));
    body.append(step(k++, 'residual + LayerNorm + FFN', 'out = LN(h + FFN(h)), h = LN(x + attention(x)) (post-norm; pre-norm puts LN first)', ...parts));
  }
  return body;
}
