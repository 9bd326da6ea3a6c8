// Model view (layer: web; bertviz's model view): every layer × head of the trace's self-attention as a
// small heatmap, all drawn into ONE canvas with one putImageData (12 × 12 heads of 64 tokens is ~600k
// pixels, a few ms), CSS-scaled; click a thumbnail (or a table cell) to open that layer and head in the
// attention view. Below it, per-head entropy and mean attention distance tables. Also the attention
// panel's aggregate map (mean / max over heads, rollout). Numbers come from web/aggregates.js and the
// trace; the views lay them out. Data in, element out.
import { h, fmt } from '../dom.js';
import * as colors from '../colors.js';
import { heatmap } from './heatmap.js';

/**
 * modelView({ trace, entropy, distance, layer, heads, width, onOpen }) → HTMLElement
 * entropy, distance: per layer a Float64Array(H) (web/aggregates.js); onOpen(layer, head).
 */
export function modelView(o) {
  const { trace, width } = o;
  const n = trace.n;
  const L = trace.layers.length;
  const H = trace.layers[0].attention.weights.length / (n * n);
  const gap = Math.max(1, Math.round(n / 6));
  const pitch = n + gap;
  const cw = H * pitch - gap;
  const chh = L * pitch - gap;

  // ---- one canvas: tile (l, hd) at (hd·pitch, l·pitch), one pixel per cell, each tile scaled to its
  // own largest weight (so a diffuse head still shows its pattern); gaps white
  const canvas = h('canvas', {
    class: 'mv-canvas', tabindex: 0, role: 'img',
    'aria-label': `all ${L} layers × ${H} heads, ${n} × ${n} weights each; click one to open it`,
    dataset: { layers: L, heads: H, n, gap },
  });
  canvas.width = cw;
  canvas.height = chh;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(cw, chh);
  const px = new Uint32Array(img.data.buffer); // one RGBA word per pixel, written once
  px.fill(0xffffffff);
  const lut = packedLut(colors.weights.rgb);
  for (let l = 0; l < L; l++) {
    const w = trace.layers[l].attention.weights;
    for (let hd = 0; hd < H; hd++) {
      const base = hd * n * n;
      let mx = 0;
      for (let c = 0; c < n * n; c++) if (w[base + c] > mx) mx = w[base + c];
      const scale = mx > 0 ? 255 / mx : 0;
      for (let i = 0; i < n; i++) {
        let p = (l * pitch + i) * cw + hd * pitch;
        const row = base + i * n;
        for (let j = 0; j < n; j++) {
          const t = (w[row + j] * scale + 0.5) | 0;
          px[p++] = lut[t < 0 ? 0 : t > 255 ? 255 : t];
        }
      }
    }
  }
  ctx.putImageData(img, 0, 0);

  // ---- geometry in CSS pixels: thumbnails 24…96 px, the grid as wide as fits
  const labelW = 34;
  const tile = Math.max(24, Math.min(96, Math.floor((width - labelW) / H) - 4));
  const cssW = tile * H;
  const cssH = Math.round((cssW * chh) / cw);
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    const hd = Math.floor(((e.clientX - r.left) / r.width) * cw / pitch);
    const l = Math.floor(((e.clientY - r.top) / r.height) * chh / pitch);
    return l >= 0 && l < L && hd >= 0 && hd < H ? [l, hd] : null;
  };
  const pct = (v, of) => `${(100 * v) / of}%`;
  const box = (l, hd, cls) => {
    const el = h('div', { class: cls });
    el.style.left = pct(hd * pitch, cw);
    el.style.top = pct(l * pitch, chh);
    el.style.width = pct(n, cw);
    el.style.height = pct(n, chh);
    return el;
  };
  const sel = (o.heads ?? []).length === 1 ? o.heads[0] : null;
  const marks = [];
  if (o.layer < L) {
    for (const hd of (o.heads ?? []).filter((x) => x < H)) marks.push(box(o.layer, hd, 'mv-mark'));
  }
  const hover = h('div', { class: 'mv-hover' });
  hover.hidden = true;
  const tip = h('div', { class: 'mv-tip', role: 'status' });
  tip.hidden = true;
  const describe = (l, hd) => `Layer ${l + 1} · head ${hd + 1} · entropy ${fmt(o.entropy[l][hd], 3)} nats · mean distance ${fmt(o.distance[l][hd], 2)} tokens — click to open`;
  let active = null;
  const show = (c) => {
    active = c;
    if (!c) {
      hover.hidden = true;
      tip.hidden = true;
      return;
    }
    const [l, hd] = c;
    Object.assign(hover.style, { left: pct(hd * pitch, cw), top: pct(l * pitch, chh) });
    hover.hidden = false;
    tip.textContent = describe(l, hd);
    tip.hidden = false;
  };
  hover.style.width = pct(n, cw);
  hover.style.height = pct(n, chh);
  canvas.addEventListener('mousemove', (e) => show(at(e)));
  canvas.addEventListener('mouseleave', () => show(null));
  canvas.addEventListener('click', (e) => {
    const c = at(e);
    if (c) o.onOpen(c[0], c[1]);
  });
  canvas.addEventListener('focus', () => show(active ?? [Math.min(o.layer, L - 1), sel ?? 0]));
  canvas.addEventListener('blur', () => show(null));
  canvas.addEventListener('keydown', (e) => {
    const [l, hd] = active ?? [0, 0];
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[e.key]) {
      e.preventDefault();
      show([Math.min(L - 1, Math.max(0, l + moves[e.key][0])), Math.min(H - 1, Math.max(0, hd + moves[e.key][1]))]);
    } else if (e.key === 'Enter') o.onOpen(l, hd);
  });

  const colLabels = h('div', { class: 'mv-cols' });
  colLabels.style.width = `${cssW}px`;
  for (let hd = 0; hd < H; hd++) {
    const t = h('span', { text: H > 16 && hd % 2 ? '' : `H${hd + 1}` });
    t.style.left = pct(hd * pitch + n / 2, cw);
    colLabels.append(t);
  }
  const rowLabels = h('div', { class: 'mv-rows' });
  rowLabels.style.height = `${cssH}px`;
  for (let l = 0; l < L; l++) {
    const t = h('span', { text: `L${l + 1}` });
    t.style.top = pct(l * pitch + n / 2, chh);
    rowLabels.append(t);
  }
  const plot = h('div', { class: 'mv-plot' }, canvas, ...marks, hover, tip);
  plot.style.width = `${cssW}px`;
  plot.style.height = `${cssH}px`;
  const grid = h('div', { class: 'mv-grid' }, h('div'), colLabels, rowLabels, plot);

  return h('div', { class: 'view-body model-view' },
    h('figure', { class: 'mv-fig' },
      h('figcaption', { class: 'hm-title', text: `Self-attention of every layer (rows) × head (columns), queries down, keys across; each thumbnail scaled to its own largest weight` }),
      h('div', { class: 'scroll-x' }, grid)),
    h('div', { class: 'example-results' },
      metricTable('entropy', `Entropy per head (nats; uniform over ${n} keys = ${fmt(Math.log(n), 2)})`, o.entropy, L, H, 3, o),
      metricTable('distance', 'Mean attention distance per head (tokens)', o.distance, L, H, 2, o)));
}

