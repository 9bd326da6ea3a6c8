// Model view (layer: web; bertviz's model view): every layer × head of the trace's attention as a
// small heatmap (for encoder–decoder models the encoder's, the decoder's and the cross-attention, one
// grid each), each grid drawn into ONE canvas with one putImageData (12 × 12 heads of 64 tokens: ~590k pixels, one RGBA word
// each), CSS-scaled; click a thumbnail (or a table cell) to open that layer and head in the
// attention view. Below it, per-head entropy and mean attention distance tables. Also the attention
// panel's aggregate map (mean / max over heads, rollout). Numbers come from web/aggregates.js and the
// trace; the views lay them out. Data in, element out.
import { h, fmt } from '../dom.js';
import * as colors from '../colors.js';
import { heatmap, packedLut } from './heatmap.js';
import { poolMax } from '../render/blockmax.js';
import { t } from '../i18n.js';

const MAX_TILE = 128; // pixels a side of one thumbnail at most (drawn at ≤ 96 CSS px)

/**
 * modelView({ sections, layer, heads, width, onOpen }) → HTMLElement
 * sections: [{ key, title, weights: per layer Float32Array [H, n, m], H, n, m, entropy, distance?, open, stride? }]
 * — one grid each (self-attention; for encoder–decoder models the encoder's, the decoder's and the
 * cross-attention); entropy / distance per layer a Float64Array(H) (web/aggregates.js); a section with
 * `open` opens a clicked head in the attention view through onOpen(layer, head). The element's
 * setSelection(layer, heads) moves the marks of the shown layer and heads without redrawing the thumbnails
 * (at 512 tokens × 12 × 12 heads they are ~0.4 s to draw).
 */
export function modelView(o) {
  const body = h('div', { class: 'view-body model-view' });
  const parts = [];
  for (const sec of o.sections) {
    if (o.sections.length > 1) body.append(h('h3', { class: 'sub-title', text: sec.title }));
    const fig = grid(sec, o, o.sections.length === 1);
    const tables = [metricTable(sec, 'entropy', t('model.entropyTitle', { m: sec.m, uniform: fmt(Math.log(sec.m), 2) }), sec.entropy, 3, o),
      sec.distance ? metricTable(sec, 'distance', t('model.distanceTitle'), sec.distance, 2, o) : null,
      sec.sink ? metricTable(sec, 'sink', t('sink.title'), sec.sink, 3, o) : null];
    parts.push(fig, ...tables.filter(Boolean));
    body.append(fig, h('div', { class: 'example-results' }, tables));
  }
  body.setSelection = (layer, heads) => {
    for (const p of parts) p.setSelection(layer, heads);
  };
  return body;
}

