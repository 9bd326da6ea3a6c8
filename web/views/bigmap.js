// A heatmap bigger than its box (layer: web): a 2,048 × 2,048 attention map has more cells than the screen has
// pixels, so the box shows a window of it, each canvas pixel the largest value of a block of cells
// (web/render/blockmax.js: a thin diagonal or one strong link stays visible), with zoom — the wheel, a pinch, the
// + / − / reset buttons, the + − 0 keys — and pan — dragging, Shift + arrow keys — down to single cells, where the
// tooltip and the live region give the exact value of the cell, as the ordinary heatmap (./heatmap.js) does.
// Arrow keys move the highlighted block and pan when it leaves the window. Data in, element out.
import { h, fmt } from '../dom.js';
import { domainOf, MASKED } from '../colors.js';
import { t } from '../i18n.js';
import { blockMax, blockStart, clampWindow } from '../render/blockmax.js';
import { cellText, packedLut, legend } from './heatmap.js';

const MIN_SPAN = 8; // cells across the window at the deepest zoom (each then many pixels wide)

/**
 * bigHeatmap({ values, rows, cols, map, domain?, kind?, rowLabels?, colLabels?, rowName?, colName?, title?, width,
 *              dataset?, onCell?, legendLabel?, causal? }) → HTMLElement (causal: cells j > i are masked, drawn grey) (a figure; fig.bigmap: { view(), blocks(), zoomTo() })
 */
