// Aggregates over a trace's attention weights (layer: web; pure functions, no DOM, like playground's
// nn.ts): the mean and the max over heads, attention rollout across layers (Abnar & Zuidema 2020), per-head
// entropy and mean attention distance, and a threshold / top-k filter that hides weak links.
// Weights are laid out as the trace stores them: [H, n, m] row-major (head, query, key); sums run in
// float64. Bad shapes throw an Error naming the function and argument ("fn: arg (value) must be …").

function checkShape(fn, weights, H, n, m) {
  for (const [name, v] of [['H', H], ['n', n], ['m', m]]) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`${fn}: ${name} (${v}) must be a positive integer`);
  }
  if (!weights || weights.length !== H * n * m) {
    throw new RangeError(`${fn}: weights length (${weights?.length}) must be H·n·m (${H * n * m})`);
  }
}

/** Mean over heads: [H, n, m] → [n, m]. */
export function meanOverHeads(weights, H, n, m = n) {
  checkShape('meanOverHeads', weights, H, n, m);
  const out = new Float32Array(n * m);
  for (let c = 0; c < n * m; c++) {
    let s = 0;
    for (let hd = 0; hd < H; hd++) s += weights[hd * n * m + c];
    out[c] = s / H;
  }
  return out;
}

/** Max over heads: [H, n, m] → [n, m]. */
export function maxOverHeads(weights, H, n, m = n) {
  checkShape('maxOverHeads', weights, H, n, m);
  const out = new Float32Array(n * m);
  for (let c = 0; c < n * m; c++) {
    let mx = -Infinity;
    for (let hd = 0; hd < H; hd++) if (weights[hd * n * m + c] > mx) mx = weights[hd * n * m + c];
    out[c] = mx;
  }
  return out;
}

/**
 * One layer of rollout: `A` [n, n] float64 holds I + the layer's head mean (summed head by head in order, w/H each);
 * its rows are renormalised to sum 1 in place and Â · R returned (Â itself when R is null, the first layer). Shared
 * by rollout() and the streamed rollout of an attention file too big to hold (web/attnfile-stream.js).
 */
export function rolloutStep(R, A, n) {
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < n; j++) sum += A[i * n + j];
    for (let j = 0; j < n; j++) A[i * n + j] /= sum; // sum ≥ 1: the identity was added
  }
  if (!R) return A;
  const next = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < n; k++) {
      const a = A[i * n + k];
      if (a === 0) continue;
      for (let j = 0; j < n; j++) next[i * n + j] += a * R[k * n + j];
    }
  }
  return next;
}

/**
 * Attention rollout (Abnar & Zuidema 2020) of self-attention layers, each [H, n, n]: per layer the
 * head mean W, then Â = (W + I) with every row renormalised to sum 1, then R₁ = Â₁, R_l = Â_l · R_{l−1}.
 * Returns [R₁, …, R_L], each [n, n]: R_l[i, j] is how much of token j reaches position i after layer l.
 */
export function rollout(layers, H, n) {
  if (!Array.isArray(layers) || layers.length === 0) {
    throw new RangeError(`rollout: layers (${Array.isArray(layers) ? 0 : typeof layers}) must be a non-empty array of [H, n, n] weights`);
  }
  const out = [];
  let R = null;
  layers.forEach((w, l) => {
    try {
      checkShape('rollout', w, H, n, n);
    } catch (e) {
      throw new RangeError(e.message.replace('rollout: weights', `rollout: layers[${l}]`));
    }
    const A = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let s = i === j ? 1 : 0;
        for (let hd = 0; hd < H; hd++) s += w[hd * n * n + i * n + j] / H;
        A[i * n + j] = s;
      }
    }
    R = rolloutStep(R, A, n);
    out.push(Float32Array.from(R));
  });
  return out;
}

/**
 * Per-head entropy in nats, −Σ_j w ln w (0 ln 0 = 0), averaged over the query rows that attend to
 * something (a fully blocked row is skipped): [H, n, m] → Float64Array(H). Uniform over m keys is ln m.
 */
