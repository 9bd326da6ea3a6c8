// From a model trace to what a view shows (layer: web/render; no DOM): figureOf picks the matrices of the
// heatmap, lines or overview view — one head, every head, or an aggregate from ../aggregates.js — with their
// tokens, ids, colour domain and masked cells, as the page's attention and model views do; figureSvg and
// figureRaster draw that figure, toCsv / toJson (data.js) write its numbers. The page's export buttons and
// bin/attnscope.mjs both go through here, so an export is exactly the figure.
import { meanOverHeads, maxOverHeads, rollout } from '../aggregates.js';
import { heatmapGrid } from './heatmap.js';
import { overviewGrid } from './overview.js';
import { gridSvg } from './grid.js';
import { linesSvg } from './lines.js';
import { gridRaster, linesRaster } from './raster.js';

const FN = 'figureOf';
const VIEWS = ['heatmap', 'lines', 'overview'];
const ATTENTIONS = ['self', 'cross', 'encoder'];
const AGGREGATES = ['mean', 'max', 'rollout'];
const AGG_TITLE = { mean: 'mean over heads', max: 'max over heads', rollout: 'attention rollout' };
const WHAT = { self: 'self-attention', cross: 'cross-attention (target → source)', encoder: 'encoder self-attention' };

// The stack a view reads: the main stack's self-attention, its cross-attention (keys: the source tokens) or
// the encoder's self-attention (encoder–decoder traces).
function sideOf(trace, attention) {
  if (attention !== 'self' && !trace.source) {
    throw new RangeError(`${FN}: attention ('${attention}') needs an encoder-decoder trace (this one has self-attention only)`);
  }
  const s = attention === 'encoder' ? trace.source : trace;
  const keys = attention === 'cross' ? trace.source : s;
  return {
    layers: s.layers, tokens: s.tokens, ids: s.ids, keyTokens: keys.tokens, keyIds: keys.ids,
    pick: attention === 'cross' ? (ly) => ly.cross : (ly) => ly.attention, square: attention !== 'cross',
  };
}

const maxOf = (values) => {
  let hi = 0;
  for (const v of values) if (v > hi) hi = v;
  return hi;
};

/**
 * figureOf(trace, { view, layer = 0, head = 'all', attention = 'self', model?, text? }) → figure (data.js)
 * trace: model.run's result (trace 'weights' is enough; a layer's scores, when present, mark its −∞ cells
 * masked). head: a head index, a list of them (the page's selected heads), 'all', 'mean', 'max' or 'rollout'
 * (through `layer`); overview ignores layer and head and shows every layer × head, each scaled to its own
 * maximum. figure.title says what it shows.
 */
export function figureOf(trace, o = {}) {
  const { view, attention = 'self', head = 'all', layer = 0 } = o;
  if (!VIEWS.includes(view)) throw new RangeError(`${FN}: view (${JSON.stringify(view)}) must be one of ${VIEWS.join(', ')}`);
  if (!ATTENTIONS.includes(attention)) throw new RangeError(`${FN}: attention (${JSON.stringify(attention)}) must be one of ${ATTENTIONS.join(', ')}`);
  const side = sideOf(trace, attention);
  const rows = side.tokens.length;
  const cols = side.keyTokens.length;
  const size = rows * cols;
  const L = side.layers.length;
  const base = {
    view, model: o.model, text: o.text, attention,
    tokens: side.tokens, ids: side.ids, keyTokens: side.keyTokens, keyIds: side.keyIds, rows, cols,
  };
  const H = side.pick(side.layers[0]).weights.length / size;
  if (view === 'overview') {
    const panels = [];
    side.layers.forEach((ly, l) => {
      const w = side.pick(ly).weights;
      for (let hd = 0; hd < H; hd++) {
        const values = w.subarray(hd * size, (hd + 1) * size);
        panels.push({ layer: l, head: hd, aggregate: 'head', values, domain: [0, maxOf(values) || 1] });
      }
    });
    return { ...base, title: `${o.model ?? 'model'} · ${WHAT[attention]} · every layer × head`, heads: H, panels };
  }
  if (!Number.isInteger(layer) || layer < 0 || layer >= L) throw new RangeError(`${FN}: layer (${layer}) must be in [0, ${L - 1}]`);
  const A = side.pick(side.layers[layer]);
  const isHead = (x) => Number.isInteger(x) && x >= 0 && x < H;
  const isList = Array.isArray(head) && head.length > 0 && head.every(isHead);
  if (!isHead(head) && !isList && head !== 'all' && !AGGREGATES.includes(head)) {
    throw new RangeError(`${FN}: head (${head}) must be a head index in [0, ${H - 1}], all, mean, max or rollout`);
  }
  if (head === 'rollout' && !side.square) {
    throw new RangeError(`${FN}: head rollout needs self-attention (attention self or encoder): rollout multiplies square maps through the layers`);
  }
  let panels;
  if (head === 'all' || isHead(head) || isList) {
    const heads = head === 'all' ? [...Array(H).keys()] : isList ? head : [head];
    panels = heads.map((hd) => ({
      layer, head: hd, aggregate: 'head', values: A.weights.subarray(hd * size, (hd + 1) * size),
      // masked cells: the −∞ scores of this head, when the trace holds this layer in full
      masked: A.scores ? Uint8Array.from(A.scores.subarray(hd * size, (hd + 1) * size), (s) => (s === -Infinity ? 1 : 0)) : undefined,
    }));
  } else if (head === 'rollout') {
    panels = [{ layer, head: null, aggregate: head, values: rollout(side.layers.slice(0, layer + 1).map((ly) => side.pick(ly).weights), H, rows)[layer] }];
  } else {
    panels = [{ layer, head: null, aggregate: head, values: (head === 'mean' ? meanOverHeads : maxOverHeads)(A.weights, H, rows, cols) }];
  }
  // one colour domain for every panel: [0, the layer's largest weight] for heads (the page's attention view),
  // [0, the map's largest value] for an aggregate (the page's aggregate view)
  const hi = maxOf(panels[0].aggregate === 'head' ? A.weights : panels[0].values);
  for (const p of panels) p.domain = [0, hi > 0 ? hi : 1];
  const which = head === 'all' && H > 1 ? 'every head' : panels.length > 1 ? `heads ${head.join(', ')}` : head === 'rollout' ? `rollout through layer ${layer}` : panelTitle(panels[0]);
  return { ...base, title: `${o.model ?? 'model'} · layer ${layer} · ${WHAT[attention]} · ${which}`, heads: H, panels };
}

