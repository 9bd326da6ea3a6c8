// The "looking inside" views (layer: web): the logit-lens table (layers × positions, each cell the top-1 token
// coloured by its probability, the top-k in its tooltip), the head grid whose buttons knock heads out, the
// ablation result (next-token top-k and loss beside the unablated run), and a layers × columns value table for the
// sweep and the patching heatmap. Data in, element out; every number is the module's.
import { h, tokenLabel } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';

const pct = (p) => `${(p * 100).toFixed(p < 0.01 ? 2 : 1)}%`;

function cell(map, v, lo, hi, text, title, data) {
  const td = h('td', { class: 'inside-cell', title, text, dataset: data });
  td.style.background = colors.cssColor(map, v, lo, hi);
  td.style.color = colors.textOn(map, v, lo, hi);
  return td;
}

/** lensTable({ tokens, layers: [{ ids, probs, tokens }], k }) → a table: rows layers, columns positions. */
export function lensTable(lens) {
  const n = lens.tokens.length;
  const head = h('tr', {}, h('th', { scope: 'col', text: t('inside.layer') }),
    ...lens.tokens.map((tok) => h('th', { scope: 'col', 'data-no-i18n': '', text: tokenLabel(tok, 8) })));
  const rows = lens.layers.map((l, i) => h('tr', {}, h('th', { scope: 'row', text: String(i) }),
    ...Array.from({ length: n }, (_, p) => {
      const top = Array.from({ length: lens.k }, (_, j) => `${tokenLabel(l.tokens[p * lens.k + j], 16)} ${pct(l.probs[p * lens.k + j])}`);
      return cell(colors.weights, l.probs[p * lens.k], 0, 1, tokenLabel(l.tokens[p * lens.k], 8), top.join('\n'),
        { layer: i, position: p, id: l.ids[p * lens.k], prob: l.probs[p * lens.k] });
    })));
  return h('div', { class: 'inside-scroll', tabindex: 0, role: 'region', 'aria-label': t('inside.lensAria') },
    h('table', { class: 'inside-table', dataset: { name: 'lens' } },
      h('caption', { text: t('inside.lensCaption', { k: lens.k }) }), h('thead', {}, head), h('tbody', {}, ...rows)));
}

/** headGrid({ numLayers, numHeads, off: Set of 'l.h', onToggle(l, h) }) → buttons, one per head (aria-pressed). */
export function headGrid({ numLayers, numHeads, off, onToggle }) {
  const rows = Array.from({ length: numLayers }, (_, l) => h('div', { class: 'inside-heads-row' },
    h('span', { class: 'inside-heads-label', text: t('inside.layerN', { layer: l }) }),
    ...Array.from({ length: numHeads }, (_, hd) => {
      const b = h('button', {
        type: 'button', class: 'inside-head', text: String(hd), 'aria-pressed': String(off.has(`${l}.${hd}`)),
        'aria-label': t('inside.headAria', { layer: l, head: hd }), dataset: { layer: l, head: hd },
      });
      b.addEventListener('click', () => onToggle(l, hd));
      return b;
    })));
  return h('div', { class: 'inside-heads', dataset: { name: 'head-grid' } }, ...rows);
}

/** ablationResult({ before, after }) → next-token top-k of both runs (Δ probability) and the loss of both. */
export function ablationResult(r) {
  const ids = [...new Set([...r.before.next.ids, ...r.after.next.ids])];
  const probOf = (side, id) => { const i = Array.from(side.next.ids).indexOf(id); return i < 0 ? null : side.next.probs[i]; };
  const textOf = (id) => {
    const i = Array.from(r.before.next.ids).indexOf(id);
    return i >= 0 ? r.before.next.tokens[i] : r.after.next.tokens[Array.from(r.after.next.ids).indexOf(id)];
  };
  const rows = ids.map((id) => {
    const a = probOf(r.before, id);
    const b = probOf(r.after, id);
    const d = a !== null && b !== null ? b - a : null;
    return h('tr', { dataset: { id } }, h('td', { 'data-no-i18n': '', text: tokenLabel(textOf(id), 16) }),
      h('td', { text: a === null ? '—' : pct(a) }), h('td', { text: b === null ? '—' : pct(b) }),
      h('td', { text: d === null ? '—' : `${d >= 0 ? '+' : ''}${(d * 100).toFixed(2)}` }));
  });
  const loss = r.before.loss === null ? null
    : h('p', { dataset: { name: 'loss' }, text: t('inside.loss', { before: r.before.loss.toFixed(4), after: r.after.loss.toFixed(4), delta: `${r.after.loss >= r.before.loss ? '+' : ''}${(r.after.loss - r.before.loss).toFixed(4)}` }) });
  return h('div', { dataset: { name: 'ablation' } }, h('table', { class: 'inside-table' },
    h('caption', { text: t('inside.nextCaption') }),
    h('thead', {}, h('tr', {}, ...['inside.token', 'inside.before', 'inside.after', 'inside.delta'].map((k) => h('th', { scope: 'col', text: t(k) })))),
    h('tbody', {}, ...rows)), loss);
}

