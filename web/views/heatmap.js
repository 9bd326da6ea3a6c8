// Canvas heatmap (layer: web; tensorflow/playground's heatmap.ts): one canvas pixel per cell, scaled by
// CSS with image-rendering: pixelated; row/column labels and the tooltip live in DOM overlays, so
// labels stay crisp and are thinned or rotated instead of overlapping. The exact value of a cell shows
// on hover and, from the keyboard, on focus (arrow keys, Home/End move the cell; a live region announces
// its row, column and value); a visually hidden table holds the values for screen readers. Data in,
// element out.
import { h, fmt, tokenLabel, whenIdle } from '../dom.js';
import { MASKED, domainOf } from '../colors.js';
import { t } from '../i18n.js';
import { isCjk } from '../aggregates.js';

const LABEL_FONT = 11; // px
const MIN_LABEL_PITCH = 13; // px between two shown labels

/** A label's width in px at LABEL_FONT: CJK characters are full-width (about one em), the rest ~0.62 em. */
export const textWidth = (label) => {
  let w = 0;
  for (const c of label) w += isCjk(c) ? LABEL_FONT + 1 : 7;
  return w;
};

/**
 * heatmap({ values, rows, cols, map, domain?, kind, rowLabels?, colLabels?, rowName, colName, title?,
 *           width, cellMax?, dataset?, onCell?, selectedRow?, legend?, blockedBy?, blockedCell? }) → HTMLElement
 * values is [rows, cols] row-major; −Infinity cells are drawn as masked.
 */
