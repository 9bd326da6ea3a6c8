// The overview (the page's model view) as SVG (layer: web/render; no DOM): every layer (grid rows) × head
// (grid columns) as a small heatmap, queries down and keys across, each thumbnail scaled to its own largest
// weight as the page does. overviewGrid builds the grid spec that gridSvg draws and gridRaster rasterises.
import { checkMatrix, checkPalette } from './common.js';
import { gridSvg } from './grid.js';

/**
 * overviewGrid({ layers: [Float32Array [H, rows, cols]] (one per layer), heads: H, rows, cols, title?,
 *                palette, legend = 'weight ÷ thumbnail max', layerIndex?: number[] (labels), cell? }) → grid spec
 */
export function overviewGrid(o) {
  const fn = 'overviewSvg';
  if (!Array.isArray(o.layers) || o.layers.length === 0) {
    throw new RangeError(`${fn}: layers (${Array.isArray(o.layers) ? 0 : typeof o.layers}) must be a non-empty array of [H, rows, cols] weights`);
  }
  if (!Number.isInteger(o.heads) || o.heads < 1) throw new RangeError(`${fn}: heads (${o.heads}) must be a positive integer`);
  o.layers.forEach((w, l) => checkMatrix(fn, `layers[${l}]`, w, o.rows, o.cols, o.heads));
  checkPalette(fn, o.palette);
  const H = o.heads;
  const size = o.rows * o.cols;
  const index = o.layerIndex ?? o.layers.map((_, l) => l);
  const panels = [];
  o.layers.forEach((w, l) => {
    for (let hd = 0; hd < H; hd++) {
      const values = w.subarray ? w.subarray(hd * size, (hd + 1) * size) : w.slice(hd * size, (hd + 1) * size);
      let mx = 0;
      for (const v of values) if (v > mx) mx = v;
      panels.push({ values, domain: [0, mx > 0 ? mx : 1], masked: null, data: { layer: index[l], head: hd } });
    }
  });
  return {
    title: o.title,
    rows: o.rows,
    cols: o.cols,
    gridRows: o.layers.length,
    gridCols: H,
    cell: o.cell ?? Math.max(1, Math.min(8, Math.floor(96 / Math.max(o.rows, o.cols)))),
    rowHeads: index.map((l) => `L${l}`),
    colHeads: Array.from({ length: H }, (_, hd) => `H${hd}`),
    palette: o.palette,
    legend: o.legend === false ? null : { label: o.legend ?? 'weight ÷ thumbnail max', lo: 0, hi: 1 },
    panels,
  };
}

/** The overview as an SVG document (string); same options as overviewGrid. */
export const overviewSvg = (o) => gridSvg(overviewGrid(o));