/** One section's canvas of L × H thumbnails with labels, hover and click. */
function grid(sec, o, named) {
  const { H } = sec;
  // sec.pooled { n, m, stride }: the weights are already block-max pooled (an attention file too big to hold,
  // web/attnfile-stream.js); n and m are then the pooled sides, sec.n and sec.m still the tokens
  const n = sec.pooled?.n ?? sec.n;
  const m = sec.pooled?.m ?? sec.m;
  const L = sec.weights.length;
  // a thumbnail is at most 96 CSS px wide, so a tile keeps at most MAX_TILE pixels a side: above that, each
  // pixel is the largest weight of an s × s block of cells (max pooling keeps thin diagonals and single
  // strong links visible); 512 tokens × 12 × 12 heads: 5.4 M pixels instead of 51 M. A section with `stride`
  // brings its tiles already pooled ([H, ceil(n / stride), ceil(m / stride)] per layer: a long input's, web/long.js)
  const s = sec.stride ?? Math.max(1, Math.ceil(Math.max(n, m) / MAX_TILE));
  const tn = Math.ceil(n / s);
  const tm = Math.ceil(m / s);
  const direct = s === 1 || !!sec.stride; // one value per pixel as given
  const rn = direct ? tn : n;
  const rm = direct ? tm : m;
  const gap = Math.max(1, Math.round(Math.max(tn, tm) / 6));
  const pitchX = tm + gap;
  const pitchY = tn + gap;
  const cw = H * pitchX - gap;
  const chh = L * pitchY - gap;
  const open = sec.open ? o.onOpen : null;
  const sel = { layer: o.layer, heads: o.heads ?? [] }; // the shown layer and heads, marked (setSelection)

  // ---- one canvas: tile (l, hd) at (hd·pitchX, l·pitchY), one pixel per cell, each tile scaled to its
  // own largest weight (so a diffuse head still shows its pattern); gaps white
  const canvas = h('canvas', {
    class: 'mv-canvas', tabindex: 0, role: 'img',
    'aria-label': t(open ? 'model.gridAriaOpen' : 'model.gridAria', { title: sec.title, L, H, n: sec.n, m: sec.m }),
    dataset: { section: sec.key, layers: L, heads: H, n: sec.n, m: sec.m, gap, stride: sec.pooled?.stride ?? s },
  });
  canvas.width = cw;
  canvas.height = chh;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(cw, chh);
  const px = new Uint32Array(img.data.buffer); // one RGBA word per pixel, written once
  px.fill(0xffffffff);
  const lut = packedLut(colors.weights.rgb);
  const pooled = direct ? null : new Float32Array(tn * tm);
  for (let l = 0; l < L; l++) {
    const w = sec.weights[l];
    for (let hd = 0; hd < H; hd++) {
      const base = hd * rn * rm;
      let mx = 0;
      for (let c = 0; c < rn * rm; c++) if (w[base + c] > mx) mx = w[base + c];
      const scale = mx > 0 ? 255 / mx : 0;
      if (direct) {
        for (let i = 0; i < rn; i++) {
          let p = (l * pitchY + i) * cw + hd * pitchX;
          const row = base + i * rm;
          for (let j = 0; j < rm; j++) {
            const t = (w[row + j] * scale + 0.5) | 0;
            px[p++] = lut[t < 0 ? 0 : t > 255 ? 255 : t];
          }
        }
      } else {
        poolMax(w.subarray(base, base + n * m), n, m, s, pooled);
        for (let a = 0; a < tn; a++) {
          let p = (l * pitchY + a) * cw + hd * pitchX;
          for (let b = 0; b < tm; b++) {
            const t = (pooled[a * tm + b] * scale + 0.5) | 0;
            px[p++] = lut[t < 0 ? 0 : t > 255 ? 255 : t];
          }
        }
      }
    }
  }
  ctx.putImageData(img, 0, 0);

  // ---- geometry in CSS pixels: thumbnails 24…96 px wide, the grid as wide as fits
  const labelW = 34;
  const tile = Math.max(24, Math.min(96, Math.floor((o.width - labelW) / H) - 4));
  const cssW = tile * H;
  const cssH = Math.round((cssW * chh) / cw);
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    const hd = Math.floor((((e.clientX - r.left) / r.width) * cw) / pitchX);
    const l = Math.floor((((e.clientY - r.top) / r.height) * chh) / pitchY);
    return l >= 0 && l < L && hd >= 0 && hd < H ? [l, hd] : null;
  };
  const pct = (v, of) => `${(100 * v) / of}%`;
  const place = (el, l, hd) => {
    el.style.left = pct(hd * pitchX, cw);
    el.style.top = pct(l * pitchY, chh);
    el.style.width = pct(tm, cw);
    el.style.height = pct(tn, chh);
    return el;
  };
  const marks = open && sel.layer < L ? sel.heads.filter((x) => x < H).map((hd) => place(h('div', { class: 'mv-mark' }), sel.layer, hd)) : [];
  const hover = h('div', { class: 'mv-hover' });
  hover.hidden = true;
  const tip = h('div', { class: 'mv-tip', 'aria-hidden': 'true' });
  tip.hidden = true;
  const live = h('div', { class: 'sr-only mv-live', 'aria-live': 'polite', 'aria-atomic': 'true' });
  const describe = (l, hd) => t('model.describe', { l: l + 1, h: hd + 1, entropy: fmt(sec.entropy[l][hd], 3) })
    + `${sec.distance ? t('model.describeDistance', { d: fmt(sec.distance[l][hd], 2) }) : ''}${open ? t('model.describeOpen') : ''}`;
  let active = null;
  const show = (c, announce = false) => {
    active = c;
    hover.hidden = !c;
    tip.hidden = !c;
    if (c) {
      place(hover, c[0], c[1]);
      tip.textContent = describe(c[0], c[1]);
      if (announce) live.textContent = tip.textContent;
    }
  };
  canvas.addEventListener('mousemove', (e) => show(at(e)));
  canvas.addEventListener('mouseleave', () => show(null));
  if (open) {
    canvas.classList.add('opens');
    canvas.addEventListener('click', (e) => {
      const c = at(e);
      if (c) open(c[0], c[1]);
    });
  }
  canvas.addEventListener('focus', () => show(active ?? [Math.min(sel.layer, L - 1), sel.heads[0] ?? 0], true));
  canvas.addEventListener('blur', () => show(null));
  canvas.addEventListener('keydown', (e) => {
    const [l, hd] = active ?? [0, 0];
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[e.key]) {
      e.preventDefault();
      show([Math.min(L - 1, Math.max(0, l + moves[e.key][0])), Math.min(H - 1, Math.max(0, hd + moves[e.key][1]))], true);
    } else if (e.key === 'Enter' && open) open(l, hd);
  });

  const colLabels = h('div', { class: 'mv-cols' });
  colLabels.style.width = `${cssW}px`;
  for (let hd = 0; hd < H; hd++) {
    const t = h('span', { text: H > 16 && hd % 2 ? '' : `H${hd + 1}` });
    t.style.left = pct(hd * pitchX + tm / 2, cw);
    colLabels.append(t);
  }
  const rowLabels = h('div', { class: 'mv-rows' });
  rowLabels.style.height = `${cssH}px`;
  for (let l = 0; l < L; l++) {
    const t = h('span', { text: `L${l + 1}` });
    t.style.top = pct(l * pitchY + tn / 2, chh);
    rowLabels.append(t);
  }
  const plot = h('div', { class: 'mv-plot' }, canvas, ...marks, hover, tip, live);
  plot.style.width = `${cssW}px`;
  plot.style.height = `${cssH}px`;
  const fig = h('figure', { class: 'mv-fig' },
    h('figcaption', { class: 'hm-title', text: named ? t('model.gridCaptionNamed', { title: sec.title }) : t('model.gridCaption') }),
    h('div', { class: 'scroll-x' }, h('div', { class: 'mv-grid' }, h('div'), colLabels, rowLabels, plot)));
  fig.setSelection = (layer, heads = []) => {
    sel.layer = layer;
    sel.heads = heads;
    if (!open) return;
    for (const el of marks.splice(0)) el.remove();
    if (layer < L) for (const hd of heads.filter((x) => x < H)) marks.push(place(h('div', { class: 'mv-mark' }), layer, hd));
    canvas.after(...marks);
  };
  return fig;
}

