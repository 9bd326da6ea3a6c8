// Exports (layer: web; issue 14): the attention view (its heatmap or lines) or the model view as SVG, PNG (2×),
// CSV or JSON — the figure web/render/figure.js builds from the trace: the shown layer, the selected heads or the
// aggregate, the same colour domain and masked cells, and the attention view's threshold / top-k filter applied
// as on screen (web/aggregates.js filterLinks; the model view shows every weight) — and the whole trace as JSON.
import { h } from './dom.js';
import { selectedHeads } from './state.js';
import { filterLinks } from './aggregates.js';
import { shownLayer, toPlain } from './viewmodel.js';
import * as colors from './colors.js';
import {
  figureOf, figureSvg, figureRaster, toCsv, toJson, gridRaster,
} from './render/index.js';
import { gridSvg } from './render/grid.js';
import { stream } from './attnfile-client.js';

/** Downloads `blob` as `name` (also the inside panel's exports). */
export function download(blob, name, keepMs) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), keepMs);
}

/** Downloads a heatmap grid spec (web/render/heatmap.js heatmapGrid) as `file`: 'svg', or 'png' at 2×. */
export function downloadGrid(spec, file, format) {
  if (format === 'svg') {
    download(new Blob([gridSvg(spec)], { type: 'image/svg+xml' }), file, 1000);
    return;
  }
  const img = gridRaster(spec, 2);
  const c = h('canvas', { width: img.width, height: img.height });
  c.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(img.data.buffer, img.data.byteOffset, img.data.byteLength), img.width, img.height), 0, 0);
  c.toBlob((b) => download(b, file, 1000), 'image/png');
}

/** Downloads `value` (typed arrays as plain arrays) as pretty JSON, or `text` as CSV: the panels' data exports. */
export function downloadData(format, file, value) {
  if (format === 'csv') {
    download(new Blob([value], { type: 'text/csv' }), file, 1000);
    return;
  }
  const plain = JSON.parse(JSON.stringify(value, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v)));
  download(new Blob([JSON.stringify(plain, null, 1)], { type: 'application/json' }), file, 1000);
}

/** `view` ('heatmap' | 'lines' | 'overview') of `trace` in `format`; `attention`: 'self' | 'cross' | 'encoder'. */
export function exportView(trace, traceState, state, view, format, attention = 'self') {
  if (!trace?.layers?.length) return;
  if (attention !== 'self' && !trace.source) return;
  if (view === 'overview' && trace.file && !trace.file.whole) {
    exportStreamedOverview(trace, format, attention);
    return;
  }
  // a big attention file holds one layer; a file's layers may differ in head count: no grid of every layer then
  if (view === 'overview' && trace.layers.some((ly) => ly.attention.weights?.length !== trace.layers[0].attention.weights?.length)) return;
  const n = trace.n;
  const layer = shownLayer(trace, state.layer);
  if (!trace.layers[layer].attention.weights) return; // a big attention file: that layer is being read
  const H = trace.layers[layer].attention.weights.length / (n * n);
  const head = state.agg === 'heads' ? selectedHeads(state, H) : state.agg;
  const f = figureOf(trace, {
    view, attention, layer, head: view === 'overview' ? undefined : head, model: traceState?.model, text: trace.texts,
  });
  if (view !== 'overview' && (state.thr > 0 || state.topk > 0)) {
    for (const p of f.panels) p.values = filterLinks(p.values, f.rows, f.cols, { threshold: state.thr, topK: state.topk }).values;
  }
  exportFigure(f, format, `attnscope-${view}${attention === 'self' ? '' : `-${attention}`}${view === 'overview' ? '' : `-layer${layer}`}.${format}`);
}

/** "t3…t10": the tokens of block `b` (tokens [b·s, (b+1)·s)) of a pooled map. */
const blockLabel = (tokens, b, s) => (s === 1 ? tokens[b] : `${tokens[b * s]}…${tokens[Math.min(tokens.length, (b + 1) * s) - 1]}`);

