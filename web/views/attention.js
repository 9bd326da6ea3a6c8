// Attention view (layer: web): layer tabs, head chips in the heads' colours, one weights heatmap per
// selected head (queries × keys, tokens on both axes, legend, value on hover), the bertviz lines view,
// and for encoder–decoder models the cross-attention alignments (target × source).
import { h, syncChildren } from '../dom.js';
import * as colors from '../colors.js';
import { heatmap } from './heatmap.js';
import { linesView, headChips } from './lines.js';
import { t } from '../i18n.js';

function tileWidth(width, count) {
  const per = width >= 640 ? Math.min(count, Math.floor(width / 300)) : 1;
  return Math.floor((width - 16 * (per - 1)) / Math.max(1, per));
}

/** attentionView({ trace, layer, heads, token, width, onLayer, onHeads, onSelect }) → HTMLElement */
export function attentionView(o) {
  const { trace, width } = o;
  const n = trace.n;
  const layer = Math.min(o.layer, trace.layers.length - 1);
  const L = trace.layers[layer];
  const H = L.attention.weights.length / (n * n);
  const heads = o.heads.filter((x) => x < H);
  const view = h('div', { class: 'view-body' });

  const tabs = h('div', { class: 'layer-tabs', role: 'tablist', 'aria-label': t('attention.layers') });
  trace.layers.forEach((ly, l) => {
    const b = h('button', {
      type: 'button', role: 'tab', class: 'tab', 'aria-selected': String(l === layer), dataset: { layer: l },
      text: t(ly.kind === 'simple' ? 'attention.layerSimple' : 'attention.layer', { l: l + 1 }),
    });
    b.addEventListener('click', () => o.onLayer(l));
    tabs.append(b);
  });
  const body = h('div', { class: 'attn-body' });
  view.append(h('div', { class: 'attn-controls' }, tabs,
    H > 1 ? headChips({ numHeads: H, selected: heads.length ? heads : [0], onChange: (next) => { draw(next); o.onHeads(next); } }) : null));
  view.append(body);

  // one colour domain per layer, [0, largest weight], so small-n and many-token maps both show contrast
  // and heads stay comparable; the legend prints the top value
  const top = (w) => {
    let mx = 0;
    for (let i = 0; i < w.length; i++) if (w[i] > mx) mx = w[i];
    return mx > 0 ? mx : 1;
  };
  // A head toggle redraws the tiles from the maps already drawn: only a newly shown head's map is made (at 512
  // tokens x 12 heads, remaking every map took ~300 ms of one task). A map made later starts on the row the
  // shown ones have moved to (the page moves it with selectRow after a token click, without a new view).
  const made = new Map(); // `${kind}|${head}|${tile width}` -> the heatmap element
  let row = o.token;
  const his = new Map(); // weights -> colour domain top
  // the tiles of each kind stay in the document; a toggle adds or removes only the toggled head's map
  const tilesOf = new Map(); // kind -> its .hm-tiles element
  function maps(sel, weights, rowsTok, colsTok, kind, caption, scores) {
    const m = colsTok.length;
    if (!his.has(weights)) his.set(weights, top(weights));
    const hi = his.get(weights);
    const tile = tileWidth(width, sel.length);
    if (!tilesOf.has(kind)) tilesOf.set(kind, h('div', { class: 'hm-tiles' }));
    return syncChildren(tilesOf.get(kind), sel.map((hd) => {
      const key = `${kind}|${hd}|${tile}`;
      if (!made.has(key)) made.set(key, tileMap(hd, weights, rowsTok, colsTok, kind, caption, scores, m, hi, tile));
      return made.get(key);
    }));
  }
  function tileMap(hd, weights, rowsTok, colsTok, kind, caption, scores, m, hi, tile) {
    const el = heatmap({
      values: weights.subarray(hd * rowsTok.length * m, (hd + 1) * rowsTok.length * m),
      blockedBy: scores?.subarray(hd * rowsTok.length * m, (hd + 1) * rowsTok.length * m),
      rows: rowsTok.length, cols: m, map: colors.weights, kind: 'weights', domain: [0, hi],
      rowLabels: rowsTok, colLabels: colsTok, rowName: t('axis.query'), colName: t(kind === 'cross' ? 'axis.sourceKey' : 'axis.key'),
      title: `${caption} · ${t('attention.head', { h: hd + 1 })}${L.kind === 'simple' && kind === 'attention' ? ' · softmax(X·Xᵀ)' : ''}`,
      width: tile, cellMax: 30, legendLabel: t('heatmap.weight'),
      dataset: { kind, layer, head: hd }, selectedRow: kind === 'attention' ? row : null,
      onCell: kind === 'attention' ? ((i) => o.onSelect(i)) : null,
    });
    if (kind === 'attention' && el.selectRow) {
      const move = el.selectRow;
      el.selectRow = (i) => { row = i; move(i); };
    }
    return el;
  }

  // the lines views are made once and given the new heads (their tokens stay)
  let lines = null;
  let crossLines = null;
  let crossTitle = null;
  function draw(sel) {
    sel = sel.length ? sel : [0];
    if (lines) lines.setHeads(sel);
    else lines = linesView({ rowTokens: trace.tokens, colTokens: trace.tokens, weights: L.attention.weights, heads: sel, width: Math.min(width, 520) });
    const parts = [maps(sel, L.attention.weights, trace.tokens, trace.tokens, 'attention', t('attention.layer', { l: layer + 1 }), L.attention.scores), lines];
    if (L.cross && trace.source) {
      if (crossLines) crossLines.setHeads(sel);
      else crossLines = linesView({ rowTokens: trace.tokens, colTokens: trace.source.tokens, weights: L.cross.weights, heads: sel, width: Math.min(width, 520), title: t('lines.alignments') });
      crossTitle ??= h('h3', { class: 'sub-title', text: t('attention.crossTitle') });
      parts.push(crossTitle);
      parts.push(maps(sel, L.cross.weights, trace.tokens, trace.source.tokens, 'cross', t('attention.crossLayer', { l: layer + 1 }), L.cross.scores));
      parts.push(crossLines);
    }
    syncChildren(body, parts); // the same parts but the first time: nothing is detached
  }
  draw(heads.length ? heads : [0]);
  return view;
}
