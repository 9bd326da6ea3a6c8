// Bipartite "lines" view (layer: web; bertviz's head view): tokens left (queries) and right (keys), one
// line per (query, key) pair and head, coloured by head, opacity = weight. Hover a token to light only
// its links. Lines are rasterised by hand into one canvas (see rasterLine); tokens are DOM text.
import { h, tokenLabel } from '../dom.js';
import { headColor } from '../colors.js';
import { textWidth } from './heatmap.js';
import { t } from '../i18n.js';

/**
 * linesView({ rowTokens, colTokens, weights [H, n, m], heads: number[], width }) → HTMLElement, whose
 * setHeads(heads) redraws the lines of other heads in place (tokens and canvas kept).
 */
// Raster buffers by canvas size, reused across views: a fresh typed array costs 4–10 ms per MB in Chromium on
// a VM (page faults), and at 512 tokens one view's buffers are 32 MB. A buffer is free once the canvas that
// held it has left the document (the view was replaced).
const pool = [];
function buffers(cw, chh, owner) {
  let b = pool.find((x) => x.cw === cw && x.chh === chh && !x.owner.isConnected);
  if (!b) {
    b = { cw, chh, rgb: new Float32Array(cw * chh * 3), img: new ImageData(cw, chh), base: new ImageData(cw, chh) };
    for (let k = pool.length - 1; k >= 0; k--) if (!pool[k].owner.isConnected) pool.splice(k, 1); // other sizes: dropped
    pool.push(b);
  }
  b.owner = owner;
  return b;
}

