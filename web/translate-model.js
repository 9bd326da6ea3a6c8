// The translation view's numbers (layer: web; pure, no DOM, Node tests import it): from a translation
// (web/translate-work.js) to what the view draws — one layer's cross-attention for one head or the mean / max over
// heads, merged into words on both sides when asked (web/aggregates.js: SentencePiece ▁ words, BPE and character
// words, each CJK character a word), as a figure in web/render/data.js's shape, so that the heatmap export, the CSV
// and the JSON are exactly what is drawn; and the layout of d2l's alignment figure (source tokens in a row above,
// target tokens in a row below, one line per pair weighted by attention) as a tree of SVG elements that the page
// builds as DOM (web/views/translate.js) and the export writes as text (toSvgText).
import { meanOverHeads, maxOverHeads, mergeWords, wordGroups } from './aggregates.js';
import { textWidth, escapeXml, num } from './render/common.js';

/** What a head choice shows: a head index, or 'mean' / 'max' over the heads. */
const HEAD_CHOICES = ['mean', 'max'];

const maxOf = (values) => {
  let hi = 0;
  for (const v of values) if (v > hi) hi = v;
  return hi;
};

/**
 * The shown map of translation `tr`: { rows (target labels), cols (source labels), values Float32Array [rows, cols],
 * domain, rowGroups, colGroups (word index per piece, or null), ids, keyIds (unmerged only) }. `head`: a head index,
 * 'mean' or 'max'; `words`: merge pieces into words (rows: mean over a word's steps, columns: sum over its pieces).
 */
export function crossMap(tr, { layer = 0, head = 'mean', words = false } = {}) {
  const H = tr.numHeads;
  const T = tr.written.tokens.length;
  const S = tr.source.tokens.length;
  if (!Number.isInteger(layer) || layer < 0 || layer >= tr.cross.length) throw new RangeError(`crossMap: layer (${layer}) must be in [0, ${tr.cross.length - 1}]`);
  if (!HEAD_CHOICES.includes(head) && !(Number.isInteger(head) && head >= 0 && head < H)) {
    throw new RangeError(`crossMap: head (${head}) must be a head index in [0, ${H - 1}], mean or max`);
  }
  let w = tr.cross[layer];
  if (w.length !== H * T * S) throw new RangeError(`crossMap: layer ${layer} holds ${w.length} weights, not ${H}×${T}×${S}`);
  let rows = tr.written.tokens;
  let cols = tr.source.tokens;
  let R = T;
  let C = S;
  let rowGroups = null;
  let colGroups = null;
  if (words) {
    const gr = wordGroups(rows);
    const gc = wordGroups(cols, undefined, { text: tr.source.text, offsets: tr.source.offsets });
    const merged = mergeWords(w, T, S, gr.groups, gc.groups, H);
    ({ values: w, rows: R, cols: C } = merged);
    rows = gr.words;
    cols = gc.words;
    rowGroups = gr.groups;
    colGroups = gc.groups;
  }
  const values = head === 'mean' ? meanOverHeads(w, H, R, C) : head === 'max' ? maxOverHeads(w, H, R, C)
    : w.slice(head * R * C, (head + 1) * R * C);
  return {
    rows, cols, values, domain: [0, maxOf(values) || 1], rowGroups, colGroups,
    ids: words ? undefined : tr.written.ids, keyIds: words ? undefined : tr.source.ids,
  };
}

/** A map's figure (web/render/data.js) for the exports: `view` 'heatmap' or 'lines' (the alignment's numbers). */
export function crossFigure(tr, map, { layer, head, view = 'heatmap', title }) {
  const aggregate = HEAD_CHOICES.includes(head) ? head : 'head';
  return {
    view, model: tr.model, text: { source: tr.source.text, target: tr.text }, attention: 'cross', title,
    tokens: map.rows, ids: map.ids?.map((id) => id ?? -1), keyTokens: map.cols, keyIds: map.keyIds, rows: map.rows.length, cols: map.cols.length,
    panels: [{ layer, head: aggregate === 'head' ? head : null, aggregate, values: map.values, domain: map.domain }],
  };
}

/** The strongest source column of row `i` of a map: { j, weight }. */
export function strongest(map, i) {
  const C = map.cols.length;
  let j = 0;
  for (let k = 1; k < C; k++) if (map.values[i * C + k] > map.values[i * C + j]) j = k;
  return { j, weight: map.values[i * C + j] };
}

const GAP = 12; // px between two tokens of a row
const PAD = 8; // px around a token's text

