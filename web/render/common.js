// Shared pieces of the DOM-free renderers (layer: web/render; imported by the page and by bin/attnscope.mjs):
// colour tables, the value → colour quantisation the page's canvas heatmap uses (web/views/heatmap.js), XML
// escaping, label sizes and argument checks. No DOM, no Node built-ins: runs in browsers and in Node alike.
import { tokenLabel } from '../dom.js';

export { tokenLabel };

/** Colour of masked (blocked, −∞) cells: the page's colors.MASKED. */
export const MASKED = [214, 214, 214];

/**
 * A 256-entry colour table { interp, rgb: Uint8ClampedArray(768) } from a d3 interpolator (t ∈ [0, 1] → CSS
 * colour), the shape web/colors.js builds; the page passes its colors.weights, the CLI builds one from npm's
 * d3-scale-chromatic.
 */
export function paletteFrom(interp) {
  const rgb = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) rgb.set(parseColor(interp(i / 255)), i * 3);
  return { interp, rgb };
}

/** '#rrggbb' or 'rgb(r, g, b)' → [r, g, b]. */
export function parseColor(c) {
  if (c.startsWith('#')) return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  const m = c.match(/[\d.]+/g);
  return [Number(m[0]), Number(m[1]), Number(m[2])];
}

/**
 * Palette index of v in [lo, hi], exactly as the page's heatmap: round((v − lo)·255/(hi − lo)) clamped to
 * 0…255; −1 for a masked or non-finite cell.
 */
export function colorIndex(v, lo, hi, masked = false) {
  if (masked || !Number.isFinite(v)) return -1;
  const scale = hi > lo ? 255 / (hi - lo) : 0;
  const t = Math.round((v - lo) * scale);
  return t < 0 ? 0 : t > 255 ? 255 : t;
}

/** [r, g, b] of a palette index (−1: masked grey). */
export function rgbAt(palette, idx) {
  if (idx < 0) return MASKED;
  return [palette.rgb[idx * 3], palette.rgb[idx * 3 + 1], palette.rgb[idx * 3 + 2]];
}

const hex2 = (x) => x.toString(16).padStart(2, '0');
/** '#rrggbb' of [r, g, b]. */
export const hexOf = ([r, g, b]) => `#${hex2(r)}${hex2(g)}${hex2(b)}`;

/** Text for XML content and attribute values (& < > " '), with characters XML 1.0 forbids dropped. */
export function escapeXml(s) {
  return String(s)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** Approximate width in px of a label at `size` px (CJK and other wide characters count double). */
export function textWidth(s, size = 11) {
  let w = 0;
  for (const ch of s) w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\u{1f000}-\u{1faff}]/u.test(ch) ? 1 : 0.62;
  return Math.ceil(w * size);
}

/** A number for SVG coordinates: at most 2 decimals, no trailing zeros. */
export const num = (v) => String(Math.round(v * 100) / 100);

/** A value for a label: 3 significant decimals, '−' for negatives. */
export function fmt(v, digits = 3) {
  if (v === -Infinity) return '−∞';
  const t = v.toFixed(digits);
  return t.startsWith('-') ? `−${t.slice(1)}` : t;
}

/** Checks a [P, rows, cols] matrix argument; throws a RangeError naming fn and the argument. */
export function checkMatrix(fn, name, values, rows, cols, panels = 1) {
  for (const [k, v] of [['rows', rows], ['cols', cols]]) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`${fn}: ${k} (${v}) must be a positive integer`);
  }
  const isArray = Array.isArray(values) || (ArrayBuffer.isView(values) && !(values instanceof DataView));
  if (!isArray || values.length !== panels * rows * cols) {
    throw new RangeError(`${fn}: ${name} length (${isArray ? values.length : typeof values}) must be ${panels > 1 ? `panels·` : ''}rows·cols (${panels * rows * cols})`);
  }
}

/** Checks a palette argument ({ rgb } with 256 colours). */
export function checkPalette(fn, palette) {
  if (!palette || !palette.rgb || palette.rgb.length !== 768) {
    throw new TypeError(`${fn}: palette must be a colour table { rgb: 256×3 bytes } (web/colors.js weights, or paletteFrom(interpolator))`);
  }
}

/** Checks a token list against a size. */
export function checkTokens(fn, name, tokens, size) {
  if (!Array.isArray(tokens) || tokens.length !== size) {
    throw new RangeError(`${fn}: ${name} length (${Array.isArray(tokens) ? tokens.length : typeof tokens}) must be ${size}`);
  }
}

/** The SVG document head shared by every view: size, font and a white background. */
export function svgOpen(width, height, title) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(width)}" height="${num(height)}" viewBox="0 0 ${num(width)} ${num(height)}" font-family="DejaVu Sans, Noto Sans CJK SC, Arial, sans-serif" font-size="11">`,
    title ? `<title>${escapeXml(title)}</title>` : '',
    '<style>text{fill:#222}.title{font-size:13px;font-weight:bold}.tick{font-size:10px}</style>',
    `<rect class="background" x="0" y="0" width="${num(width)}" height="${num(height)}" fill="#ffffff"/>`,
  ].filter(Boolean);
}

/**
 * A horizontal colour legend at (x, y) of width w: a gradient of the palette (17 stops), lo and hi printed at
 * its ends, `label` before it, and a masked swatch when `masked`. Returns SVG lines.
 */
export function legendSvg(palette, { x, y, w, lo, hi, label, masked, id = 'legend' }) {
  const stops = [];
  for (let s = 0; s <= 16; s++) {
    const idx = Math.round((s / 16) * 255);
    stops.push(`<stop offset="${num(s / 16)}" stop-color="${hexOf(rgbAt(palette, idx))}"/>`);
  }
  const out = [
    `<g class="legend">`,
    `<defs><linearGradient id="${id}" x1="0" x2="1" y1="0" y2="0">${stops.join('')}</linearGradient></defs>`,
    label ? `<text x="${num(x)}" y="${num(y + 9)}">${escapeXml(label)}</text>` : '',
  ];
  const bx = x + (label ? textWidth(label) + 8 : 0);
  out.push(`<text class="tick" x="${num(bx)}" y="${num(y + 9)}" text-anchor="start">${escapeXml(fmt(lo, 2))}</text>`);
  const gx = bx + 30;
  out.push(`<rect class="legend-bar" x="${num(gx)}" y="${num(y)}" width="${num(w)}" height="10" fill="url(#${id})" stroke="#999" stroke-width="0.5"/>`);
  out.push(`<text class="tick" x="${num(gx + w + 4)}" y="${num(y + 9)}">${escapeXml(fmt(hi, 2))}</text>`);
  if (masked) {
    const mx = gx + w + 40;
    out.push(`<rect class="legend-masked" x="${num(mx)}" y="${num(y)}" width="10" height="10" fill="${hexOf(MASKED)}"/>`);
    out.push(`<text class="tick" x="${num(mx + 14)}" y="${num(y + 9)}">masked</text>`);
  }
  out.push('</g>');
  return out.filter(Boolean);
}

/** Where legendSvg draws its bar (for the raster twin): { gx, w }. */
export function legendBar({ x, w, label }) {
  const bx = x + (label ? textWidth(label) + 8 : 0);
  return { gx: bx + 30, w };
}