export function heatmap(o) {
  const { values, rows, cols, map } = o;
  if (values.length !== rows * cols) throw new Error(`heatmap: ${values.length} values for ${rows}×${cols} cells`);
  const [lo, hi] = o.domain ?? domainOf(values, o.kind);
  const rowLabels = (o.rowLabels ?? []).map((t) => tokenLabel(t));
  const colLabels = (o.colLabels ?? []).map((t) => tokenLabel(t));

  // ---- geometry: square cells, as large as fits, labels thinned when cells are small
  const longestRow = Math.max(0, ...rowLabels.map(textWidth));
  const longestCol = Math.max(0, ...colLabels.map(textWidth));
  const rowLabelW = rowLabels.length ? Math.min(110, longestRow + 10) : 0;
  const avail = Math.max(40, (o.width ?? 320) - rowLabelW - 4);
  // square cells unless o.square === false (long thin tables such as PE [positions, dims])
  let cellW = Math.max(0.5, Math.min(o.cellMax ?? 28, avail / cols));
  let cellH = Math.max(0.5, Math.min(o.cellMax ?? 28, (o.heightMax ?? 1e9) / rows));
  if (o.square !== false) cellW = cellH = Math.min(cellW, cellH);
  const cw = cellW * cols;
  const ch = cellH * rows;
  const colTextW = longestCol + 4;
  const rotate = colLabels.length > 0 && colTextW > cellW;
  // CJK labels are never rotated: too long to sit flat, they stand upright, one character below the
  // other, so the columns they need are one character (an em) wide
  const cjk = colLabels.some((t) => Array.from(t).some(isCjk));
  const vertical = rotate && cjk;
  const longestColChars = Math.max(0, ...colLabels.map((t) => Array.from(t).length));
  const colLabelH = !colLabels.length ? 0 : vertical ? Math.min(96, Math.ceil(longestColChars * LABEL_FONT * 1.1) + 6) : rotate ? Math.min(90, colTextW * 0.87 + 8) : 18;
  // labels are thinned whole (every k-th is shown), never cut: a shown label gets its full pitch
  const rowStep = Math.max(1, Math.ceil(MIN_LABEL_PITCH / cellH));
  const colStep = Math.max(1, Math.ceil((vertical ? LABEL_FONT + 2 : MIN_LABEL_PITCH) / cellW));

  // ---- the canvas: one pixel per cell
  const canvas = h('canvas', {
    class: 'hm-canvas',
    tabindex: 0,
    role: 'img',
    'aria-label': t('heatmap.aria', { title: o.title ?? t('heatmap.name'), rows, cols }),
    dataset: { rows, cols, kind: o.kind ?? 'values', lo, hi, ...(o.dataset ?? {}) },
  });
  canvas.width = cols;
  canvas.height = rows;
  canvas.style.width = `${cw}px`;
  canvas.style.height = `${ch}px`;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(cols, rows);
  const px = new Uint32Array(img.data.buffer); // one RGBA word per cell (12 maps of 512 × 512 per head toggle)
  const lut = packedLut(map.rgb);
  const grey = packedLut(MASKED)[0];
  const scale = hi > lo ? 255 / (hi - lo) : 0;
  // blocked cells (masked scores, or blockedCell(i, j) such as a causal mask's j > i) are drawn grey,
  // unlike computed weights near 0 (the colour map's dark end)
  const blocked = o.blockedBy ? (k) => o.blockedBy[k] === -Infinity
    : o.blockedCell ? (k) => o.blockedCell(Math.floor(k / cols), k % cols) : () => false;
  const anyBlocked = Boolean(o.blockedBy || o.blockedCell);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (Number.isFinite(v) && !(anyBlocked && blocked(i))) {
      const t = Math.round((v - lo) * scale);
      px[i] = lut[t < 0 ? 0 : t > 255 ? 255 : t];
    } else px[i] = grey;
  }
  ctx.putImageData(img, 0, 0);
  if (rows * cols <= 1024) canvas.dataset.values = JSON.stringify(Array.from(values, (v) => (Number.isFinite(v) ? v : null)));

  // ---- overlays: labels, selection, tooltip
  const rowBox = h('div', { class: 'hm-rows', 'aria-hidden': 'true', 'data-no-i18n': '' });
  rowBox.style.width = `${rowLabelW}px`;
  rowBox.style.height = `${ch}px`;
  const rowEls = [];
  const rowLabel = (i) => {
    const el = h('span', { class: 'hm-label', text: rowLabels[i], title: o.rowLabels[i] });
    el.style.top = `${(i + 0.5) * cellH}px`;
    if (o.onCell) el.addEventListener('click', () => o.onCell(i, null));
    rowEls[i] = el;
    rowBox.append(el);
    return el;
  };
  rowLabels.forEach((t, i) => {
    if (i % rowStep !== 0 && i !== o.selectedRow) return;
    rowLabel(i).classList.toggle('selected', i === o.selectedRow);
  });
  const colBox = h('div', { class: `hm-cols${vertical ? ' vertical' : rotate ? ' rotated' : ''}`, 'aria-hidden': 'true', 'data-no-i18n': '' });
  colBox.style.width = `${cw}px`;
  colBox.style.height = `${colLabelH}px`;
  const colEls = [];
  colLabels.forEach((t, j) => {
    if (j % colStep !== 0) return;
    // upright: one character per line (writing-mode: vertical-rl misplaces CJK glyphs of fonts without
    // vertical metrics, such as WenQuanYi, which is all some Linux machines have)
    const el = h('span', { class: 'hm-label', text: vertical ? Array.from(t).join('\n') : t, title: o.colLabels[j] });
    el.style.left = `${(j + 0.5) * cellW}px`;
    colEls[j] = el;
    colBox.append(el);
  });

  const tip = h('div', { class: 'hm-tip', 'aria-hidden': 'true' });
  const live = h('div', { class: 'sr-only hm-live', 'aria-live': 'polite', 'aria-atomic': 'true' });
  const cursor = h('div', { class: 'hm-cursor' });
  const rowMark = h('div', { class: 'hm-rowmark' });
  const plot = h('div', { class: 'hm-plot' }, canvas, rowMark, cursor, tip);
  plot.style.width = `${cw}px`;
  plot.style.height = `${ch}px`;
  if (o.selectedRow != null && o.selectedRow < rows) {
    rowMark.style.top = `${o.selectedRow * cellH}px`;
    rowMark.style.height = `${cellH}px`;
    rowMark.hidden = false;
  } else rowMark.hidden = true;

  let active = null;
  function show(i, j, announce = false) {
    if (active) {
      rowEls[active[0]]?.classList.remove('hot');
      colEls[active[1]]?.classList.remove('hot');
    }
    if (i == null) {
      active = null;
      tip.hidden = true;
      cursor.hidden = true;
      return;
    }
    active = [i, j];
    rowEls[i]?.classList.add('hot');
    colEls[j]?.classList.add('hot');
    const v = values[i * cols + j];
    tip.textContent = cellText(o, i, j, v, blocked(i * cols + j));
    tip.hidden = false;
    if (announce) {
      live.textContent = tip.textContent;
      Object.assign(live.dataset, { row: i, col: j, value: Number.isFinite(v) ? v : String(v) });
    }
    cursor.hidden = false;
    cursor.style.left = `${j * cellW}px`;
    cursor.style.top = `${i * cellH}px`;
    cursor.style.width = `${Math.max(cellW, 2)}px`;
    cursor.style.height = `${Math.max(cellH, 2)}px`;
    // the tooltip is position: fixed, so scroll boxes around the plot cannot clip it; it sits beside the cell
    // on the side with room and stays inside the window. Inside a step of the step-by-step view (style.css .step:
    // content-visibility, whose layout containment makes the step the tooltip's containing block) the viewport
    // position is corrected by the step's offset; it landed hundreds of pixels from the cell.
    const r = canvas.getBoundingClientRect();
    const tw = tip.offsetWidth;
    const th = tip.offsetHeight;
    let x = r.left + (j + 1) * cellW + 8;
    if (x + tw > window.innerWidth - 4) x = r.left + j * cellW - tw - 8;
    let y = r.top + (i + 1) * cellH + 6;
    if (y + th > window.innerHeight - 4) y = r.top + i * cellH - th - 6;
    x = Math.max(4, x);
    y = Math.max(4, y);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
    const at = tip.getBoundingClientRect();
    if (Math.abs(at.left - x) > 0.5 || Math.abs(at.top - y) > 0.5) {
      tip.style.left = `${2 * x - at.left}px`;
      tip.style.top = `${2 * y - at.top}px`;
    }
  }
  show(null);
  const cellAt = (e) => {
    const r = canvas.getBoundingClientRect();
    const j = Math.floor(((e.clientX - r.left) / r.width) * cols);
    const i = Math.floor(((e.clientY - r.top) / r.height) * rows);
    return i >= 0 && i < rows && j >= 0 && j < cols ? [i, j] : null;
  };
  canvas.addEventListener('mousemove', (e) => {
    const c = cellAt(e);
    show(...(c ?? [null]));
  });
  canvas.addEventListener('mouseleave', () => show(null));
  canvas.addEventListener('click', (e) => {
    const c = cellAt(e);
    if (c && o.onCell) o.onCell(c[0], c[1]);
  });
  let table = null; // the values for screen readers: built when the page is next idle if small, else on first focus
  const addTable = () => {
    if (table || rows * cols > 4096) return;
    table = valueTable(o, values, rows, cols, blocked);
    fig.append(table);
  };
  canvas.addEventListener('focus', () => {
    addTable();
    show(...(active ?? [o.selectedRow ?? 0, 0]), true);
  });
  canvas.addEventListener('blur', () => show(null));
  canvas.addEventListener('keydown', (e) => {
    const [i, j] = active ?? [0, 0];
    const moves = {
      ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -cols], End: [0, cols],
    };
    if (moves[e.key]) {
      e.preventDefault();
      show(Math.min(rows - 1, Math.max(0, i + moves[e.key][0])), Math.min(cols - 1, Math.max(0, j + moves[e.key][1])), true);
    } else if (e.key === 'Enter' && o.onCell) o.onCell(i, j);
  });

  const grid = h('div', { class: 'hm-grid' }, h('div'), colBox, rowBox, plot, live);
  // rotated labels lean right: leave room for the last ones
  const lean = rotate && !vertical ? Math.min(60, Math.ceil(colTextW * 0.5)) : 0;
  colBox.style.width = `${cw + lean}px`;
  grid.style.gridTemplateColumns = `${rowLabelW}px ${cw + lean}px`;
  const fig = h('figure', { class: 'hm' });
  if (o.title) fig.append(h('figcaption', { class: 'hm-title' }, o.title));
  fig.append(grid);
  if (o.legend !== false) fig.append(legend(map, lo, hi, o.legendLabel));
  // (not in the drawing task: a new trace's maps are drawn before the next frame, and on a cold load these tables
  // were a quarter of the attention view's first draw)
  if (rows * cols <= 256) whenIdle(addTable, 1000);
  /** Moves the selected-row mark and label to row i without redrawing the map (a click on a token). */
  let selected = o.selectedRow;
  fig.selectRow = (i) => {
    if (i === selected) return;
    rowEls[selected]?.classList.remove('selected');
    if (selected != null && selected % rowStep !== 0 && rowEls[selected]) {
      rowEls[selected].remove(); // a thinned label shown only while selected
      rowEls[selected] = undefined;
    }
    selected = i;
    if (i == null || i >= rows) {
      rowMark.hidden = true;
      return;
    }
    rowMark.style.top = `${i * cellH}px`;
    rowMark.style.height = `${cellH}px`;
    rowMark.hidden = false;
    if (rowLabels.length) (rowEls[i] ?? rowLabel(i)).classList.add('selected');
  };
  return fig;
}