/** One row of token boxes spread over `width` from `left`: [{ x (centre), w (box), label }]. */
function rowLayout(labels, width, left) {
  const ws = labels.map((l) => textWidth(l, 12) + 2 * PAD);
  const natural = ws.reduce((a, b) => a + b, 0);
  const gap = labels.length > 1 ? Math.max(GAP, (width - natural) / (labels.length - 1)) : 0;
  const used = natural + gap * Math.max(0, labels.length - 1);
  let x = left + Math.max(0, (width - used) / 2);
  return labels.map((label, k) => {
    const box = { x: x + ws[k] / 2, w: ws[k], label };
    x += ws[k] + gap;
    return box;
  });
}

/** The natural width of a row: its boxes and the smallest gaps. */
const rowWidth = (labels) => labels.reduce((a, l) => a + textWidth(l, 12) + 2 * PAD, 0) + GAP * Math.max(0, labels.length - 1);

/**
 * d2l's alignment figure as a tree of SVG elements [tag, attrs, children | text]: the source tokens (`map.cols`) in
 * a row at the top, the target tokens (`map.rows`) at the bottom, a line for every pair whose weight is above
 * `floor`, its opacity and width growing with the weight (scaled to the map's largest); the lines of `selected`
 * (a target row, or null) drawn strong and the others faint. `labels(token)` shortens a token for display.
 * `width`: the smallest width (grows to fit the tokens). Returns { tree, width, height }.
 */
export function alignmentTree(map, { width = 480, selected = null, floor = 0.02, color = '#3b6fb6', title = '', labels = (x) => x } = {}) {
  const top = map.cols.map(labels);
  const bottom = map.rows.map(labels);
  const inner = Math.ceil(Math.max(width - 4, rowWidth(top), rowWidth(bottom)));
  const W = inner + 4; // 2 px beside the boxes, so that their borders are not cut
  const BOX = 22;
  const titleH = title ? 22 : 0;
  const yTop = titleH + 4;
  const yBottom = yTop + BOX + Math.max(90, Math.min(200, 8 * Math.max(top.length, bottom.length)));
  const H = yBottom + BOX + 4;
  const src = rowLayout(top, inner, 2);
  const tgt = rowLayout(bottom, inner, 2);
  const hi = map.domain[1] || 1;
  const C = map.cols.length;
  const lines = [];
  for (let i = 0; i < map.rows.length; i++) {
    for (let j = 0; j < C; j++) {
      const v = map.values[i * C + j];
      if (!(v > floor)) continue;
      const a = v / hi;
      const on = selected == null || selected === i;
      lines.push(['line', {
        x1: num(src[j].x), y1: yTop + BOX, x2: num(tgt[i].x), y2: yBottom, stroke: color,
        'stroke-width': num(0.6 + 3.4 * a), 'stroke-opacity': num(on ? 0.12 + 0.88 * a : 0.05 * a + 0.02),
        'data-row': i, 'data-col': j, 'data-weight': v,
      }]);
    }
  }
  const box = (b, y, k, side) => ['g', { class: `al-token al-${side}`, 'data-index': k }, [
    ['rect', { x: num(b.x - b.w / 2), y, width: num(b.w), height: BOX, rx: 4, class: side === 'target' && k === selected ? 'al-box al-selected' : 'al-box' }],
    ['text', { x: num(b.x), y: y + 15, 'text-anchor': 'middle', class: 'al-text' }, b.label],
  ]];
  const tree = ['svg', { xmlns: 'http://www.w3.org/2000/svg', width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'al-svg' }, [
    title ? ['text', { x: 4, y: 15, class: 'al-title' }, title] : null,
    ['g', { class: 'al-lines' }, lines],
    ['g', { class: 'al-source' }, src.map((b, k) => box(b, yTop, k, 'source'))],
    ['g', { class: 'al-target' }, tgt.map((b, k) => box(b, yBottom, k, 'target'))],
  ].filter(Boolean)];
  return { tree, width: W, height: H };
}

// the export's look: the page's classes written out (an exported file has no style sheet)
const SVG_STYLE = '.al-box{fill:#fff;stroke:#8a94a6}.al-selected{stroke:#d9480f;stroke-width:2}.al-text{font:12px sans-serif;fill:#1d2330}.al-title{font:bold 12px sans-serif;fill:#1d2330}';

/** An alignment tree (alignmentTree) as an SVG document's text. */
export function toSvgText(tree) {
  const walk = ([tag, attrs, kids]) => {
    const a = Object.entries(attrs).map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`).join('');
    const inner = typeof kids === 'string' ? escapeXml(kids) : (kids ?? []).map(walk).join('');
    const head = tag === 'svg' ? `<style>${SVG_STYLE}</style><rect width="100%" height="100%" fill="#ffffff"/>` : '';
    return `<${tag}${a}>${head}${inner}</${tag}>`;
  };
  return `<?xml version="1.0" encoding="UTF-8"?>\n${walk(tree)}\n`;
}