/**
 * The every-layer × head export of an attention file too big to hold: not its weights (4 GiB as F32 is not a CSV or
 * JSON a tab can write) but the model view it streams (web/attnfile-stream.js, read head by head when not yet read):
 * each head's block-max thumbnail, rows and columns labelled by the token blocks they pool, in any format.
 */
function exportStreamedOverview(trace, format, attention) {
  if (attention === 'encoder') return;
  stream(trace.file, { op: 'model' }).then((v) => {
    const sec = v.sections.find((x) => x.key === attention);
    if (!sec) return;
    const s = v.stride;
    const rows = Array.from({ length: sec.tn }, (_, b) => blockLabel(trace.tokens, b, s));
    const cols = attention === 'cross' ? Array.from({ length: sec.tm }, (_, b) => blockLabel(trace.source.tokens, b, s)) : rows;
    const pooled = {
      tokens: rows, n: sec.tn,
      layers: sec.thumbs.map((w) => (attention === 'cross' ? { attention: { weights: new Float32Array(sec.H * sec.tn * sec.tn) }, cross: { weights: w } } : { attention: { weights: w } })),
      source: attention === 'cross' ? { tokens: cols, n: sec.tm } : undefined,
    };
    const model = `${trace.file.name}${s > 1 ? ` (block max ${s}×${s})` : ''}`;
    const f = figureOf(pooled, { view: 'overview', attention, model });
    exportFigure(f, format, `attnscope-overview${attention === 'self' ? '' : `-${attention}`}.${format}`);
  }, () => {}); // a refused head or a cancel: the model view says why
}

/**
 * Downloads figure `f` (web/render/data.js) as `name` in `format`; `render.svg(f)` draws it when the renderer's own
 * SVG is not the drawing (the translation view's alignment): its PNG is then that SVG at 2×, without a raster twin.
 */
export function exportFigure(f, format, name, render = {}) {
  const style = { palette: colors.weights, headColors: colors.heads };
  const svgOf = render.svg ?? ((x) => figureSvg(x, style));
  const save = (blob) => download(blob, name, 10_000);
  if (format === 'png') {
    // the SVG drawn by the browser at 2×, so the PNG has the tokens, title and legend text as well; should the
    // image not load, the renderer's own raster (cells, colour bar and links, no text; the CLI's PNG)
    const svgUrl = URL.createObjectURL(new Blob([svgOf(f)], { type: 'image/svg+xml' }));
    const img = new Image();
    const draw = (w, h0, paint) => {
      const canvas = h('canvas');
      canvas.width = w;
      canvas.height = h0;
      paint(canvas.getContext('2d'));
      canvas.toBlob(save, 'image/png');
      URL.revokeObjectURL(svgUrl);
    };
    img.addEventListener('load', () => draw(2 * img.naturalWidth, 2 * img.naturalHeight, (ctx) => ctx.drawImage(img, 0, 0, 2 * img.naturalWidth, 2 * img.naturalHeight)));
    img.addEventListener('error', () => {
      if (render.svg) return; // no raster twin of a custom drawing
      const r = figureRaster(f, style, 2);
      draw(r.width, r.height, (ctx) => ctx.putImageData(new ImageData(r.data, r.width, r.height), 0, 0));
    });
    img.src = svgUrl;
  } else {
    const text = format === 'svg' ? svgOf(f) : format === 'csv' ? toCsv(f) : toJson(f);
    save(new Blob([text], { type: { svg: 'image/svg+xml', csv: 'text/csv', json: 'application/json' }[format] }));
  }
}

/** The whole trace and the state it was computed for, as attnscope-trace.json. */
export function exportTrace(trace, traceState) {
  if (!trace) return;
  const blob = new Blob([JSON.stringify({ state: traceState, trace: toPlain(trace) }, null, 1)], { type: 'application/json' });
  download(blob, 'attnscope-trace.json', 1000);
}
