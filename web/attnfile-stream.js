// The views of every layer for an attention file too big to hold (layer: web, runs in the compute worker; no DOM):
// such a file is read one layer at a time (web/attnfile.js), so what needs every layer is computed here by reading
// it head by head, each head checked by the core as it is read (as.openAttentionFile) and dropped once used. Only
// small running results are held: rollout's one n × n product, the model view's pooled thumbnails, flow's head
// means (n ≤ 128). Progress is reported per head read; a 'cancel' stops it between heads (an AbortError).
//
//   op 'rollout' { layer }  → { layer, rollout [n, n] }: rollout to `layer` (web/aggregates.js rolloutStep, the same
//                             numbers as rollout() of the whole trace); the product is kept, so the next layer reads
//                             one more layer only
//   op 'model'              → { stride, sections: [{ key, L, H, rows, cols, tn, tm, thumbs: per layer [H, tn, tm],
//                             entropy, distance?, sink }] }: each head pooled by block MAX (stride × stride cells →
//                             one, the largest: the model view's own pooling, so thin diagonals stay) to at most
//                             THUMB a side, and its entropy, distance and first-key share from the full head; a
//                             head the core refuses is left blank (NaN metrics) and listed in `refused`
//   op 'means'              → { means: per layer [n, n] head means } for attention flow (n ≤ FLOW_MAX_TOKENS)
import { rolloutStep, headEntropy, headDistance } from './aggregates.js';
import { headSink } from './sinks.js';
import { FLOW_MAX_TOKENS } from './flow-work.js';
import { poolMax } from './render/blockmax.js';

/** Cells a side of a streamed model-view thumbnail at most. */
export const THUMB = 32;

/**
 * Reads heads of the open file in order, reporting progress after each; `each(layer, head, weights)`. The next head's
 * bytes are asked for before this one is used (two heads held at most), so reading and computing overlap. With
 * `refused(layer, head, error)`, a head the core refuses (not a probability row) is passed there and the rest read
 * on; without it, or when the bytes cannot be read at all, the error ends the stream.
 */
async function readHeads(o, list, each, onProgress, signal, refused = null) {
  const read = ([l, hd, attention]) => {
    const held = o.cache.get(l)?.[attention === 'cross' ? 'cross' : 'attention'];
    if (!held) return o.f.head(l, hd, attention); // a layer already read (the shown one) is not read again
    const size = held.weights.length / held.numHeads;
    return held.weights.subarray(hd * size, (hd + 1) * size);
  };
  let next = list.length ? read(list[0]) : null;
  for (let k = 0; k < list.length; k++) {
    signal?.throwIfAborted();
    if (o.closed) throw new Error('another attention file was opened');
    let w = null;
    try {
      w = await next;
    } catch (err) {
      if (!refused || o.closed || err instanceof DOMException) throw err;
      refused(list[k][0], list[k][1], err);
    }
    next = k + 1 < list.length ? read(list[k + 1]) : null;
    next?.catch?.(() => {}); // its error is met when it is awaited (or not at all, after a cancel)
    if (w) each(list[k][0], list[k][1], w);
    onProgress?.((k + 1) / list.length);
  }
}

const headsOf = (f, layers, attention = 'self') => layers.flatMap((l) => {
  const H = attention === 'cross' ? f.layers[l].crossHeads : f.layers[l].numHeads;
  return Array.from({ length: H }, (_, hd) => [l, hd, attention]);
});
const range = (a, b) => Array.from({ length: b - a }, (_, i) => a + i);

async function rolloutTo(o, layer, onProgress, signal) {
  const { f } = o;
  const { n } = f;
  if (!Number.isInteger(layer) || layer < 0 || layer >= f.layers.length) throw new RangeError(`rollout: layer (${layer}) must be from 0 to ${f.layers.length - 1}`);
  let kept = o.rollout && o.rollout.layer <= layer ? o.rollout : null;
  let R = kept?.R ?? null;
  let A = null;
  let H = 0;
  await readHeads(o, headsOf(f, range(kept ? kept.layer + 1 : 0, layer + 1)), (l, hd, w) => {
    if (hd === 0) {
      H = f.layers[l].numHeads;
      A = new Float64Array(n * n);
      for (let i = 0; i < n; i++) A[i * n + i] = 1;
    }
    for (let c = 0; c < n * n; c++) A[c] += w[c] / H; // head by head in order: rollout()'s sum
    if (hd === H - 1) {
      R = rolloutStep(R, A, n);
      kept = { layer: l, R };
      o.rollout = kept; // kept as each layer ends: a cancelled rollout goes on from there
    }
  }, onProgress, signal);
  return { layer, rollout: Float32Array.from(R) };
}

