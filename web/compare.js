// Comparing two traces (layer: web; pure, no DOM, Node tests import it): two attention maps, each from its own
// trace (two files, two models, two prompts through one model; the patching view's clean and corrupted runs), with
// their tokens aligned where the two tokenizations differ, and their difference.
//
// Alignment is by characters: each token's text is found in a canonical form of the sentence (lower case, accents
// and whitespace removed, as an uncased WordPiece tokenizer sees it; GPT-2's byte-level tokens decoded; '##' and
// '▁' markers dropped), special tokens ([CLS], <|endoftext|>) have no characters. A span is the smallest run of
// characters that both tokenizations cut at the same places; each map is merged into spans as the words view merges
// sub-words (web/aggregates.js mergeWords: sum over a span's keys, mean over its queries), leaving out the special
// tokens' rows and columns. When the two canonical texts differ (two prompts), tokens are paired by position if
// both have as many; otherwise the traces cannot be compared and the error says why.
import {
  mergeWords, tokenScheme, gpt2Bytes, SPECIAL,
} from './aggregates.js';

/** A character as the comparison sees it: '' for whitespace, else lower case without accents. */
const canonChar = (c) => c.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s/gu, '');

/** Each token's characters (special tokens: none): from `text` and [start, end) `offsets` when given. */
export function tokenTexts(tokens, { text, offsets } = {}) {
  if (text != null && offsets) return tokens.map((t, i) => (offsets[2 * i] >= 0 && !SPECIAL.test(t) ? text.slice(offsets[2 * i], offsets[2 * i + 1]) : ''));
  const scheme = tokenScheme(tokens);
  if (scheme !== 'bpe') {
    return tokens.map((t) => (SPECIAL.test(t) ? '' : (scheme === 'wordpiece' && t.startsWith('##') && t.length > 2 ? t.slice(2) : t).replace(/▁/g, ' ')));
  }
  // byte-level BPE: a character's bytes go to the token holding its lead byte
  const bytes = gpt2Bytes();
  const out = tokens.map(() => '');
  const all = [];
  const owner = [];
  tokens.forEach((t, i) => {
    if (SPECIAL.test(t)) return;
    for (const c of t) { all.push(bytes.get(c) ?? 0x3f); owner.push(i); }
  });
  const dec = new TextDecoder();
  for (let k = 0; k < all.length;) {
    const b = all[k];
    const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    out[owner[k]] += dec.decode(Uint8Array.from(all.slice(k, k + len)));
    k += len;
  }
  return out;
}

/** { canon, spans: [start, end) per token in canon } for one side ({ tokens, text?, offsets? }). */
export function canonSpans(side) {
  let canon = '';
  const spans = tokenTexts(side.tokens, side).map((s) => {
    const start = canon.length;
    for (const c of s) canon += canonChar(c);
    return [start, canon.length];
  });
  return { canon, spans };
}

/**
 * alignTokens(a, b) for sides { tokens, text?, offsets? } → { mode: 'chars' | 'position', labels: string[] (one per
 * span: a's text of it), groupsA, groupsB: Int32Array (span of each token, −1: a token with no characters, left out) }.
 */
