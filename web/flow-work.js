// Attention flow and the query/key map, in the compute worker (layer: web; no DOM, no model math: the numbers are
// the attnscope module's attentionFlow and qkMap, src/attention/analysis.h). Reached through the 'inside' request
// (web/inside-work.js ops 'flow' and 'qk').

/** The most tokens attention flow is computed for in the page: n² max-flows over (L + 1)·n nodes. */
export const FLOW_MAX_TOKENS = 128;
/** The most query (and key) vectors the map projects, over every text. */
export const QK_MAX_POINTS = 1024;

const turn = () => new Promise((resolve) => { setTimeout(resolve, 0); });

/**
 * op 'flow' { layers: [n, n] head means per layer, n } → { flow [n, n] }: the maximum flow from every output
 * position to every input (Abnar & Zuidema 2020). The head means go in with numHeads 1, which is the same graph
 * (the core averages the heads before adding the residual) and lets layers differ in head count. Up to 64 tokens in
 * one call; beyond, one call per output position, so progress shows and Cancel stops it between rows.
 */
export async function flowWork(as, { layers, n }, onProgress, signal) {
  if (n > FLOW_MAX_TOKENS) throw new RangeError(`attention flow: the text has ${n} tokens; at most ${FLOW_MAX_TOKENS}`);
  if (n <= 64) return { flow: as.attentionFlow({ layers, numHeads: 1, n }).flow };
  const flow = new Float32Array(n * n);
  for (let o = 0; o < n; o++) {
    signal?.throwIfAborted();
    flow.set(as.attentionFlow({ layers, numHeads: 1, n, output: o }).flow, o * n);
    onProgress((o + 1) / n);
    await turn(); // lets a 'cancel' message in
  }
  return { flow };
}

/** Head `head`'s columns of a [n, width] matrix: [n, headDim]. */
function columns(m, n, width, from, headDim) {
  const out = new Float32Array(n * headDim);
  for (let i = 0; i < n; i++) out.set(m.subarray(i * width + from, i * width + from + headDim), i * headDim);
  return out;
}

/**
 * op 'qk' { layer, head, texts } → AttentionViz's map of one head: its queries and keys from the page's text and
 * each extra text, projected by as.qkMap (normalised: keys translated and scaled). Returns { layer, head, headDim,
 * points: [{ text, position, token }] per side (the same for queries and keys), queries [nq, 2], keys [nk, 2],
 * explainedVariance, weights: per text the head's [n, n] }. A run's trace holds K per query head (a grouped-query
 * model's repeat_kv'ed); a K only kvHeads wide would be read at K/V head h / (numHeads / kvHeads), as repeat_kv does.
 */
export function qkWork(as, model, text, { layer, head, texts }) {
  const all = [text, ...texts.filter((x) => x.trim() !== '')];
  const points = [];
  const qs = [];
  const ks = [];
  const weights = [];
  let headDim = 0;
  all.forEach((x, ti) => {
    const r = model.run(x, { trace: 'none', full: [layer] });
    if (!(Number.isInteger(layer) && layer >= 0 && layer < r.layers.length)) throw new RangeError(`Q/K map: layer ${layer} must be an integer from 0 to ${r.layers.length - 1}`);
    const a = r.layers[layer].attention;
    const H = r.numHeads;
    if (!(Number.isInteger(head) && head >= 0 && head < H)) throw new RangeError(`Q/K map: head ${head} must be an integer from 0 to ${H - 1}`);
    if (!a.q || !a.k) throw new Error('Q/K map: this layer has no queries and keys (a simple attention layer)');
    const { n } = r;
    headDim = r.headDim;
    const kvHeads = a.k.length / (n * headDim);
    const g = Math.floor(head / (H / kvHeads));
    qs.push(columns(a.q, n, a.q.length / n, head * headDim, headDim));
    ks.push(columns(a.k, n, a.k.length / n, g * headDim, headDim));
    weights.push(a.weights.slice(head * n * n, (head + 1) * n * n));
    for (let p = 0; p < n; p++) points.push({ text: ti, position: p, token: r.tokens[p] });
  });
  if (points.length > QK_MAX_POINTS) throw new RangeError(`Q/K map: ${points.length} tokens in all; at most ${QK_MAX_POINTS}`);
  const cat = (parts) => {
    const out = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of parts) { out.set(p, at); at += p.length; }
    return out;
  };
  const nq = points.length;
  const m = as.qkMap({ q: cat(qs), k: cat(ks), nq, nk: nq, d: headDim });
  return {
    layer, head, headDim, texts: all, points, queries: m.queries, keys: m.keys, explainedVariance: m.explainedVariance, weights,
  };
}