async function modelThumbs(o, onProgress, signal) {
  const { f } = o;
  if (o.model) return o.model;
  const m = f.sourceTokens?.length ?? 0;
  const hasCross = !!f.layers[0].crossHeads && f.layers.every((ly) => ly.crossHeads === f.layers[0].crossHeads); // one grid: one head count
  const stride = Math.max(1, Math.ceil(Math.max(f.n, hasCross ? m : 0) / THUMB));
  const sides = [['self', f.n]];
  if (hasCross) sides.push(['cross', m]);
  const sections = sides.map(([key, cols]) => {
    const H = key === 'cross' ? f.layers[0].crossHeads : f.numHeads;
    const L = f.layers.length;
    return {
      key, L, H, rows: f.n, cols, tn: Math.ceil(f.n / stride), tm: Math.ceil(cols / stride),
      thumbs: [], entropy: [], distance: key === 'self' ? [] : null, sink: [], refused: [],
    };
  });
  const list = sides.flatMap(([key]) => headsOf(f, range(0, f.layers.length), key));
  const total = list.length;
  let done = 0;
  for (const sec of sections) {
    const heads = list.filter((x) => x[2] === sec.key);
    const start = (l) => {
      if (sec.thumbs[l]) return;
      sec.thumbs[l] = new Float32Array(sec.H * sec.tn * sec.tm);
      for (const k of ['entropy', 'distance', 'sink']) if (sec[k]) sec[k][l] = new Float64Array(sec.H).fill(NaN);
    };
    await readHeads(o, heads, (l, hd, w) => {
      start(l);
      sec.thumbs[l].set(poolMax(w, sec.rows, sec.cols, stride), hd * sec.tn * sec.tm);
      sec.entropy[l][hd] = headEntropy(w, 1, sec.rows, sec.cols)[0];
      if (sec.distance) sec.distance[l][hd] = headDistance(w, 1, sec.rows, sec.cols)[0];
      sec.sink[l][hd] = headSink(w, 1, sec.rows, sec.cols)[0];
    }, (fr) => onProgress?.((done + fr * heads.length) / total), signal, (l, hd, err) => {
      start(l); // a refused head: its thumbnail blank, its metrics NaN, and why
      sec.refused.push({ layer: l, head: hd, message: String(err?.message ?? err) });
    });
    done += heads.length;
  }
  o.model = { stride, sections };
  return o.model;
}

/** The compute worker's 'fileStream' request: `files` the pipeline's AttentionFiles (web/attnfile.js). */
export async function fileStreamWork(files, { op, layer }, onProgress, signal) {
  const o = files.current();
  if (!o) throw new Error('no attention file is open');
  if (op === 'rollout') return rolloutTo(o, layer, onProgress, signal);
  if (op === 'model') return modelThumbs(o, onProgress, signal);
  if (op === 'means') {
    const { f } = o;
    if (f.n > FLOW_MAX_TOKENS) throw new RangeError(`attention flow: the file has ${f.n} tokens; at most ${FLOW_MAX_TOKENS}`);
    const means = f.layers.map(() => new Float32Array(f.n * f.n));
    const sums = new Float64Array(f.n * f.n);
    await readHeads(o, headsOf(f, range(0, f.layers.length)), (l, hd, w) => {
      const H = f.layers[l].numHeads;
      if (hd === 0) sums.fill(0);
      for (let c = 0; c < sums.length; c++) sums[c] += w[c];
      if (hd === H - 1) for (let c = 0; c < sums.length; c++) means[l][c] = sums[c] / H;
    }, onProgress, signal);
    return { means };
  }
  throw new RangeError(`fileStream: op (${op}) must be rollout, model or means`);
}