/** A 256-entry colour table as RGBA words in the platform's byte order (for a Uint32Array over ImageData). */
const packedLuts = new WeakMap();
function packedLut(rgb) {
  let lut = packedLuts.get(rgb);
  if (!lut) {
    lut = new Uint32Array(256);
    const bytes = new Uint8Array(lut.buffer);
    for (let i = 0; i < 256; i++) bytes.set([rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2], 255], i * 4);
    packedLuts.set(rgb, lut);
  }
  return lut;
}

function metricTable(name, title, values, L, H, digits, o) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of values) for (const v of row) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const t = h('table', { class: 'matrix metric', dataset: { metric: name } });
  t.append(h('thead', {}, h('tr', {}, h('th'), Array.from({ length: H }, (_, hd) => h('th', { scope: 'col', text: `H${hd + 1}` })))));
  const tb = h('tbody');
  for (let l = 0; l < L; l++) {
    const tr = h('tr', {}, h('th', { scope: 'row', text: `L${l + 1}` }));
    for (let hd = 0; hd < H; hd++) {
      const v = values[l][hd];
      const on = l === o.layer && (o.heads ?? []).length === 1 && o.heads[0] === hd;
      const td = h('td', {
        text: fmt(v, digits), tabindex: 0, class: on ? 'on' : null, title: `layer ${l + 1}, head ${hd + 1}: open in the attention view`,
        dataset: { layer: l, head: hd, value: v },
      });
      td.style.background = colors.cssColor(colors.magnitude, v, lo, hi > lo ? hi : lo + 1);
      td.style.color = colors.textOn(colors.magnitude, v, lo, hi > lo ? hi : lo + 1);
      td.addEventListener('click', () => o.onOpen(l, hd));
      td.addEventListener('keydown', (e) => { if (e.key === 'Enter') o.onOpen(l, hd); });
      tr.append(td);
    }
    tb.append(tr);
  }
  t.append(tb);
  return h('figure', { class: 'matrix-fig' }, h('figcaption', { class: 'hm-title', text: title }), h('div', { class: 'scroll-x' }, t));
}

const AGG_TITLE = {
  mean: 'mean over heads',
  max: 'max over heads',
  rollout: 'attention rollout through layer',
};

/**
 * aggregateView({ values, agg, layer, tokens, hidden, thr, topk, width, token, onSelect }) → HTMLElement
 * values [n, n] (already aggregated and filtered by web/aggregates.js).
 */
export function aggregateView(o) {
  const n = o.tokens.length;
  const title = o.agg === 'rollout'
    ? `${AGG_TITLE.rollout} ${o.layer + 1}: (mean + I), rows renormalised, multiplied through layers 1…${o.layer + 1}`
    : `Layer ${o.layer + 1} · ${AGG_TITLE[o.agg]}`;
  let hi = 0;
  for (const v of o.values) if (v > hi) hi = v;
  const filt = [o.thr > 0 ? `weights < ${o.thr}` : null, o.topk > 0 ? `all but the top ${o.topk} per query` : null].filter(Boolean);
  return h('div', { class: 'aggregate' },
    heatmap({
      values: o.values, rows: n, cols: n, map: colors.weights, kind: 'weights', domain: [0, hi > 0 ? hi : 1],
      rowLabels: o.tokens, colLabels: o.tokens, rowName: 'query', colName: 'key', title,
      width: Math.min(o.width, 560), cellMax: 30, legendLabel: 'weight',
      dataset: { kind: 'aggregate', agg: o.agg, layer: o.layer }, selectedRow: o.token, onCell: (i) => o.onSelect(i),
    }),
    filt.length ? h('p', { class: 'note', text: `Hidden: ${filt.join(' and ')} (${o.hidden} link${o.hidden === 1 ? '' : 's'}).` }) : null);
}