export function alignTokens(a, b) {
  if (a.tokens.length === b.tokens.length && a.tokens.every((t, i) => t === b.tokens[i])) {
    // the same tokens (one tokenizer, one text): each token is its own span, whitespace and special tokens too,
    // which the character alignment below would leave out
    const texts = tokenTexts(a.tokens, a);
    return {
      mode: 'chars', labels: a.tokens.map((t, i) => texts[i].trim() || texts[i] || t),
      groupsA: Int32Array.from(a.tokens, (_, i) => i), groupsB: Int32Array.from(b.tokens, (_, i) => i),
    };
  }
  const A = canonSpans(a);
  const B = canonSpans(b);
  if (A.canon === B.canon && A.canon.length) {
    const endsA = new Set(A.spans.filter(([s, e]) => e > s).map(([, e]) => e));
    const cuts = [...new Set(B.spans.filter(([s, e]) => e > s && endsA.has(e)).map(([, e]) => e))].sort((x, y) => x - y);
    const spanOf = (pos) => { let k = 0; while (cuts[k] <= pos) k++; return k; }; // the span holding character pos
    const groups = (spans) => Int32Array.from(spans, ([s, e]) => (e > s ? spanOf(s) : -1));
    const groupsA = groups(A.spans);
    // a span's label: a's own text of it (case and accents kept)
    const texts = tokenTexts(a.tokens, a);
    const labels = cuts.map(() => '');
    groupsA.forEach((g, i) => { if (g >= 0) labels[g] += texts[i]; });
    return { mode: 'chars', labels: labels.map((s) => s.trim() || s), groupsA, groupsB: groups(B.spans) };
  }
  if (a.tokens.length === b.tokens.length) {
    const id = Int32Array.from(a.tokens, (_, i) => i);
    return { mode: 'position', labels: a.tokens.map((t, i) => (t === b.tokens[i] ? t : `${t}|${b.tokens[i]}`)), groupsA: id, groupsB: id };
  }
  const show = (s) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
  throw new Error(`compareTraces: the two texts differ (${show(A.canon)} vs ${show(B.canon)}) and so do their token counts (${a.tokens.length} vs ${b.tokens.length}), so their tokens cannot be aligned`);
}

/** One [n, n] map merged into `U` spans by `groups` (−1 left out): mergeWords on the kept tokens. */
function merged(weights, groups, U) {
  const keep = [];
  groups.forEach((g, i) => { if (g >= 0) keep.push(i); });
  const n = groups.length;
  const k = keep.length;
  const sub = new Float32Array(k * k);
  keep.forEach((i, r) => keep.forEach((j, c) => { sub[r * k + c] = weights[i * n + j]; }));
  const g = Int32Array.from(keep, (i) => groups[i]);
  const seen = new Set(g);
  if (seen.size !== U) throw new Error(`compareTraces: ${U - seen.size} aligned spans have no token`);
  return mergeWords(sub, k, k, g, g, 1).values;
}

/**
 * compareTraces(a, b): each side { tokens, weights: Float32Array [n, n] (one head), text?, offsets? } →
 * { mode, labels, U, a, b, diff } with a, b the maps merged into the U aligned spans and diff = a − b, [U, U].
 */
export function compareTraces(a, b) {
  for (const [name, s] of [['a', a], ['b', b]]) {
    if (s === null || typeof s !== 'object') throw new TypeError(`compareTraces: ${name} must be { tokens, weights, text?, offsets? }, got ${s === null ? 'null' : typeof s}`);
    if (!Array.isArray(s.tokens) || !s.tokens.length || !s.tokens.every((t) => typeof t === 'string')) {
      throw new TypeError(`compareTraces: ${name}.tokens must be a non-empty array of strings`);
    }
    const n = s.tokens.length;
    if (!(s.weights instanceof Float32Array) || s.weights.length !== n * n) {
      throw new TypeError(`compareTraces: ${name}.weights must be a Float32Array of ${n}×${n} values (one head), got ${s.weights?.length ?? typeof s.weights}`);
    }
    if (s.text != null && typeof s.text !== 'string') throw new TypeError(`compareTraces: ${name}.text must be a string, got ${typeof s.text}`);
    // [start, end) per token (−1: no characters), read only with the text
    const o = s.offsets;
    if (o != null && (typeof o !== 'object' || o.length !== 2 * n || !Array.prototype.every.call(o, (v) => Number.isInteger(v)))) {
      throw new TypeError(`compareTraces: ${name}.offsets must hold 2 × ${n} integers (a start and an end per token)`);
    }
  }
  const al = alignTokens(a, b);
  const U = al.labels.length;
  const ma = merged(a.weights, al.groupsA, U);
  const mb = merged(b.weights, al.groupsB, U);
  const diff = new Float32Array(U * U);
  for (let i = 0; i < diff.length; i++) diff[i] = ma[i] - mb[i];
  return { ...al, U, a: ma, b: mb, diff };
}
