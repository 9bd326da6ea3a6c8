// Views of a long input (layer: web; web/long.js says what the trace holds): the layer tabs and head chips of the
// attention view, each drawn head's map as a big heatmap (./bigmap.js: block maxima, zoom and pan), and the top-k
// links per token — not n² lines — from the module's per-head summaries: queries along the top, keys along the
// bottom, one line per (query, key among its top k), opacity = weight, rasterised by hand into one buffer (at
// 2,048 tokens × 5 links, 10k lines; canvas strokes would take a second). The selected token's links are drawn in
// the accent colour and listed with their exact weights. Data in, element out.
import { h, fmt, tokenLabel } from '../dom.js';
import * as colors from '../colors.js';
import { t } from '../i18n.js';
import { bigHeatmap } from './bigmap.js';
import { headChips } from './lines.js';
import { MAX_TOKENS, USUAL_BUDGET, usualBytes } from '../long.js';

const MB = (b) => String(Math.round(b / 1e6));

/** Why a trace of at most MAX_TOKENS tokens is long: its every map would pass the page's budget (web/long.js). */
function sizeNote(trace) {
  if (trace.n > MAX_TOKENS || !trace.config) return null;
  const { numLayers, numHeads } = trace.config;
  return h('p', { class: 'note', dataset: { name: 'long-size' }, text: t('long.size', {
    n: trace.n, layers: numLayers, heads: numHeads, mb: MB(usualBytes(trace.config, trace.n)), budget: MB(USUAL_BUDGET), limit: trace.long.limit,
  }) });
}

/** The top-k links of head `hd` of a layer's summary: { ids, weights, k, rows } (rows = nReal). */
export function topLinks(summary, hd) {
  const k = summary.topK;
  const rows = summary.topIds.length / (k * (summary.entropy.length || 1));
  const at = hd * rows * k;
  return { ids: summary.topIds.subarray(at, at + rows * k), weights: summary.topWeights.subarray(at, at + rows * k), k, rows };
}

/**
 * topkLines({ links, tokens, n, token, width, head }) → HTMLElement: every query's top-k keys as lines from the
 * query's position (top axis) to the key's (bottom axis); the selected token's in the accent colour and listed.
 */
