// Attention sinks and shared K/V heads on the page (layer: web; no DOM; issue 28). The sink share of a head is the
// core's headScores sinkShare (src/attention/analysis.h: mean over rows of w[i, 0]) computed here on the trace the
// page already holds (tests/js/sinks.test.js checks it equals as.headScores); "hide the sink" renormalises each row
// without its first key, as exBERT does for [CLS]/[SEP]. The switch changes only what is drawn: exports always hold
// the module's raw weights (README "Sinks").

/** Per head h: mean over the `rows` queries of w[h, i, 0]. A Float64Array(H). */
export function headSink(w, H, rows, cols) {
  const out = new Float64Array(H);
  for (let h = 0; h < H; h++) {
    let s = 0;
    for (let i = 0; i < rows; i++) s += w[(h * rows + i) * cols];
    out[h] = s / rows;
  }
  return out;
}

/** A copy of w [H, rows, cols] with key 0 zeroed and each row renormalised over the other keys (a row with no other weight stays 0). */
export function withoutSink(w, H, rows, cols) {
  const out = new Float32Array(w.length);
  for (let r = 0; r < H * rows; r++) {
    const at = r * cols;
    let s = 0;
    for (let j = 1; j < cols; j++) s += w[at + j];
    if (s > 0) for (let j = 1; j < cols; j++) out[at + j] = w[at + j] / s;
  }
  return out;
}

/** The trace the attention view draws with the sink hidden: layer `layer`'s self-attention weights renormalised. */
export function sinkHiddenTrace(trace, layer) {
  const n = trace.n;
  const L = trace.layers[layer];
  const H = L.attention.weights.length / (n * n);
  const copy = { ...L, attention: { ...L.attention, weights: withoutSink(L.attention.weights, H, n, n) } };
  return { ...trace, sinkHidden: true, layers: trace.layers.map((ly, l) => (l === layer ? copy : ly)) };
}

/** Which K/V head query head h reads (repeat_kv: h / (numHeads / numKeyValueHeads)). */
export const kvHeadOf = (h, numHeads, kvHeads) => Math.floor(h / (numHeads / kvHeads));

/**
 * KV-cache bytes for `tokens` tokens: 2 (K and V) × layers × kvHeads × headDim × tokens × bytes per value, and the
 * same with every query head keeping its own K and V (multi-head attention).
 */
export function kvCacheBytes({ numLayers, numHeads, numKeyValueHeads, headDim }, tokens, bytes = 2) {
  const per = 2 * numLayers * headDim * tokens * bytes;
  return { shared: per * numKeyValueHeads, full: per * numHeads };
}