export function headEntropy(weights, H, n, m = n) {
  checkShape('headEntropy', weights, H, n, m);
  return perHead(weights, H, n, m, true);
}

/**
 * Per-head mean attention distance in token positions, Σ_j w_ij·|i − j| averaged over the query rows
 * that attend to something: [H, n, m] → Float64Array(H).
 */
export function headDistance(weights, H, n, m = n) {
  checkShape('headDistance', weights, H, n, m);
  return perHead(weights, H, n, m, false);
}

// One loop per measure, no per-weight callback: at 512 tokens x 72 heads (19 M weights) a callback per weight
// cost ~0.5 s of the page's main thread per new trace.
function perHead(weights, H, n, m, entropy) {
  const out = new Float64Array(H);
  for (let hd = 0; hd < H; hd++) {
    let total = 0;
    let rows = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      let mass = 0;
      const at = hd * n * m + i * m;
      if (entropy) {
        for (let j = 0; j < m; j++) {
          const w = weights[at + j];
          mass += w;
          if (w > 0) s -= w * Math.log(w);
        }
      } else {
        for (let j = 0; j < m; j++) {
          const w = weights[at + j];
          mass += w;
          s += w * (i > j ? i - j : j - i);
        }
      }
      if (mass > 0) {
        total += s;
        rows += 1;
      }
    }
    out[hd] = rows ? total / rows : 0;
  }
  return out;
}

/**
 * Hides weak links of a [rows, cols] map: a cell is kept when it is ≥ threshold and (topK > 0) among
 * the topK largest of its row (ties: the lower key index first); hidden cells become 0.
 * Returns { values: Float32Array, hidden: number of non-zero cells that were hidden }.
 */
export function filterLinks(values, rows, cols, { threshold = 0, topK = 0 } = {}) {
  checkShape('filterLinks', values, 1, rows, cols);
  if (!Number.isFinite(threshold)) throw new RangeError(`filterLinks: threshold (${threshold}) must be a finite number`);
  if (!Number.isInteger(topK) || topK < 0) throw new RangeError(`filterLinks: topK (${topK}) must be a non-negative integer`);
  const out = Float32Array.from(values);
  let hidden = 0;
  const order = [...Array(cols).keys()];
  for (let i = 0; i < rows; i++) {
    const row = out.subarray(i * cols, (i + 1) * cols);
    const keep = new Uint8Array(cols).fill(1);
    if (topK > 0 && topK < cols) {
      order.sort((a, b) => (row[b] - row[a]) || (a - b));
      for (let r = topK; r < cols; r++) keep[order[r]] = 0;
      order.sort((a, b) => a - b);
    }
    for (let j = 0; j < cols; j++) {
      if (keep[j] && row[j] >= threshold) continue;
      if (row[j] !== 0) hidden += 1;
      row[j] = 0;
    }
  }
  return { values: out, hidden };
}

// ---- words, not pieces: sub-word attention merged into words (BPE / WordPiece / characters)

/**
 * Merges a piece-level attention map into words: merged[a, b] = mean over the query pieces i of word a of
 * (the sum over the key pieces j of word b of w[i, j]) — a key word gets all its pieces' weight, a query
 * word the average row of its pieces, so every row still sums to what its pieces' rows sum to (1).
 * `weights` is [H, n, m] (H = 1: one map); groupsQ (length n) / groupsK (length m) give each piece's word
 * index, words numbered 0…W−1 with at least one piece each (wordGroups() makes them). A NaN row (a padding
 * query) stays NaN. Returns { values: Float32Array [H, Wq, Wk], rows: Wq, cols: Wk }.
 */
