// The page's view-models (layer: web; pure, no DOM, Node tests import it — playground's nn.ts): what the panels
// draw, computed from a trace and the state. The trace merged into words, the attention panel's aggregate map and
// filtered weights, the model view's sections with per-head metrics, what a trace holds, a trace as plain JSON.
// The aggregates themselves are web/aggregates.js's.
import { headSink } from './sinks.js';
import {
  meanOverHeads, maxOverHeads, rollout, headEntropy, headDistance, filterLinks, mergeWords, wordGroups,
} from './aggregates.js';

/** The layer shown: `layer` clamped to the trace's layers. */
export const shownLayer = (trace, layer) => Math.min(layer, trace.layers.length - 1);

/**
 * Whether `trace` holds `what` for the shown layer `layer`: 'full' (that layer in full), 'layer' (that layer's
 * weights), 'all' (every layer's weights, the source side's too). A complete trace holds everything.
 */
export function traceHas(trace, layer, what) {
  if (trace.complete) return true;
  const shown = trace.layers[shownLayer(trace, layer)];
  if (what === 'full') return !!shown?.full;
  if (what === 'layer') return !!shown?.attention?.weights;
  return trace.layers.every((ly) => ly.attention?.weights) && (!trace.source?.layers || trace.source.layers.every((ly) => ly.attention?.weights));
}

/** Merges a completion's layers (every layer's weights, the shown layer in full) into `trace`, now complete. */
export function mergeCompletion(trace, full) {
  trace.layers = full.layers;
  if (trace.source && full.source) trace.source.layers = full.source.layers;
  trace.complete = true;
}

/** A trace-shaped copy with words for tokens and every weight map merged (sum over keys, mean over queries). */
export function wordTrace(tr) {
  const merge = (weights, rows, cols, gq, gk) => mergeWords(weights, rows, cols, gq, gk, weights.length / (rows * cols)).values;
  const g = wordGroups(tr.tokens, undefined, { text: tr.texts?.target ?? tr.texts?.text, offsets: tr.offsets });
  const n = tr.n;
  const first = [];
  g.groups.forEach((w, i) => { first[w] ??= i; });
  const out = {
    ...tr, tokens: g.words, n: g.words.length, groups: g.groups, first,
    nReal: tr.nReal != null && tr.nReal > 0 ? g.groups[tr.nReal - 1] + 1 : undefined,
  };
  let src = null;
  const m = tr.source ? (tr.source.n ?? tr.source.tokens.length) : 0;
  if (tr.source) {
    src = wordGroups(tr.source.tokens, undefined, { text: tr.texts?.source, offsets: tr.source.offsets });
    out.source = {
      ...tr.source, tokens: src.words, n: src.words.length,
      layers: tr.source.layers?.map((ly) => ({ attention: { weights: merge(ly.attention.weights, m, m, src.groups, src.groups) } })),
    };
  }
  out.layers = tr.layers.map((ly) => ({
    kind: ly.kind, full: ly.full,
    // a big attention file's trace holds the shown layer only (web/attnfile.js)
    attention: { weights: ly.attention.weights && merge(ly.attention.weights, n, n, g.groups, g.groups) },
    ...(ly.cross && src ? { cross: { weights: merge(ly.cross.weights, n, m, g.groups, src.groups) } } : {}),
  }));
  return out;
}

/** The selected token's row in a drawn trace: its word when merged. */
export const shownToken = (tr, token) => (tr.groups ? tr.groups[Math.min(token, tr.groups.length - 1)] : token);
/** The token a row clicked in a drawn trace selects: a word's first piece. */
export const firstPiece = (tr, i) => (tr.first ? tr.first[i] : i);