/** A panel's caption: 'head 2', 'mean over heads', … */
export const panelTitle = (p) => (p.aggregate === 'head' ? `head ${p.head}` : AGG_TITLE[p.aggregate]);

const concat = (f) => {
  const out = new Float32Array(f.panels.length * f.rows * f.cols);
  f.panels.forEach((p, k) => out.set(p.values, k * f.rows * f.cols));
  return out;
};

// What draws a figure: a grid spec (heatmap, overview) or the lines view's options.
function drawing(f, { palette, headColors, threshold = 0.004 }) {
  if (f.view === 'lines') {
    return {
      lines: {
        tokens: f.tokens, keyTokens: f.keyTokens, weights: concat(f), rows: f.rows, cols: f.cols, threshold, title: f.title,
        colors: f.panels.map((p) => headColors[(p.aggregate === 'head' ? p.head : 0) % headColors.length]),
        labels: f.panels.map(panelTitle),
      },
    };
  }
  if (f.view === 'overview') {
    const L = f.panels.length / f.heads;
    const size = f.heads * f.rows * f.cols;
    const all = concat(f);
    const layers = Array.from({ length: L }, (_, l) => all.subarray(l * size, (l + 1) * size));
    return { grid: overviewGrid({ layers, heads: f.heads, rows: f.rows, cols: f.cols, title: f.title, palette }) };
  }
  const masked = f.panels[0].masked ? new Uint8Array(f.panels.length * f.rows * f.cols) : undefined;
  if (masked) f.panels.forEach((p, k) => masked.set(p.masked, k * f.rows * f.cols));
  return {
    grid: heatmapGrid({
      tokens: f.tokens, keyTokens: f.keyTokens, matrix: concat(f), rows: f.rows, cols: f.cols, title: f.title, palette,
      masked, domain: f.panels[0].domain, panelTitles: f.panels.map(panelTitle),
      panelData: f.panels.map((p) => ({ layer: p.layer, head: p.aggregate === 'head' ? p.head : p.aggregate })),
    }),
  };
}

/**
 * The figure as an SVG document. style: { palette (colour table, web/colors.js weights or paletteFrom),
 * headColors (CSS colours, one per head, cycled; lines), threshold = 0.004 (lines) }.
 */
export function figureSvg(f, style) {
  const d = drawing(f, style);
  return d.lines ? linesSvg(d.lines) : gridSvg(d.grid);
}

/** The figure as RGBA { width, height, data } at `scale` pixels per SVG unit (PNG: scale 2). */
export function figureRaster(f, style, scale = 2) {
  const d = drawing(f, style);
  return d.lines ? linesRaster(d.lines, scale) : gridRaster(d.grid, scale);
}