/**
 * valueTable({ name, caption, values, rows, cols, colLabels, map, domain, format }) → rows = layers, one coloured
 * cell per value (the sweep's Δ loss, the patching heatmap).
 */
export function valueTable({ name, caption, values, rows, cols, colLabels, map, domain, format }) {
  const [lo, hi] = domain;
  const head = h('tr', {}, h('th', { scope: 'col', text: t('inside.layer') }),
    ...colLabels.map((c) => h('th', { scope: 'col', 'data-no-i18n': '', text: tokenLabel(c, 8) })));
  const body = Array.from({ length: rows }, (_, l) => h('tr', {}, h('th', { scope: 'row', text: String(l) }),
    ...Array.from({ length: cols }, (_, c) => {
      const v = values[l * cols + c];
      return cell(map, v, lo, hi, format(v), `${t('inside.layer')} ${l} · ${colLabels[c]}: ${v.toFixed(4)}`, { layer: l, col: c, value: v });
    })));
  return h('div', { class: 'inside-scroll', tabindex: 0, role: 'region', 'aria-label': caption },
    h('table', { class: 'inside-table', dataset: { name } }, h('caption', { text: caption }), h('thead', {}, head), h('tbody', {}, ...body)));
}

/**
 * detectorsTable({ numLayers, numHeads, previousToken, duplicateToken, sinkShare }, sort, onSort) → one row per
 * head, sortable by any score column (descending; the header button says which, aria-sort marks it).
 */
export function detectorsTable(d, sort, onSort) {
  const cols = [['previousToken', 'inside.previous'], ['duplicateToken', 'inside.duplicate'], ['sinkShare', 'inside.sink'],
    ['induction', 'tint.induction']].filter(([key]) => d[key]); // a long input's scores hold only sinkShare
  const order = Array.from({ length: d.numLayers * d.numHeads }, (_, i) => i);
  if (!d[sort]) sort = cols[0]?.[0];
  if (sort) order.sort((a, b) => d[sort][b] - d[sort][a] || a - b);
  const head = h('tr', {}, h('th', { scope: 'col', text: t('inside.layer') }), h('th', { scope: 'col', text: t('inside.head') }),
    ...cols.map(([key, label]) => {
      const b = h('button', { type: 'button', class: 'inside-sort', text: t(label), dataset: { sort: key } });
      b.addEventListener('click', () => onSort(key));
      return h('th', { scope: 'col', 'aria-sort': sort === key ? 'descending' : 'none' }, b);
    }));
  const rows = order.map((i) => h('tr', { dataset: { layer: Math.floor(i / d.numHeads), head: i % d.numHeads } },
    h('td', { text: String(Math.floor(i / d.numHeads)) }), h('td', { text: String(i % d.numHeads) }),
    ...cols.map(([key]) => cell(colors.weights, d[key][i], 0, 1, d[key][i].toFixed(3), `${d[key][i]}`, { score: key, value: d[key][i] }))));
  return h('div', { class: 'inside-scroll', tabindex: 0, role: 'region', 'aria-label': t('inside.detectorsCaption') },
    d.long ? h('p', { class: 'note', dataset: { name: 'detectors-long' }, text: t('inside.detectorsLong', { n: d.long, limit: d.limit }) }) : null,
    h('table', { class: 'inside-table', dataset: { name: 'detectors' } }, h('caption', { text: t('inside.detectorsCaption') }),
      h('thead', {}, head), h('tbody', {}, ...rows)));
}
