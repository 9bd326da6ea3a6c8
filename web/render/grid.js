// Grids of heatmap panels as SVG (layer: web/render; no DOM): the heatmap view (one panel per head, or one
// aggregate) and the overview (every layer × head as a thumbnail) are both a grid of [rows, cols] panels.
// gridLayout places everything once; gridSvg (here) and gridRaster (raster.js, the PNG) draw the same cells
// from the same layout, so the PNG is the SVG's cells at a pixel scale. One <rect class="cell"> per matrix
// entry, emitted panel by panel in row-major order; the fill is the palette colour of the page's heatmap.
import {
  colorIndex, escapeXml, hexOf, legendSvg, num, rgbAt, svgOpen, textWidth, tokenLabel,
} from './common.js';

const PAD = 10;
const LEGEND_W = 160;

/**
 * spec: { title, rows, cols, gridRows, gridCols, cell,
 *         panels: [{ values [rows·cols], domain [lo, hi], masked?: Uint8Array [rows·cols], title?, data? }],
 *         rowTokens?, colTokens? (labels beside every panel), rowHeads?, colHeads? (labels of grid rows/cols),
 *         legend?: { label, lo, hi }, palette }
 * → { width, height, cell, panels: [{ x, y, bx, by }] (x, y: the first cell), legend: { x, y, w } | null }
 */
export function gridLayout(spec) {
  const { rows, cols, gridRows, gridCols, cell } = spec;
  const titleH = spec.title ? 22 : 0;
  const colHeadH = spec.colHeads ? 16 : 0;
  const rowHeadW = spec.rowHeads ? 8 + Math.max(...spec.rowHeads.map((t) => textWidth(t))) : 0;
  const panelTitleH = spec.panels.some((p) => p.title) ? 18 : 0;
  const labelW = (tokens) => Math.min(120, 8 + Math.max(0, ...tokens.map((t) => textWidth(tokenLabel(t)))));
  const rowLabelW = spec.rowTokens ? labelW(spec.rowTokens) : 0;
  const colLabelH = spec.colTokens ? labelW(spec.colTokens) : 0;
  const pw = rowLabelW + cols * cell;
  const ph = panelTitleH + colLabelH + rows * cell;
  const gapX = spec.rowTokens ? 18 : Math.max(4, Math.round(Math.max(rows, cols) / 6) * cell);
  const gapY = spec.colTokens ? 14 : gapX;
  const top = PAD + titleH + colHeadH;
  const panels = spec.panels.map((_, p) => {
    const bx = PAD + rowHeadW + (p % gridCols) * (pw + gapX);
    const by = top + Math.floor(p / gridCols) * (ph + gapY);
    return { bx, by, x: bx + rowLabelW, y: by + panelTitleH + colLabelH };
  });
  const gridW = gridCols * pw + (gridCols - 1) * gapX;
  const gridH = gridRows * ph + (gridRows - 1) * gapY;
  let width = PAD + rowHeadW + gridW + PAD;
  let height = top + gridH + PAD;
  let legend = null;
  if (spec.legend) {
    legend = { x: PAD, y: height + 4, w: LEGEND_W };
    height += 4 + 10 + PAD;
    width = Math.max(width, PAD + textWidth(spec.legend.label ?? '') + 8 + 30 + LEGEND_W + 110);
  }
  if (spec.title) width = Math.max(width, PAD * 2 + textWidth(spec.title, 13));
  return {
    width: Math.ceil(width), height: Math.ceil(height), cell, panels, legend, rowLabelW, colLabelH, panelTitleH, top,
  };
}

/** The SVG document of a grid spec (see gridLayout). */
export function gridSvg(spec) {
  const L = gridLayout(spec);
  const { rows, cols, cell, palette } = spec;
  const out = svgOpen(L.width, L.height, spec.title);
  if (spec.title) out.push(`<text class="title" x="${PAD}" y="${PAD + 13}">${escapeXml(spec.title)}</text>`);
  const c = num(cell);
  spec.panels.forEach((panel, p) => {
    const { x, y, bx, by } = L.panels[p];
    const [lo, hi] = panel.domain;
    const data = Object.entries(panel.data ?? {}).map(([k, v]) => ` data-${k}="${escapeXml(v)}"`).join('');
    out.push(`<g class="panel"${data}>`);
    if (panel.title) out.push(`<text x="${num(bx)}" y="${num(by + 12)}">${escapeXml(panel.title)}</text>`);
    if (spec.rowTokens) {
      spec.rowTokens.forEach((t, i) => {
        out.push(`<text x="${num(x - 4)}" y="${num(y + (i + 0.5) * cell + 4)}" text-anchor="end">${escapeXml(tokenLabel(t))}</text>`);
      });
    }
    if (spec.colTokens) {
      spec.colTokens.forEach((t, j) => {
        const cx = x + (j + 0.5) * cell + 4;
        out.push(`<text x="${num(cx)}" y="${num(y - 4)}" transform="rotate(-90 ${num(cx)} ${num(y - 4)})">${escapeXml(tokenLabel(t))}</text>`);
      });
    }
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const k = i * cols + j;
        const fill = hexOf(rgbAt(palette, colorIndex(panel.values[k], lo, hi, panel.masked?.[k] === 1)));
        out.push(`<rect class="cell" x="${num(x + j * cell)}" y="${num(y + i * cell)}" width="${c}" height="${c}" fill="${fill}"/>`);
      }
    }
    out.push('</g>');
  });
  if (spec.colHeads) {
    spec.colHeads.forEach((t, gc) => {
      const px = L.panels[gc]?.x;
      if (px !== undefined) out.push(`<text class="tick" x="${num(px + (cols * cell) / 2)}" y="${num(L.top - 4)}" text-anchor="middle">${escapeXml(t)}</text>`);
    });
  }
  if (spec.rowHeads) {
    spec.rowHeads.forEach((t, gr) => {
      const pl = L.panels[gr * spec.gridCols];
      if (pl) out.push(`<text class="tick" x="${PAD}" y="${num(pl.y + (rows * cell) / 2 + 4)}">${escapeXml(t)}</text>`);
    });
  }
  if (L.legend) {
    const masked = spec.panels.some((p) => p.masked?.includes(1));
    out.push(...legendSvg(palette, { ...L.legend, ...spec.legend, masked }));
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
