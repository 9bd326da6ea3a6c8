// The lines view (bertviz's head view) as SVG (layer: web/render; no DOM): query tokens left, key tokens right,
// one <line class="link"> per (head, query, key) whose weight reaches the threshold, coloured by head, with
// opacity = weight (× 0.9 when several heads overlap, as the page). linesLayout places tokens and links once;
// linesSvg draws them and linesRaster (raster.js) rasterises the same segments for PNG.
import {
  checkMatrix, checkTokens, escapeXml, num, svgOpen, textWidth, tokenLabel,
} from './common.js';

const PAD = 10;

/**
 * linesLayout({ tokens, keyTokens = tokens, weights [P, rows, cols], rows, cols, colors: P CSS colours,
 *               labels?: P names, title?, threshold = 0.004, width = 240 })
 * → { width, height, pitch, x0, x1, y(i), links: [{ p, i, j, w, opacity }], legendY (swatches; the note below) }
 */
export function linesLayout(o) {
  const fn = 'linesSvg';
  const colors = o.colors ?? [];
  const P = colors.length;
  if (P < 1) throw new RangeError(`${fn}: colors (${P}) must hold one colour per panel of weights`);
  checkMatrix(fn, 'weights', o.weights, o.rows, o.cols, P);
  const keyTokens = o.keyTokens ?? o.tokens;
  checkTokens(fn, 'tokens', o.tokens, o.rows);
  checkTokens(fn, 'keyTokens', keyTokens, o.cols);
  const threshold = o.threshold ?? 0.004;
  if (!Number.isFinite(threshold) || threshold < 0) throw new RangeError(`${fn}: threshold (${threshold}) must be a finite number ≥ 0`);
  const big = Math.max(o.rows, o.cols);
  const pitch = big <= 40 ? 20 : big <= 80 ? 15 : 12;
  const labelW = Math.min(120, 8 + Math.max(...o.tokens.map((t) => textWidth(tokenLabel(t))), ...keyTokens.map((t) => textWidth(tokenLabel(t)))));
  const top = PAD + (o.title ? 22 : 0);
  const x0 = PAD + labelW + 6;
  const x1 = x0 + (o.width ?? 240);
  const alpha = P > 1 ? 0.9 : 1;
  const links = [];
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < o.rows; i++) {
      for (let j = 0; j < o.cols; j++) {
        const w = o.weights[(p * o.rows + i) * o.cols + j];
        if (w >= threshold && w > 0) links.push({ p, i, j, w, opacity: Math.min(1, w * alpha) });
      }
    }
  }
  const legendY = top + big * pitch + 8;
  let width = x1 + 6 + labelW + PAD;
  const legendW = PAD + (o.labels ?? colors).reduce((s, t, p) => s + 20 + textWidth(o.labels?.[p] ?? `H${p}`), 0);
  width = Math.max(width, legendW, o.title ? 2 * PAD + textWidth(o.title, 13) : 0);
  return {
    width: Math.ceil(width), height: legendY + 28 + PAD, pitch, x0, x1, top, labelW, colors, threshold, keyTokens,
    y: (i) => top + (i + 0.5) * pitch, links, legendY,
  };
}

/** The lines view as an SVG document (string); same options as linesLayout. */
export function linesSvg(o) {
  const L = linesLayout(o);
  const out = svgOpen(L.width, L.height, o.title);
  if (o.title) out.push(`<text class="title" x="${PAD}" y="${PAD + 13}">${escapeXml(o.title)}</text>`);
  o.tokens.forEach((t, i) => {
    out.push(`<text class="query" x="${num(L.x0 - 6)}" y="${num(L.y(i) + 4)}" text-anchor="end">${escapeXml(tokenLabel(t))}</text>`);
  });
  L.keyTokens.forEach((t, j) => {
    out.push(`<text class="key" x="${num(L.x1 + 6)}" y="${num(L.y(j) + 4)}">${escapeXml(tokenLabel(t))}</text>`);
  });
  out.push('<g class="links" stroke-width="1.4" stroke-linecap="round">');
  for (const k of L.links) {
    out.push(`<line class="link" data-p="${k.p}" data-i="${k.i}" data-j="${k.j}" x1="${num(L.x0)}" y1="${num(L.y(k.i))}" x2="${num(L.x1)}" y2="${num(L.y(k.j))}" stroke="${escapeXml(L.colors[k.p])}" stroke-opacity="${Number(k.opacity.toFixed(4))}"/>`);
  }
  out.push('</g>');
  let x = PAD;
  out.push('<g class="legend">');
  L.colors.forEach((c, p) => {
    const label = o.labels?.[p] ?? `H${p}`;
    out.push(`<rect class="swatch" x="${num(x)}" y="${num(L.legendY)}" width="12" height="10" fill="${escapeXml(c)}"/>`);
    out.push(`<text class="tick" x="${num(x + 15)}" y="${num(L.legendY + 9)}">${escapeXml(label)}</text>`);
    x += 20 + textWidth(label);
  });
  out.push(`<text class="tick" x="${PAD}" y="${num(L.legendY + 25)}">${escapeXml(`opacity = weight · links ≥ ${L.threshold}`)}</text>`);
  out.push('</g>', '</svg>');
  return `${out.join('\n')}\n`;
}