export function topkLines(o) {
  const { links, tokens, n } = o;
  const W = Math.max(200, Math.min(900, o.width - 8));
  const H = 150;
  const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
  const cw = Math.round(W * dpr);
  const chh = Math.round(H * dpr);
  const canvas = h('canvas', { class: 'topk-canvas', 'aria-hidden': 'true', dataset: { rows: links.rows, k: links.k, head: o.head } });
  canvas.width = cw;
  canvas.height = chh;
  canvas.style.width = `${W}px`;
  canvas.style.height = `${H}px`;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(cw, chh);
  const rgb = new Float32Array(cw * chh * 3).fill(255);
  const [hr, hg, hb] = hexRgb(colors.headColor(o.head));
  const x = (p) => ((p + 0.5) / n) * (cw - 1);
  // one line, stepped along y (always the major axis here), blended over white with alpha = weight
  const line = (x0, x1, a, r, g, b) => {
    for (let yy = 0; yy < chh; yy++) {
      const xx = Math.round(x0 + ((x1 - x0) * yy) / (chh - 1));
      const q = (yy * cw + xx) * 3;
      rgb[q] += (r - rgb[q]) * a;
      rgb[q + 1] += (g - rgb[q + 1]) * a;
      rgb[q + 2] += (b - rgb[q + 2]) * a;
    }
  };
  const { ids, weights, k, rows } = links;
  for (let i = 0; i < rows; i++) {
    if (i === o.token) continue;
    for (let r = 0; r < k; r++) {
      const j = ids[i * k + r];
      if (j >= 0) line(x(i), x(j), Math.min(1, weights[i * k + r]) * 0.6, hr, hg, hb);
    }
  }
  const sel = o.token < rows ? o.token : null;
  if (sel != null) {
    for (let r = 0; r < k; r++) {
      const j = ids[sel * k + r];
      if (j >= 0) line(x(sel), x(j), Math.max(0.35, Math.min(1, weights[sel * k + r])), 220, 38, 38);
    }
  }
  for (let q = 0, p = 0; q < rgb.length; q += 3, p += 4) {
    img.data[p] = rgb[q];
    img.data[p + 1] = rgb[q + 1];
    img.data[p + 2] = rgb[q + 2];
    img.data[p + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  const list = h('ol', { class: 'topk-list', dataset: { token: sel ?? '' } });
  if (sel != null) {
    for (let r = 0; r < k; r++) {
      const j = ids[sel * k + r];
      if (j < 0) continue;
      list.append(h('li', { dataset: { key: j, weight: weights[sel * k + r] }, text: t('long.link', { j, token: tokenLabel(tokens[j], 24), w: fmt(weights[sel * k + r], 4) }) }));
    }
  }
  return h('figure', { class: 'topk-lines' },
    h('figcaption', { class: 'hm-title', text: t('long.linesTitle', { k, h: o.head + 1, n }) }),
    h('div', { class: 'topk-axis' }, h('span', { text: t('long.queries') }), h('span', { text: `0 … ${n - 1}` })),
    canvas,
    h('div', { class: 'topk-axis' }, h('span', { text: t('long.keys') }), h('span', { text: `0 … ${n - 1}` })),
    sel != null ? h('p', { class: 'note', text: t('long.selected', { i: sel, token: tokenLabel(tokens[sel], 24), k }) }) : null,
    list);
}

/**
 * longAttentionView({ trace, layer, heads, token, width, onLayer, onHeads, onSelect }) → HTMLElement: the layer tabs,
 * head chips (at most `max` heads at once), and for each drawn head its big map and its top-k links.
 */
export function longAttentionView(o) {
  const { trace } = o;
  const n = trace.n;
  const L = trace.layers.length;
  const H = trace.numHeads;
  const tabs = h('div', { class: 'layer-tabs', role: 'tablist', 'aria-label': t('attention.layers') });
  for (let l = 0; l < L; l++) {
    const b = h('button', { type: 'button', role: 'tab', class: 'tab', 'aria-selected': String(l === o.layer), dataset: { layer: l }, text: t('attention.layer', { l: l + 1 }) });
    b.addEventListener('click', () => o.onLayer(l));
    tabs.append(b);
  }
  const view = h('div', { class: 'view-body long-view' },
    h('p', { class: 'note', dataset: { name: 'long-note' }, text: t('long.note', { n, max: o.max, limit: trace.long.limit }) }),
    sizeNote(trace),
    h('div', { class: 'attn-controls' }, tabs, H > 1 ? headChips({ numHeads: H, selected: o.heads, onChange: (next) => o.onHeads(atMost(next, o.heads, o.max)) }) : null));
  for (const hd of o.heads) {
    const map = trace.heads.find((x) => x.layer === o.layer && x.head === hd);
    const part = h('div', { class: 'long-head', dataset: { head: hd } });
    if (map) {
      let hi = 0;
      for (const v of map.weights) if (v > hi) hi = v;
      part.append(bigHeatmap({
        values: map.weights, rows: n, cols: n, map: colors.weights, kind: 'weights', domain: [0, hi > 0 ? hi : 1],
        rowLabels: trace.tokens, colLabels: trace.tokens, rowName: t('axis.query'), colName: t('axis.key'),
        title: t('long.mapTitle', { l: o.layer + 1, h: hd + 1 }), width: o.width, legendLabel: t('heatmap.weight'),
        dataset: { kind: 'attention', layer: o.layer, head: hd }, onCell: (i) => o.onSelect(i),
        causal: trace.config?.architecture === 'decoder',
      }));
    } else part.append(h('p', { class: 'note', role: 'status', text: t('long.computing', { h: hd + 1 }) }));
    part.append(linksOf(o, hd));
    view.append(part);
  }
  /** Moves the selected token (its links in red, listed) without redrawing the maps, whose zoom stays. */
  view.selectToken = (token) => {
    for (const part of view.querySelectorAll('.long-head')) part.querySelector('.topk-lines').replaceWith(linksOf({ ...o, token }, Number(part.dataset.head)));
  };
  return view;
}

/** The top-k links view of head `hd` of a longAttentionView's arguments `o`. */
const linksOf = (o, hd) => topkLines({
  links: topLinks(o.trace.layers[o.layer].attention.summary, hd), tokens: o.trace.tokens, n: o.trace.n, token: o.token, width: o.width, head: hd,
});

/** The heads chosen: `next`, but at most `max`: a head just added joins the most recent ones. */
export function atMost(next, before, max) {
  if (next.length <= max) return next;
  const added = next.filter((x) => !before.includes(x));
  return [...before.slice(-(max - added.length)), ...added].slice(-max).sort((a, b) => a - b);
}

function hexRgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}