export function mergeWords(weights, n, m, groupsQ, groupsK, H = 1) {
  checkShape('mergeWords', weights, H, n, m);
  const Wq = checkGroups('groupsQ', groupsQ, n);
  const Wk = checkGroups('groupsK', groupsK, m);
  const pieces = new Float64Array(Wq); // query pieces per word
  for (let i = 0; i < n; i++) pieces[groupsQ[i]] += 1;
  const out = new Float32Array(H * Wq * Wk);
  const acc = new Float64Array(Wq * Wk);
  for (let hd = 0; hd < H; hd++) {
    acc.fill(0);
    const base = hd * n * m;
    for (let i = 0; i < n; i++) {
      const row = groupsQ[i] * Wk;
      for (let j = 0; j < m; j++) acc[row + groupsK[j]] += weights[base + i * m + j];
    }
    for (let a = 0; a < Wq; a++) {
      for (let b = 0; b < Wk; b++) out[hd * Wq * Wk + a * Wk + b] = acc[a * Wk + b] / pieces[a];
    }
  }
  return { values: out, rows: Wq, cols: Wk };
}

function checkGroups(name, groups, len) {
  if (!groups || typeof groups.length !== 'number' || groups.length !== len) {
    throw new RangeError(`mergeWords: ${name} length (${groups?.length}) must be ${len}, one word index per piece`);
  }
  let W = 0;
  for (let i = 0; i < len; i++) {
    const g = groups[i];
    if (!Number.isInteger(g) || g < 0 || g >= len) throw new RangeError(`mergeWords: ${name}[${i}] (${g}) must be a word index in 0…${len - 1}`);
    if (g + 1 > W) W = g + 1;
  }
  const seen = new Uint8Array(W);
  for (let i = 0; i < len; i++) seen[groups[i]] = 1;
  const gap = seen.indexOf(0);
  if (gap >= 0) throw new RangeError(`mergeWords: ${name} has no piece in word ${gap} (words must be numbered 0…${W - 1} without gaps)`);
  return W;
}

/** CJK ideographs, kana and CJK / full-width punctuation: each such character is a word of its own. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]/u;
export const isCjk = (ch) => CJK.test(ch);
const SPACE = /\s/u;
export const SPECIAL = /^(<[^<>\s]+>|\[[A-Z]+\]|<\|[^|]+\|>)$/;

/** Whether the text between token i−1's end and token i's start (per `spans`) holds whitespace. */
function droppedSpace(spans, i) {
  if (!spans?.offsets || typeof spans.text !== 'string') return false;
  const a = spans.offsets[2 * i - 1];
  const b = spans.offsets[2 * i];
  return b > a && SPACE.test(spans.text.slice(a, b));
}

/** GPT-2's byte-level alphabet, inverted: the printable character standing for each byte → the byte (web/compare.js too). */
let byteOf = null;
export function gpt2Bytes() {
  if (byteOf) return byteOf;
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + extra);
      extra += 1;
    }
  }
  byteOf = new Map(cs.map((c, k) => [String.fromCodePoint(c), bs[k]]));
  return byteOf;
}

/**
 * How a model's tokens mark words: 'bpe' (GPT-2 byte-level, 'Ġ' = a leading space), 'wordpiece' ('##' =
 * continues the word), 'sentencepiece' ('▁' = a leading space: T5, Marian, mBART), 'char' (one character per
 * token) or 'word' (every token is a word).
 */
export function tokenScheme(tokens) {
  const plain = tokens.filter((t) => !SPECIAL.test(t));
  if (plain.some((t) => t.length > 2 && t.startsWith('##'))) return 'wordpiece';
  const bytes = gpt2Bytes();
  if (plain.some((t) => /[ĠĊ]/.test(t)) && plain.every((t) => Array.from(t).every((c) => bytes.has(c)))) return 'bpe';
  if (plain.some((t) => t.startsWith('▁'))) return 'sentencepiece';
  if (plain.length && plain.every((t) => Array.from(t).length === 1)) return 'char';
  return 'word';
}

