// Causal decoding view (layer: web): what a decoder sees and what it predicts. The triangular pattern of the
// shown layer (mean over the selected heads; blocked future cells grey, unlike computed weights near 0), the
// attention row of the selected position as bars, that position's next-token top-k (the model's `next`,
// drawn by predictions.js), and a "generate next token" step (model.generate in the worker, one token
// appended). Every number is the module's; the mean over heads is web/aggregates.js's. Data in, element out.
import { h, fmt, tokenLabel } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';
import { meanOverHeads } from '../aggregates.js';
import { heatmap } from './heatmap.js';
import { predictionsView } from './predictions.js';

const ROW_BARS = 12; // the attention row shows its strongest keys, at most this many

/** The [n, n] map shown: the one selected head, or the mean over the selected heads. */
export function causalMap(weights, H, n, heads) {
  if (heads.length === 1) return weights.subarray(heads[0] * n * n, (heads[0] + 1) * n * n);
  const sel = new Float32Array(heads.length * n * n);
  heads.forEach((hd, k) => sel.set(weights.subarray(hd * n * n, (hd + 1) * n * n), k * n * n));
  return meanOverHeads(sel, heads.length, n);
}

/**
 * causalView({ trace, layer, heads, token, next: { position, tokens, ids, probs } | { error } | null, k, ks,
 *              canGenerate, generating, onSelect, onGenerate, onK, width }) → HTMLElement
 */
export function causalView(o) {
  const { trace, width } = o;
  const n = trace.n;
  const nReal = trace.nReal ?? n;
  const layer = Math.min(o.layer, trace.layers.length - 1);
  const W = trace.layers[layer].attention.weights;
  const H = W.length / (n * n);
  const heads = o.heads.filter((x) => x < H);
  const sel = heads.length ? heads : [0];
  const map = causalMap(W, H, n, sel);
  const i = Math.min(o.token, nReal - 1);
  const who = sel.length === 1 ? t('causal.head', { head: sel[0] + 1 }) : sel.length === H ? t('causal.allHeads', { count: H })
    : t('causal.someHeads', { heads: sel.map((x) => x + 1).join(', ') });

  let hi = 0;
  for (let q = 0; q < map.length; q++) if (map[q] > hi) hi = map[q];
  const hm = heatmap({
    values: map, rows: n, cols: n, map: colors.weights, kind: 'weights', domain: [0, hi > 0 ? hi : 1],
    rowLabels: trace.tokens, colLabels: trace.tokens, rowName: t('axis.query'), colName: t('axis.key'),
    title: t('causal.mapTitle', { layer: layer + 1, who }),
    width: Math.min(width, 560), cellMax: 30, legendLabel: t('heatmap.weight'),
    blockedCell: (r, c) => c > r,
    dataset: { kind: 'causal', layer, heads: sel.join(',') },
    selectedRow: i, onCell: (r) => o.onSelect(r),
  });

  // ---- the selected position's row: its strongest keys (all of them are at or before it)
  const keys = [];
  for (let j = 0; j <= i; j++) keys.push(j);
  keys.sort((a, b) => (map[i * n + b] - map[i * n + a]) || (a - b));
  const shown = keys.slice(0, ROW_BARS);
  const list = h('ol', { class: 'topk causal-row', dataset: { name: 'causal-row', token: i }, 'data-no-i18n': '' }); // tokens and numbers
  for (const j of shown) {
    const w = map[i * n + j];
    const bar = h('span', { class: 'topk-bar' });
    bar.style.width = `${Math.max(1, Math.round(w * 100))}%`;
    list.append(h('li', { dataset: { key: j, value: w } },
      h('span', { class: 'topk-tok', text: `${j} ${tokenLabel(trace.tokens[j], 12)}` }),
      h('span', { class: 'topk-track' }, bar),
      h('span', { class: 'topk-p', text: fmt(w, 3) })));
  }
  const rowFig = h('figure', { class: 'topk-fig' },
    h('figcaption', { class: 'hm-title', text: t('causal.rowTitle', { token: i, label: tokenLabel(trace.tokens[i], 20), shown: shown.length, total: i + 1 }) }),
    list);

  // ---- next-token top-k at the selected position, and the generate step
  const nextBox = h('div', { class: 'causal-next', dataset: { name: 'causal-next', position: i } });
  if (o.next?.tokens && o.next.position === i) {
    nextBox.append(predictionsView({ trace: { next: o.next, tokens: trace.tokens, n: i + 1 } }));
  } else if (o.next?.error) {
    nextBox.append(h('p', { class: 'note', dataset: { name: 'causal-next-error' }, text: t('causal.noNext', { reason: o.next.error }) }));
  } else {
    nextBox.append(h('p', { class: 'note', text: t('causal.computing') }));
  }
  const kSel = h('select', { id: 'causal-k', 'aria-label': t('causal.kLabel'), disabled: !o.onK });
  for (const k of o.ks ?? [5]) kSel.append(h('option', { value: k, text: String(k), selected: k === o.k }));
  if (o.onK) kSel.addEventListener('change', () => o.onK(Number(kSel.value)));
  const gen = h('button', {
    type: 'button', class: 'btn', id: 'causal-generate', disabled: !o.canGenerate || !!o.generating,
    text: o.generating ? t('causal.generating') : t('causal.generate'),
    title: o.canGenerate ? null : t('causal.cannotGenerate'),
  });
  gen.addEventListener('click', () => o.onGenerate());
  const controls = h('div', { class: 'gen-row' },
    h('label', { class: 'ctl' }, t('causal.kLabel'), kSel), gen,
    h('span', { class: 'note', text: o.canGenerate ? t('causal.generateNote') : t('causal.cannotGenerate') }));

  return h('div', { class: 'view-body causal' },
    h('div', { class: 'causal-grid' }, hm, h('div', { class: 'causal-side' }, rowFig, nextBox, controls)));
}
