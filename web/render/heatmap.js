// The heatmap view as SVG (layer: web/render; no DOM): queries down, keys across, one panel per head (or one
// aggregate map), one colour domain for every panel as the page's attention view: [0, largest weight shown].
// heatmapGrid builds the grid spec that gridSvg draws and gridRaster (PNG) rasterises.
import { checkMatrix, checkPalette, checkTokens } from './common.js';
import { gridSvg } from './grid.js';

/**
 * heatmapGrid({ tokens, keyTokens = tokens, matrix, rows, cols, title?, legend = 'weight', palette, domain?,
 *               masked?, panelTitles?, panelData?, columns = 4, cell? }) → grid spec (grid.js)
 * matrix is [P, rows, cols] row-major with P = panelTitles.length (1 without panelTitles); masked (same
 * length, 1 = blocked) cells are grey; domain defaults to [0, max(matrix)] (1 when every value is ≤ 0).
 */
export function heatmapGrid(o) {
  const fn = 'heatmapSvg';
  const P = o.panelTitles ? o.panelTitles.length : 1;
  checkMatrix(fn, 'matrix', o.matrix, o.rows, o.cols, P);
  checkPalette(fn, o.palette);
  const keyTokens = o.keyTokens ?? o.tokens;
  checkTokens(fn, 'tokens', o.tokens, o.rows);
  checkTokens(fn, 'keyTokens', keyTokens, o.cols);
  if (o.masked) checkMatrix(fn, 'masked', o.masked, o.rows, o.cols, P);
  let domain = o.domain;
  if (!domain) {
    let hi = 0;
    for (const v of o.matrix) if (v > hi) hi = v;
    domain = [0, hi > 0 ? hi : 1];
  }
  const size = o.rows * o.cols;
  const gridCols = Math.min(P, o.columns ?? 4);
  return {
    title: o.title,
    rows: o.rows,
    cols: o.cols,
    gridCols,
    gridRows: Math.ceil(P / gridCols),
    cell: o.cell ?? Math.max(3, Math.min(24, Math.round(360 / Math.max(o.rows, o.cols)))),
    rowTokens: o.tokens,
    colTokens: keyTokens,
    palette: o.palette,
    legend: o.legend === false ? null : { label: o.legend ?? 'weight', lo: domain[0], hi: domain[1] },
    panels: Array.from({ length: P }, (_, p) => ({
      values: o.matrix.subarray ? o.matrix.subarray(p * size, (p + 1) * size) : o.matrix.slice(p * size, (p + 1) * size),
      masked: o.masked ? Uint8Array.from(o.masked.slice(p * size, (p + 1) * size)) : null,
      domain,
      title: o.panelTitles?.[p],
      data: o.panelData?.[p],
    })),
  };
}

/** The heatmap as an SVG document (string); same options as heatmapGrid. */
export const heatmapSvg = (o) => gridSvg(heatmapGrid(o));