export function linesView(o) {
  const { rowTokens, colTokens, weights } = o;
  let heads = o.heads;
  const n = rowTokens.length;
  const m = colTokens.length;
  const pitch = Math.max(n, m) <= 40 ? 20 : Math.max(n, m) <= 80 ? 15 : 12;
  const labelW = Math.min(110, 10 + Math.max(...rowTokens.map((t) => textWidth(tokenLabel(t))), ...colTokens.map((t) => textWidth(tokenLabel(t)))));
  const W = Math.max(80, Math.min(260, (o.width ?? 400) - 2 * labelW - 8));
  const Hpx = Math.max(n, m) * pitch;
  const canvas = h('canvas', { class: 'lines-canvas', 'aria-hidden': 'true', dataset: { rows: n, cols: m, heads: heads.join(',') } });
  const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
  const cw = Math.round(W * dpr);
  const chh = Math.round(Hpx * dpr);
  canvas.width = cw;
  canvas.height = chh;
  canvas.style.width = `${W}px`;
  canvas.style.height = `${Hpx}px`;
  const ctx = canvas.getContext('2d');
  const y = (i) => (i + 0.5) * pitch * dpr;

  // Canvas strokes are rasterised on the main thread without a GPU at ~100 µs per long antialiased
  // line (3,000 lines froze a frame for 300 ms), so the lines are drawn here into one RGB buffer: each
  // is a 1.4-px antialiased span stepped along its major axis, blended over the panel colour with alpha = weight.
  // Without a hovered token only the MAX_LINES strongest links are drawn; the caption says so.
  const MAX_LINES = 800;
  const floorOf = () => {
    if (heads.length * n * m <= MAX_LINES) return 0.004;
    // the weight of the MAX_LINES-th strongest link, from a 4096-bin histogram (no sort of 131k values)
    const BINS = 4096;
    const hist = new Uint32Array(BINS);
    for (const hd of heads) {
      for (let q = hd * n * m, e = (hd + 1) * n * m; q < e; q++) {
        const w = weights[q];
        if (w > 0) hist[Math.min(BINS - 1, Math.floor(w * BINS))] += 1;
      }
    }
    let count = 0;
    let b = BINS - 1;
    for (; b > 0; b--) {
      count += hist[b];
      if (count >= MAX_LINES) break;
    }
    return Math.max(0.004, b / BINS);
  };
  let floor = null; // the weakest link drawn unfocused: computed in the first draw (floorOf, ~17 ms at 512 tokens × 12 heads)
  // the panel's colour (light or dark theme, style.css --panel) is the background the lines blend over
  const panel = (() => {
    const v = getComputedStyle(document.documentElement).getPropertyValue('--panel').trim();
    const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(v)?.[1];
    if (!hex) return [255, 255, 255];
    const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
    return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16));
  })();
  let bufs = null; // { rgb, img, base }: taken from the pool at the first draw (the view replaced by then has let go)
  const rgbOf = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  // A hovered token shows its FOCUS_LINES strongest links at most (all of them up to 40 tokens × 5 heads):
  // 512 tokens × 12 heads would be 6,144 lines, a second of rasterising on a loaded 2-core machine.
  const FOCUS_LINES = 200;
  function focusFloor(focus) {
    const ws = [];
    for (const hd of heads) {
      const base = hd * n * m;
      if (focus.side === 'left') for (let j = 0; j < m; j++) ws.push(weights[base + focus.i * m + j]);
      else for (let i = 0; i < n; i++) ws.push(weights[base + i * m + focus.i]);
    }
    if (ws.length <= FOCUS_LINES) return 0.004;
    ws.sort((a, b) => b - a);
    return Math.max(0.004, ws[FOCUS_LINES - 1]);
  }
  let base = null; // the unfocused picture (bufs.base once drawn), kept to restore when the pointer leaves a token
  // The links a picture shows: [head, query, key] triples and their weights, in head, query, key order.
  function linksOf(focus) {
    const least = focus ? focusFloor(focus) : floor;
    const at = [];
    const ws = [];
    for (const hd of heads) {
      const i0 = focus?.side === 'left' ? focus.i : 0;
      const i1 = focus?.side === 'left' ? focus.i + 1 : n;
      for (let i = i0; i < i1; i++) {
        const j0 = focus?.side === 'right' ? focus.i : 0;
        const j1 = focus?.side === 'right' ? focus.i + 1 : m;
        for (let j = j0; j < j1; j++) {
          const w = weights[hd * n * m + i * m + j];
          if (!(w >= least)) continue;
          at.push(hd, i, j);
          ws.push(w);
        }
      }
    }
    return { at, ws };
  }
  // A picture is rasterised in slices of at most SLICE_MS, so hovering, clicking or toggling a head at 512 tokens
  // never holds the main thread for long (800 lines 6,000 px tall took ~200 ms in one task); a newer picture
  // abandons an older one. The canvas gets the finished picture (data-drawn counts them).
  const SLICE_MS = 12;
  let job = 0;
  let drawn = 0;
  function draw(focus) {
    const mine = ++job;
    if (!focus && base) {
      ctx.putImageData(base, 0, 0);
      canvas.dataset.drawn = String(++drawn);
      return;
    }
    // each phase a task of its own (at 512 tokens × 12 heads: the floor's histogram over 3 M weights ~17 ms, the
    // links ~16 ms, the lines in slices of SLICE_MS, the pixels ~10 ms), so an input event's task stays short
    const alive = () => mine === job && (!bufs || bufs.owner === canvas); // else a newer picture, or the view replaced
    let at;
    let ws;
    let next = 0;
    const alpha = heads.length > 1 ? 0.9 : 1;
    const colours = new Map(heads.map((hd) => [hd, rgbOf(headColor(hd))]));
    const phases = [() => {
      if (floor == null) {
        floor = floorOf();
        title.textContent = caption();
      }
    }, () => {
      ({ at, ws } = linksOf(focus));
      bufs ??= buffers(cw, chh, canvas);
      const { rgb } = bufs;
      rgb.set(panel); // the background, doubled by memmove (a loop over 5 M floats was ~15 ms at 512 tokens)
      for (let k = 3; k < rgb.length; k *= 2) rgb.copyWithin(k, 0, Math.min(k, rgb.length - k));
    }, () => {
      const t0 = performance.now();
      for (; next < ws.length; next++) {
        if ((next & 15) === 0 && next > 0 && performance.now() - t0 > SLICE_MS) return true; // more to do
        const c = colours.get(at[3 * next]);
        rasterLine(bufs.rgb, cw, chh, 0, y(at[3 * next + 1]), cw - 1, y(at[3 * next + 2]), c[0], c[1], c[2], Math.min(1, ws[next] * alpha), 0.7 * dpr);
      }
      return false;
    }, () => {
      const { rgb, img } = bufs;
      // one opaque RGBA word per pixel (little-endian: R in the low byte), rounded to nearest
      const px32 = new Uint32Array(img.data.buffer, img.data.byteOffset, cw * chh);
      for (let q = 0, k = 0; q < px32.length; q++, k += 3) {
        px32[q] = 0xff000000 | (((rgb[k + 2] + 0.5) | 0) << 16) | (((rgb[k + 1] + 0.5) | 0) << 8) | ((rgb[k] + 0.5) | 0);
      }
      ctx.putImageData(img, 0, 0);
      if (!focus) {
        bufs.base.data.set(img.data);
        base = bufs.base;
      }
      canvas.dataset.drawn = String(++drawn);
    }];
    let p = 0;
    const go = () => {
      if (!alive()) return;
      if (phases[p]() !== true) p += 1; // a phase returning true has more to do
      if (p < phases.length) setTimeout(go, 0);
    };
    setTimeout(go, 0);
  }
  // drawn two frames later, after the page's next render step, so no frame carries both
  requestAnimationFrame(() => requestAnimationFrame(() => draw(null)));

  const side = (tokens, name) => {
    const box = h('div', { class: `lines-tokens ${name}` });
    box.style.width = `${labelW}px`;
    box.style.height = `${Hpx}px`;
    tokens.forEach((t, i) => {
      const el = h('span', { class: 'lines-token', text: tokenLabel(t), title: t, tabindex: tokens.length <= 40 ? 0 : null, 'data-no-i18n': '' });
      el.style.top = `${i * pitch}px`;
      el.style.height = `${pitch}px`;
      el.style.lineHeight = `${pitch}px`;
      el.dataset.i = i;
      box.append(el);
    });
    // one set of listeners for the whole side (four per token cost ~0.3 s to attach at 512 tokens)
    let hot = null;
    const on = (e) => {
      const el = e.target.closest?.('.lines-token');
      if (!el || el === hot) return;
      hot?.classList.remove('hot');
      hot = el;
      el.classList.add('hot');
      draw({ side: name, i: Number(el.dataset.i) });
    };
    const off = (e) => {
      if (!hot || (e.relatedTarget && hot.contains(e.relatedTarget))) return;
      hot.classList.remove('hot');
      hot = null;
      draw(null);
    };
    box.addEventListener('mouseover', on);
    box.addEventListener('mouseout', off);
    box.addEventListener('focusin', on);
    box.addEventListener('focusout', off);
    return box;
  };
  const caption = () => `${o.title ?? t('lines.title')}${floor > 0.004 ? t('lines.floor', { floor: floor.toFixed(3) }) : ''}`; // floor null: not known yet
  const title = h('figcaption', { class: 'hm-title', text: caption() });
  const fig = h('figure', { class: 'lines' }, title,
    h('div', { class: 'lines-body' }, side(rowTokens, 'left'), canvas, side(colTokens, 'right')));
  fig.setHeads = (next) => {
    heads = next;
    floor = null; // computed in the redraw's first task
    base = null;
    canvas.dataset.heads = heads.join(',');
    title.textContent = caption();
    draw(null);
  };
  return fig;
}