export function bigHeatmap(o) {
  const { values, rows, cols, map } = o;
  if (values.length !== rows * cols) throw new Error(`bigHeatmap: ${values.length} values for ${rows}×${cols} cells`);
  const [lo, hi] = o.domain ?? domainOf(values, o.kind);
  const box = Math.max(120, Math.min(640, Math.floor((o.width ?? 320) - 8))); // CSS px a side
  const lut = packedLut(map.rgb);
  const grey = packedLut(MASKED)[0];
  const scale = hi > lo ? 255 / (hi - lo) : 0;
  const view = { r0: 0, r1: rows, c0: 0, c1: cols };
  let blocks = null;
  let outR = 0;
  let outC = 0;

  const canvas = h('canvas', {
    class: 'hm-canvas big-canvas', tabindex: 0, role: 'img',
    dataset: { rows, cols, kind: o.kind ?? 'values', lo, hi, big: '', ...(o.dataset ?? {}) },
  });
  const status = h('p', { class: 'note big-status', 'aria-live': 'polite' });
  const tip = h('div', { class: 'hm-tip', 'aria-hidden': 'true' });
  const cursor = h('div', { class: 'hm-cursor' });
  const live = h('div', { class: 'sr-only hm-live', 'aria-live': 'polite', 'aria-atomic': 'true' });
  const plot = h('div', { class: 'hm-plot big-plot' }, canvas, cursor, tip);
  let active = null; // [a, b] the highlighted block

  function draw() {
    const spanR = view.r1 - view.r0;
    const spanC = view.c1 - view.c0;
    outR = Math.min(spanR, box);
    outC = Math.min(spanC, box);
    blocks = blockMax(values, rows, cols, view, outR, outC);
    canvas.width = outC;
    canvas.height = outR;
    const cssW = box;
    const cssH = Math.round((box * spanR) / spanC);
    canvas.style.width = `${cssW}px`;
    canvas.style.height = `${cssH}px`;
    plot.style.width = `${cssW}px`;
    plot.style.height = `${cssH}px`;
    const ctx = canvas.getContext('2d');
    const img = ctx.createImageData(outC, outR);
    const px = new Uint32Array(img.data.buffer);
    // a causal map's blocks wholly above the diagonal are masked (grey), not weights of 0
    const lastRow = Int32Array.from({ length: outR }, (_, a) => blockStart(view.r0, spanR, outR, a + 1) - 1);
    const firstCol = Int32Array.from({ length: outC }, (_, b) => blockStart(view.c0, spanC, outC, b));
    const above = (q) => o.causal && firstCol[q % outC] > lastRow[(q / outC) | 0];
    for (let q = 0; q < blocks.length; q++) {
      const v = blocks[q];
      if (Number.isFinite(v) && !above(q)) {
        const k = Math.round((v - lo) * scale);
        px[q] = lut[k < 0 ? 0 : k > 255 ? 255 : k];
      } else px[q] = grey;
    }
    ctx.putImageData(img, 0, 0);
    const single = outR === spanR && outC === spanC;
    Object.assign(canvas.dataset, { view: [view.r0, view.r1, view.c0, view.c1].join(','), out: `${outR},${outC}`, single: String(single) });
    const args = {
      r0: view.r0, r1: view.r1 - 1, c0: view.c0, c1: view.c1 - 1,
      k: single ? 1 : `${Math.ceil(spanR / outR)}×${Math.ceil(spanC / outC)}`,
    };
    status.textContent = t(single ? 'bigmap.cells' : 'bigmap.blocks', args);
    canvas.setAttribute('aria-label', `${t('heatmap.aria', { title: o.title ?? t('heatmap.name'), rows, cols })} ${t('bigmap.keys')} ${status.textContent}`);
    if (active) show(Math.min(active[0], outR - 1), Math.min(active[1], outC - 1));
  }

  /** Block (a, b)'s cells: rows [i0, i1), cols [j0, j1). */
  const cellsOf = (a, b) => ({
    i0: blockStart(view.r0, view.r1 - view.r0, outR, a), i1: blockStart(view.r0, view.r1 - view.r0, outR, a + 1),
    j0: blockStart(view.c0, view.c1 - view.c0, outC, b), j1: blockStart(view.c0, view.c1 - view.c0, outC, b + 1),
  });

  function show(a, b, announce = false) {
    if (a == null) {
      active = null;
      tip.hidden = true;
      cursor.hidden = true;
      return;
    }
    active = [a, b];
    const c = cellsOf(a, b);
    const v = blocks[a * outC + b];
    tip.textContent = c.i1 - c.i0 === 1 && c.j1 - c.j0 === 1
      ? cellText(o, c.i0, c.j0, values[c.i0 * cols + c.j0], !!o.causal && c.j0 > c.i0)
      : t('bigmap.block', { i0: c.i0, i1: c.i1 - 1, j0: c.j0, j1: c.j1 - 1, value: Number.isFinite(v) ? fmt(v, o.digits ?? 4) : t('heatmap.masked') });
    tip.hidden = false;
    window.addEventListener('scroll', hideTip, { once: true, passive: true }); // the tooltip is fixed: it would float
    if (announce) {
      live.textContent = tip.textContent;
      Object.assign(live.dataset, { row: c.i0, col: c.j0, rows: c.i1 - c.i0, cols: c.j1 - c.j0, value: Number.isFinite(v) ? v : String(v) });
    }
    const pw = canvas.clientWidth / outC;
    const ph = canvas.clientHeight / outR;
    Object.assign(cursor.style, { left: `${b * pw}px`, top: `${a * ph}px`, width: `${Math.max(pw, 2)}px`, height: `${Math.max(ph, 2)}px` });
    cursor.hidden = false;
    const r = canvas.getBoundingClientRect();
    let x = r.left + (b + 1) * pw + 8;
    if (x + tip.offsetWidth > window.innerWidth - 4) x = r.left + b * pw - tip.offsetWidth - 8;
    let y = r.top + (a + 1) * ph + 6;
    if (y + tip.offsetHeight > window.innerHeight - 4) y = r.top + a * ph - tip.offsetHeight - 6;
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  }

  function hideTip() {
    tip.hidden = true;
  }

  /** Sets the window to rows [r0, r1) × cols [c0, c1) (clamped into the map, at least MIN_SPAN cells unless smaller). */
  function zoomTo(r0, r1, c0, c1) {
    [view.r0, view.r1] = clampWindow(rows, Math.max(Math.min(MIN_SPAN, rows), r1 - r0), (r0 + r1) / 2);
    [view.c0, view.c1] = clampWindow(cols, Math.max(Math.min(MIN_SPAN, cols), c1 - c0), (c0 + c1) / 2);
    draw();
  }
  /** Zooms by `f` (> 1 in) keeping the cell at fractions (fy, fx) of the box where it is. */
  function zoom(f, fy = 0.5, fx = 0.5) {
    const spanR = view.r1 - view.r0;
    const spanC = view.c1 - view.c0;
    const nr = Math.max(Math.min(MIN_SPAN, rows), Math.min(rows, Math.round(spanR / f)));
    const nc = Math.max(Math.min(MIN_SPAN, cols), Math.min(cols, Math.round(spanC / f)));
    const atR = view.r0 + fy * spanR;
    const atC = view.c0 + fx * spanC;
    zoomTo(Math.round(atR - fy * nr), Math.round(atR - fy * nr) + nr, Math.round(atC - fx * nc), Math.round(atC - fx * nc) + nc);
  }
  /** Moves the window by (dr, dc) cells. */
  const pan = (dr, dc) => zoomTo(view.r0 + dr, view.r1 + dr, view.c0 + dc, view.c1 + dc);

  const blockAt = (e) => {
    const r = canvas.getBoundingClientRect();
    const b = Math.floor(((e.clientX - r.left) / r.width) * outC);
    const a = Math.floor(((e.clientY - r.top) / r.height) * outR);
    return a >= 0 && a < outR && b >= 0 && b < outC ? [a, b] : null;
  };
  const frac = (e) => {
    const r = canvas.getBoundingClientRect();
    return [(e.clientY - r.top) / r.height, (e.clientX - r.left) / r.width];
  };
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    zoom(e.deltaY < 0 ? 1.25 : 0.8, ...frac(e));
  }, { passive: false });
  // drag pans; two pointers pinch-zoom
  const pointers = new Map();
  let pinch = 0;
  let moved = false;
  canvas.addEventListener('pointerdown', (e) => {
    pointers.set(e.pointerId, [e.clientX, e.clientY]);
    canvas.setPointerCapture?.(e.pointerId);
    moved = false;
    if (pointers.size === 2) pinch = spread();
  });
  const spread = () => {
    const [p, q] = [...pointers.values()];
    return Math.hypot(p[0] - q[0], p[1] - q[1]);
  };
  canvas.addEventListener('pointermove', (e) => {
    const last = pointers.get(e.pointerId);
    if (!last) {
      show(...(blockAt(e) ?? [null]));
      return;
    }
    pointers.set(e.pointerId, [e.clientX, e.clientY]);
    if (pointers.size === 2) {
      const d = spread();
      if (pinch > 0 && Math.abs(d / pinch - 1) > 0.08) {
        zoom(d / pinch, ...frac(e));
        pinch = d;
      }
      return;
    }
    const r = canvas.getBoundingClientRect();
    const dc = Math.round(((last[0] - e.clientX) / r.width) * (view.c1 - view.c0));
    const dr = Math.round(((last[1] - e.clientY) / r.height) * (view.r1 - view.r0));
    if (dr || dc) {
      moved = true;
      pan(dr, dc);
    } else pointers.set(e.pointerId, last); // under a cell: keep the start so slow drags add up
  });
  const up = (e) => {
    pointers.delete(e.pointerId);
    pinch = 0;
  };
  canvas.addEventListener('pointerup', up);
  canvas.addEventListener('pointercancel', up);
  canvas.addEventListener('mouseleave', () => { if (!pointers.size) show(null); });
  canvas.addEventListener('click', (e) => {
    const c = blockAt(e);
    if (!c || moved || !o.onCell) return;
    o.onCell(cellsOf(...c).i0, cellsOf(...c).j0);
  });
  canvas.addEventListener('focus', () => show(...(active ?? [0, 0]), true));
  canvas.addEventListener('blur', () => show(null));
  canvas.addEventListener('keydown', (e) => {
    const [a, b] = active ?? [0, 0];
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const m = moves[e.key];
    if (m && e.shiftKey) { // pan a quarter of the window
      e.preventDefault();
      pan(m[0] * Math.max(1, Math.round((view.r1 - view.r0) / 4)), m[1] * Math.max(1, Math.round((view.c1 - view.c0) / 4)));
      show(a, b, true);
    } else if (m) { // move the highlighted block; at the window's edge the window moves
      e.preventDefault();
      const na = a + m[0];
      const nb = b + m[1];
      if (na < 0 || na >= outR || nb < 0 || nb >= outC) {
        const c = cellsOf(Math.min(Math.max(na, 0), outR - 1), Math.min(Math.max(nb, 0), outC - 1));
        pan(m[0] * (c.i1 - c.i0), m[1] * (c.j1 - c.j0));
      }
      show(Math.min(Math.max(na, 0), outR - 1), Math.min(Math.max(nb, 0), outC - 1), true);
    } else if (e.key === '+' || e.key === '=' || e.key === '-' || e.key === '0') {
      e.preventDefault();
      if (e.key === '0') zoomTo(0, rows, 0, cols);
      else zoom(e.key === '-' ? 0.5 : 2, (a + 0.5) / outR, (b + 0.5) / outC);
      show(Math.min(a, outR - 1), Math.min(b, outC - 1), true);
    } else if (e.key === 'Enter' && o.onCell) o.onCell(cellsOf(a, b).i0, cellsOf(a, b).j0);
  });

  const button = (key, text, fn) => {
    const b = h('button', { type: 'button', class: 'big-zoom', text, title: t(key), 'aria-label': t(key), dataset: { zoom: key.split('.')[1] } });
    b.addEventListener('click', fn);
    return b;
  };
  const tools = h('div', { class: 'big-tools' },
    button('bigmap.in', '+', () => zoom(2)), button('bigmap.out', '−', () => zoom(0.5)),
    button('bigmap.reset', '⤢', () => zoomTo(0, rows, 0, cols)), status);
  const fig = h('figure', { class: 'hm big' });
  if (o.title) fig.append(h('figcaption', { class: 'hm-title', text: o.title }));
  fig.append(tools, plot, live);
  if (o.legend !== false) fig.append(legend(map, lo, hi, o.legendLabel));
  show(null);
  draw();
  /** Test and console hook: the window, the blocks drawn now (a copy), and setting the window. */
  fig.bigmap = {
    view: () => ({ ...view, outRows: outR, outCols: outC }),
    blocks: () => Float32Array.from(blocks),
    zoomTo,
  };
  return fig;
}