/**
 * Word groups of a token sequence: { groups: Int32Array (word index per token), words: string[] (each word's
 * text) }. A new word starts at a token that begins with whitespace or follows whitespace ('Ġ' for GPT-2's
 * BPE, a space token for characters), at a CJK character and after one (each CJK character is a word), at
 * every WordPiece token not starting with '##', at a SentencePiece token starting with '▁' (a lone '▁' joins the
 * next token's word), and at special tokens (<s>, [CLS], <|endoftext|>, <pad>: each
 * a word). A GPT-2 token that starts inside a multi-byte character (a CJK character split over byte tokens)
 * stays with the word of that character. `scheme` defaults to tokenScheme(tokens). With `spans` = { text,
 * offsets } (the text and the tokens' [start, end) UTF-16 offsets, as model.run gives them), whitespace the
 * tokenizer dropped (a character tokenizer that skips spaces) also separates words.
 */
export function wordGroups(tokens, scheme = tokenScheme(tokens), spans = null) {
  if (!Array.isArray(tokens)) throw new TypeError(`wordGroups: tokens (${typeof tokens}) must be an array of strings`);
  if (!['bpe', 'wordpiece', 'sentencepiece', 'char', 'word'].includes(scheme)) {
    throw new RangeError(`wordGroups: scheme ('${scheme}') must be one of bpe, wordpiece, sentencepiece, char, word`);
  }
  const n = tokens.length;
  const groups = new Int32Array(n);
  const parts = [];
  // per token: its text (bytes decoded for BPE), whether it begins inside a character, its first and last character
  const text = new Array(n);
  const mid = new Uint8Array(n);
  if (scheme === 'bpe') {
    const bytes = gpt2Bytes();
    const dec = new TextDecoder();
    const all = [];
    const owner = [];
    tokens.forEach((t, i) => {
      if (SPECIAL.test(t)) return;
      for (const c of t) {
        all.push(bytes.get(c) ?? 0x3f); // a character outside the alphabet: '?'
        owner.push(i);
      }
    });
    // each character's bytes go to the token holding its lead byte; a token whose first byte is a
    // continuation byte begins inside a character
    const chars = Array.from({ length: n }, () => []);
    for (let k = 0; k < all.length;) {
      const b = all[k];
      const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      chars[owner[k]].push(dec.decode(Uint8Array.from(all.slice(k, k + len))));
      for (let q = k + 1; q < k + len && q < all.length; q++) if (owner[q] !== owner[q - 1] && owner[q] !== owner[k]) mid[owner[q]] = 1;
      k += len;
    }
    tokens.forEach((t, i) => {
      text[i] = SPECIAL.test(t) ? t : chars[i].join('');
      if (!SPECIAL.test(t) && chars[i].length === 0) mid[i] = 1; // only continuation bytes
    });
  } else {
    tokens.forEach((t, i) => {
      if (scheme === 'sentencepiece') text[i] = SPECIAL.test(t) ? t : t.replace(/▁/g, ' ');
      else text[i] = scheme === 'wordpiece' && t.startsWith('##') && t.length > 2 ? t.slice(2) : t;
    });
  }
  let w = -1;
  let last = ''; // the previous token's last character
  let prevSpecial = false;
  for (let i = 0; i < n; i++) {
    const t = tokens[i];
    const special = SPECIAL.test(t);
    const first = Array.from(text[i])[0] ?? '';
    let start;
    if (i === 0 || special || prevSpecial) start = true;
    else if (scheme === 'word') start = true;
    else if (scheme === 'wordpiece') start = !(t.startsWith('##') && t.length > 2);
    else if (mid[i]) start = false;
    // a lone '▁' piece (SentencePiece before a character it has no '▁x' piece for, e.g. '▁' '你') joins that word
    else if (scheme === 'sentencepiece' && i > 0 && text[i - 1] === ' ') start = false;
    else start = SPACE.test(first) || SPACE.test(last) || isCjk(first) || isCjk(last) || droppedSpace(spans, i);
    if (start) {
      w += 1;
      parts.push([]);
    }
    groups[i] = w;
    parts[w].push(text[i]);
    const cs = Array.from(text[i]);
    if (cs.length) last = cs[cs.length - 1];
    prevSpecial = special;
  }
  const words = parts.map((p) => {
    const s = p.join('');
    return s.trim() === '' ? s : s.trim();
  });
  return { groups, words };
}