/**
 * Blends one antialiased line into rgb (Float32Array [h, w, 3], 0…255) with alpha a: one step per
 * pixel along the major axis, and on the minor axis a span of ±half pixels with fractional edges.
 * Module level, so V8 keeps its optimised code from one render to the next.
 */
function rasterLine(rgb, w, h, x0, y0, x1, y1, cr, cg, cb, a, half0) {
  const dx = x1 - x0;
  const dy = y1 - y0;
  const steep = Math.abs(dy) > Math.abs(dx);
  let ma = steep ? y0 : x0;
  let mb = steep ? y1 : x1;
  let na = steep ? x0 : y0;
  let nb = steep ? x1 : y1;
  if (ma > mb) {
    let t = ma; ma = mb; mb = t;
    t = na; na = nb; nb = t;
  }
  const slope = mb > ma ? (nb - na) / (mb - ma) : 0;
  const half = half0 * (Math.sqrt(dx * dx + dy * dy) / Math.max(mb - ma, 1e-9));
  const majorStride = steep ? 3 * w : 3;
  const minorStride = steep ? 3 : 3 * w;
  const majorLimit = steep ? h : w;
  const minorLimit = steep ? w : h;
  const M0 = Math.max(0, Math.round(ma));
  const M1 = Math.min(majorLimit - 1, Math.round(mb));
  for (let M = M0; M <= M1; M++) {
    const mid = na + (M - ma) * slope;
    const lo = mid - half;
    const hi = mid + half;
    const p0 = Math.max(0, Math.floor(lo));
    const p1 = Math.min(minorLimit - 1, Math.floor(hi));
    for (let p = p0; p <= p1; p++) {
      const cov = (p + 1 < hi ? p + 1 : hi) - (p > lo ? p : lo);
      if (cov <= 0) continue;
      const al = cov < 1 ? a * cov : a;
      const k = M * majorStride + p * minorStride;
      rgb[k] += (cr - rgb[k]) * al;
      rgb[k + 1] += (cg - rgb[k + 1]) * al;
      rgb[k + 2] += (cb - rgb[k + 2]) * al;
    }
  }
}

/**
 * Head chips in the heads' colours: click toggles a head, double-click solos it (bertviz). The chips
 * update in place (a re-render between the two clicks would lose the double-click).
 */
export function headChips({ numHeads, selected, onChange }) {
  let current = [...selected];
  const box = h('div', { class: 'head-chips', role: 'group', 'aria-label': t('lines.heads') });
  const chips = [];
  const set = (next) => {
    current = next;
    chips.forEach((c, hd) => {
      const on = current.includes(hd);
      c.classList.toggle('on', on);
      c.setAttribute('aria-pressed', String(on));
    });
    onChange(current);
  };
  for (let hd = 0; hd < numHeads; hd++) {
    const chip = h('button', {
      type: 'button', class: 'head-chip', title: t('lines.chipTitle'), 'aria-label': t('lines.chipLabel', { h: hd + 1 }), dataset: { head: hd },
    }, h('span', { class: 'swatch' }), `H${hd + 1}`);
    chip.querySelector('.swatch').style.background = headColor(hd);
    chip.addEventListener('click', () => {
      const next = current.includes(hd) ? current.filter((x) => x !== hd) : [...current, hd].sort((a, b) => a - b);
      if (next.length) set(next);
    });
    chip.addEventListener('dblclick', () => set([hd]));
    chips.push(chip);
    box.append(chip);
  }
  chips.forEach((c, hd) => {
    c.classList.toggle('on', current.includes(hd));
    c.setAttribute('aria-pressed', String(current.includes(hd)));
  });
  return box;
}