/** The aggregate map of layer `layer` for `agg` ('mean' | 'max' | 'rollout'; 'heads' → null), [n, n]. */
export function aggregateMap(trace, layer, agg) {
  const n = trace.n;
  const w = trace.layers[layer].attention.weights;
  const H = w.length / (n * n);
  if (agg === 'mean') return meanOverHeads(w, H, n);
  if (agg === 'max') return maxOverHeads(w, H, n);
  // an attention file's layers may be read one at a time (a big file) or differ in head count: no rollout then
  if (agg === 'rollout' && trace.layers.some((ly, l) => l <= layer && ly.attention.weights?.length !== w.length)) return null;
  if (agg === 'rollout') return rollout(trace.layers.slice(0, layer + 1).map((ly) => ly.attention.weights), H, n)[layer];
  return null;
}

/**
 * The trace the per-head maps draw: `trace` itself unless a threshold or top-k filter hides weak links, then a
 * copy whose layer `layer` has its weights (and cross weights) filtered head by head.
 */
export function filteredTrace(trace, layer, { threshold, topK }) {
  if (!(threshold > 0 || topK > 0)) return trace;
  const n = trace.n;
  const L = trace.layers[layer];
  const A = L.attention;
  const H = A.weights.length / (n * n);
  const filt = (w, rows, cols) => {
    const out = new Float32Array(w.length);
    for (let hd = 0; hd < H; hd++) out.set(filterLinks(w.subarray(hd * rows * cols, (hd + 1) * rows * cols), rows, cols, { threshold, topK }).values, hd * rows * cols);
    return out;
  };
  const copy = { ...L, attention: { ...A, weights: filt(A.weights, n, n) } };
  if (L.cross && trace.source) copy.cross = { ...L.cross, weights: filt(L.cross.weights, n, trace.source.n ?? trace.source.tokens.length) };
  return { ...trace, layers: trace.layers.map((ly, l) => (l === layer ? copy : ly)) };
}

/** headEntropy / headDistance of one layer's weights, computed once per weights array (a new trace has new ones). */
const metrics = new WeakMap();
function perHead(fn, w, H, rows, cols) {
  let m = metrics.get(w);
  if (!m) metrics.set(w, (m = new Map()));
  if (!m.has(fn)) m.set(fn, fn(w, H, rows, cols));
  return m.get(fn);
}

/**
 * The model view's grids: every layer × head with per-head entropy and mean distance; an encoder–decoder gets
 * three (encoder self-attention, decoder self-attention, cross-attention). `titles`: { encoder, decoder, self,
 * cross } (the page's language). Returns { H, sections: [{ key, title, weights, H, n, m, open, entropy, distance }] }.
 */
export function modelSections(trace, titles) {
  const n = trace.n;
  const H = trace.layers[0].attention.weights.length / (n * n);
  const section = (key, title, weights, rows, cols, open) => {
    const Hs = weights[0].length / (rows * cols); // cross-attention may have its own head count (an attention file's)
    return {
      key, title, weights, H: Hs, n: rows, m: cols, open,
      entropy: weights.map((w) => perHead(headEntropy, w, Hs, rows, cols)),
      distance: rows === cols && key !== 'cross' ? weights.map((w) => perHead(headDistance, w, Hs, rows, cols)) : null,
      sink: weights.map((w) => perHead(headSink, w, Hs, rows, cols)), // share of each head's weight on the first key
    };
  };
  const sections = [];
  const src = trace.source;
  if (src?.layers) sections.push(section('encoder', titles.encoder, src.layers.map((ly) => ly.attention.weights), src.n, src.n, false));
  sections.push(section('self', src ? titles.decoder : titles.self, trace.layers.map((ly) => ly.attention.weights), n, n, true));
  if (src && trace.layers[0].cross) sections.push(section('cross', titles.cross, trace.layers.map((ly) => ly.cross.weights), n, src.n, true));
  return { H, sections };
}

/** A trace as plain JSON values: typed arrays become arrays, non-finite numbers null. */
export function toPlain(v) {
  if (ArrayBuffer.isView(v)) return Array.from(v, (x) => (Number.isFinite(x) ? x : null));
  if (Array.isArray(v)) return v.map(toPlain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPlain(x)]));
  return v;
}