/** The tooltip's and the live region's text for cell (i, j): row and column with their tokens, and the value. */
export function cellText(o, i, j, v, isBlocked) {
  const rowToken = o.rowLabels?.[i] !== undefined ? ` “${tokenLabel(o.rowLabels[i], 24)}”` : '';
  const colToken = o.colLabels?.[j] !== undefined ? ` “${tokenLabel(o.colLabels[j], 24)}”` : '';
  const value = Number.isNaN(v) ? t('heatmap.padding') : `${fmt(v, o.digits ?? 4)}${isBlocked || v === -Infinity ? t('heatmap.masked') : ''}`;
  return t('heatmap.cell', {
    row: o.rowName ?? t('heatmap.row'), i, rowToken, col: o.colName ?? t('heatmap.col'), j, colToken, value,
  });
}

/** A visually hidden table of a heatmap's values (caption, column and row headers) for screen readers. */
function valueTable(o, values, rows, cols, blocked) {
  const name = (labels, axis, k) => (labels?.[k] !== undefined ? tokenLabel(labels[k], 24) : `${axis} ${k}`);
  const rowName = o.rowName ?? t('heatmap.row');
  const colName = o.colName ?? t('heatmap.col');
  const tbl = h('table', { class: 'hm-table' },
    h('caption', { text: t('heatmap.table', { title: o.title ?? t('heatmap.name'), rows, cols }) }));
  tbl.append(h('thead', {}, h('tr', {}, h('td'),
    Array.from({ length: cols }, (_, j) => h('th', { scope: 'col', text: name(o.colLabels, colName, j) })))));
  const tb = h('tbody');
  for (let i = 0; i < rows; i++) {
    const tr = h('tr', {}, h('th', { scope: 'row', text: name(o.rowLabels, rowName, i) }));
    for (let j = 0; j < cols; j++) {
      const v = values[i * cols + j];
      tr.append(h('td', { text: Number.isNaN(v) ? '—' : `${fmt(v, o.digits ?? 4)}${blocked(i * cols + j) || v === -Infinity ? t('heatmap.masked') : ''}` }));
    }
    tb.append(tr);
  }
  tbl.append(tb);
  return h('div', { class: 'sr-only' }, tbl); // a div: a table ignores the 1-px box
}

