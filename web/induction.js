// The induction probe for any model that reads text (layer: web; no DOM; the CLI's `heads` and the page's worker
// use it). TransformerLens scores induction on a random sequence repeated (head_detector.py): attention from each
// token of the second copy to the token after its earlier occurrence. A model here reads text, not ids, so the
// sequence R is the text's distinct tokens (their own substrings, special tokens left out) in a seeded random
// order, and the input is R's text twice (with a space between pieces if joined pieces merge). It counts only if the model tokenizes that input as
// [prefix] + R' + R' + [suffix] with R' of length T (checked on the ids, so a merge across the seam is caught);
// the score is as.headScores's induction (the stripe at offset 1 − T over the second copy) on the weights with the
// suffix cut off. Distinct ids in R' keep each query's earlier occurrence unique.
import { mulberry32 } from './rng.js';

const MAX_PERIOD = 64;

/** The first p with ids = a[0..p) + x + x + a[p..) where x = a[p..p+T): the prefix length, or -1. */
function prefixOf(single, double, T) {
  const eq = (i, j) => double[i] === single[j];
  for (let p = 0; p + T <= single.length; p++) {
    let ok = true;
    for (let i = 0; ok && i < p; i++) ok = eq(i, i);
    for (let i = 0; ok && i < T; i++) ok = eq(p + i, p + i) && eq(p + T + i, p + i);
    for (let i = p + T; ok && i < single.length; i++) ok = eq(i + T, i);
    if (ok) return p;
  }
  return -1;
}

/**
 * inductionScores(as, model, text, { seed }) → { induction [L·H], period, tokens, probe } where probe is the text
 * the model read. Throws an Error saying why when the text gives no usable repeated sequence.
 */
export function inductionScores(as, model, text, { seed = 1 } = {}) {
  const base = model.run(text, { trace: 'none' });
  const pieces = new Map(); // id → its substring, first occurrence
  for (let i = 0; i < base.n; i++) {
    const [a, b] = [base.offsets[2 * i], base.offsets[2 * i + 1]];
    if (b > a && !pieces.has(base.ids[i])) pieces.set(base.ids[i], text.slice(a, b));
  }
  const order = [...pieces.values()];
  const rand = mulberry32(seed);
  for (let i = order.length - 1; i > 0; i--) { // Fisher–Yates
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  if (order.length < 2) throw new Error('induction: the text needs at least 2 different tokens');
  // pieces joined as they are (byte-level BPE pieces carry their spaces; a character tokenizer skips them), else
  // with spaces between them (a word tokenizer)
  for (const sep of ['', ' ']) {
    const r = order.slice(0, MAX_PERIOD).join(sep);
    const single = model.run(r, { trace: 'none' }).ids;
    const run = model.run(r + sep + r, { trace: 'weights' });
    const T = run.ids.length - single.length;
    const p = T > 0 ? prefixOf(single, run.ids, T) : -1;
    if (p >= 0) return score(as, run, p, T, r + sep + r);
  }
  throw new Error('induction: the text\'s tokens, joined and repeated, do not tokenize as one sequence twice (tokens merge across the seam); try another text');
}

/** headScores' induction on `run`'s weights cut to [prefix] + R + R (the suffix left out). */
function score(as, run, p, T, probe) {
  const n = run.n;
  const m = p + 2 * T; // the suffix (an encoder's [SEP]) cut off
  const H = run.numHeads;
  const weights = run.layers.map((l) => {
    const w = l.attention.weights;
    const out = new Float32Array(H * m * m);
    for (let hd = 0; hd < H; hd++) for (let i = 0; i < m; i++) out.set(w.subarray((hd * n + i) * n, (hd * n + i) * n + m), (hd * m + i) * m);
    return out;
  });
  const s = as.headScores({ weights, numHeads: H, n: m, period: T });
  return { induction: s.induction, period: T, tokens: run.tokens, probe };
}