export function metricTable(sec, name, title, values, digits, o) {
  const L = values.length;
  const H = sec.H;
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of values) for (const v of row) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } // NaN: a head not read
  if (!(hi > lo)) hi = lo + 1;
  const tbl = h('table', { class: 'matrix metric', dataset: { metric: name, section: sec.key } });
  tbl.append(h('thead', {}, h('tr', {}, h('th'), Array.from({ length: H }, (_, hd) => h('th', { scope: 'col', text: `H${hd + 1}` })))));
  const tb = h('tbody');
  const solo = (o.heads ?? []).length === 1 ? o.heads[0] : null;
  for (let l = 0; l < L; l++) {
    const tr = h('tr', {}, h('th', { scope: 'row', text: `L${l + 1}` }));
    for (let hd = 0; hd < H; hd++) {
      const v = values[l][hd];
      const td = h('td', {
        text: fmt(v, digits), class: sec.open && l === o.layer && hd === solo ? 'on' : null,
        tabindex: sec.open ? 0 : null, title: sec.open ? t('model.cellTitle', { l: l + 1, h: hd + 1 }) : null,
        dataset: { layer: l, head: hd, value: v },
      });
      td.style.background = colors.cssColor(colors.magnitude, v, lo, hi);
      td.style.color = colors.textOn(colors.magnitude, v, lo, hi);
      if (sec.open) {
        td.classList.add('opens');
        td.addEventListener('click', () => o.onOpen(l, hd));
        td.addEventListener('keydown', (e) => { if (e.key === 'Enter') o.onOpen(l, hd); });
      }
      tr.append(td);
    }
    tb.append(tr);
  }
  tbl.append(tb);
  const fig = h('figure', { class: 'matrix-fig' }, h('figcaption', { class: 'hm-title', text: title }), h('div', { class: 'scroll-x', tabindex: sec.open ? null : 0 }, tbl)); // scrolls from the keyboard
  fig.setSelection = (layer, heads = []) => {
    if (!sec.open) return;
    const one = heads.length === 1 ? heads[0] : null;
    for (const td of tb.querySelectorAll('td')) td.classList.toggle('on', Number(td.dataset.layer) === layer && Number(td.dataset.head) === one);
  };
  return fig;
}


/**
 * aggregateView({ values, agg, layer, tokens, hidden, thr, topk, width, token, onSelect }) → HTMLElement
 * values [n, n] (already aggregated and filtered by web/aggregates.js).
 */
export function aggregateView(o) {
  const n = o.tokens.length;
  const title = o.agg === 'rollout'
    ? t('aggregate.rollout', { l: o.layer + 1 })
    : `${t('attention.layer', { l: o.layer + 1 })} · ${t(o.agg === 'mean' ? 'attention.aggMean' : 'attention.aggMax')}`;
  let hi = 0;
  for (const v of o.values) if (v > hi) hi = v;
  const filt = [o.thr > 0 ? t('aggregate.below', { thr: o.thr }) : null, o.topk > 0 ? t('aggregate.topk', { k: o.topk }) : null].filter(Boolean);
  return h('div', { class: 'aggregate' },
    heatmap({
      values: o.values, rows: n, cols: n, map: colors.weights, kind: 'weights', domain: [0, hi > 0 ? hi : 1],
      rowLabels: o.tokens, colLabels: o.tokens, rowName: t('axis.query'), colName: t('axis.key'), title,
      width: Math.min(o.width, 560), cellMax: 30, legendLabel: t('heatmap.weight'),
      dataset: { kind: 'aggregate', agg: o.agg, layer: o.layer }, selectedRow: o.token, onCell: (i) => o.onSelect(i),
    }),
    filt.length ? h('p', { class: 'note', text: t(o.hidden === 1 ? 'aggregate.hidden.one' : 'aggregate.hidden.other', { what: filt.join(t('aggregate.and')), n: o.hidden }) }) : null);
}