/**
 * A colour table (rgb: 3 bytes per entry, 256 entries for a colour map, 1 for a single colour) as RGBA words
 * in the platform's byte order, for a Uint32Array over ImageData; made once per table.
 */
const packedLuts = new WeakMap();
export function packedLut(rgb) {
  let lut = packedLuts.get(rgb);
  if (!lut) {
    const count = Math.floor(rgb.length / 3);
    lut = new Uint32Array(count);
    const bytes = new Uint8Array(lut.buffer);
    for (let i = 0; i < count; i++) bytes.set([rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2], 255], i * 4);
    packedLuts.set(rgb, lut);
  }
  return lut;
}

/** A colour bar with its domain's ends and middle. */
export function legend(map, lo, hi, label) {
  const bar = h('canvas', { class: 'legend-bar', 'aria-hidden': 'true' });
  bar.width = 256;
  bar.height = 1;
  const ctx = bar.getContext('2d');
  const img = ctx.createImageData(256, 1);
  for (let i = 0; i < 256; i++) {
    img.data.set([map.rgb[i * 3], map.rgb[i * 3 + 1], map.rgb[i * 3 + 2], 255], i * 4);
  }
  ctx.putImageData(img, 0, 0);
  return h('div', { class: 'legend' },
    label ? h('span', { class: 'legend-label', text: label }) : null,
    h('span', { text: fmt(lo, 2) }), bar, h('span', { text: fmt(hi, 2) }),
    h('span', { class: 'legend-masked', text: t('heatmap.legendMasked') }));
}
