// The page's one state object and its URL-hash form (layer: web; tensorflow/playground's state.ts).
// Only values that differ from DEFAULTS go into the hash, so shared links stay short; parse() ignores
// unknown keys and clamps numbers, so a hand-edited hash cannot break the page.

export const EXAMPLE_TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];
export const EXAMPLE_EMBEDDINGS = [
  [0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
  [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55],
];

export const DEFAULTS = Object.freeze({
  mode: 'text', // 'text' | 'example'
  model: 'random', // 'random' (seeded, configured below) | a bundled model's name | 'checkpoint' (the user's files)
  text: 'The animal didn\'t cross the street because it was too tired.',
  source: 'The cat sat on the mat.',
  target: 'Le chat était assis sur le tapis.',
  tokenizer: 'word', // 'word' | 'char' | 'bpe'
  arch: 'encoder', // 'encoder' | 'decoder' (causal) | 'encoder-decoder'
  attention: 'multi', // 'simple' | 'scaled' | 'multi'
  dModel: 16,
  numHeads: 4,
  numLayers: 2,
  dFF: 64,
  normFirst: false,
  activation: 'relu',
  positional: 'sinusoidal', // 'sinusoidal' | 'learned' | 'none'
  base: 10000,
  pePositions: 64,
  seed: 42,
  padding: false,
  padTo: 0, // 0 = next multiple of 8
  layer: 0,
  heads: 'all', // 'all' or comma-separated head indices
  token: 0, // query token of the step-by-step view
  grow: 0, // an encoder–decoder preset's output shown up to this many tokens (0 = all)
  ex: '', // edited worked-example embeddings, 18 numbers comma-separated ('' = the published ones)
  agg: 'heads', // attention panel: 'heads' (one map per head) | 'mean' | 'max' over heads | 'rollout' to this layer
  thr: 0, // hide links with weight below this (0 = show all)
  topk: 0, // keep only the k strongest links per query (0 = all)
  adNq: 3, // additive attention: queries, keys, hidden size, valid keys, seed of inputs and weights
  adNk: 6,
  adHidden: 4,
  adValid: 4,
  adSeed: 1,
  adQ: 0, // the query whose tanh features are shown
  krW: 1, // kernel regression: Gaussian kernel bandwidth w, seed of the training noise
  krSeed: 1,
  lang: '', // UI language: '' follows the browser (web/i18n.js detectLanguage), else 'en' | 'zh-CN'
});

const ENUMS = {
  mode: ['text', 'example'],
  tokenizer: ['word', 'char', 'bpe'],
  arch: ['encoder', 'decoder', 'encoder-decoder'],
  attention: ['simple', 'scaled', 'multi'],
  activation: ['relu', 'gelu'],
  positional: ['sinusoidal', 'learned', 'none'],
  agg: ['heads', 'mean', 'max', 'rollout'],
  lang: ['', 'en', 'zh-CN'],
};
const INTS = {
  dModel: [1, 1024], numHeads: [1, 64], numLayers: [1, 12], dFF: [1, 4096], pePositions: [1, 1024],
  seed: [0, 2 ** 31 - 1], padTo: [0, 1024], layer: [0, 47], token: [0, 4095], grow: [0, 512],
  topk: [0, 4096], adNq: [1, 8], adNk: [1, 8], adHidden: [1, 8], adValid: [0, 8], adQ: [0, 7], adSeed: [0, 2 ** 31 - 1],
  krSeed: [0, 2 ** 31 - 1],
};
const NUMS = { base: [1e-6, 1e12], thr: [0, 1], krW: [0.1, 25] };
/** Every number's [min, max]: the link's clamps, the boxes' checks and index.html's min/max (a test holds them equal). */
export const RANGES = Object.freeze({ ...INTS, ...NUMS });
const BOOLS = ['normFirst', 'padding'];
const STRINGS = ['text', 'source', 'target', 'heads', 'ex', 'model']; // model: checked against the module's list

/** A fresh state from a URL hash (missing or invalid values take the default). */
export function parse(hash) {
  const state = { ...DEFAULTS };
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  for (const [k, v] of p) {
    if (k in ENUMS) { if (ENUMS[k].includes(v)) state[k] = v; }
    else if (k in INTS) {
      const n = Number(v);
      if (Number.isInteger(n)) state[k] = Math.min(INTS[k][1], Math.max(INTS[k][0], n));
    } else if (k in NUMS) {
      const n = Number(v);
      if (Number.isFinite(n)) state[k] = Math.min(NUMS[k][1], Math.max(NUMS[k][0], n));
    } else if (BOOLS.includes(k)) state[k] = v === '1' || v === 'true';
    else if (STRINGS.includes(k)) state[k] = v;
  }
  return state;
}

/** The hash for a state: only what differs from DEFAULTS. */
export function serialize(state) {
  const p = new URLSearchParams();
  for (const k of Object.keys(DEFAULTS)) {
    if (state[k] === DEFAULTS[k]) continue;
    p.set(k, BOOLS.includes(k) ? (state[k] ? '1' : '0') : String(state[k]));
  }
  const q = p.toString();
  return q ? `#${q}` : '';
}

/** Whether `v` is a value `key` may take: in its range, and an integer unless the key is a real number. */
export function inRange(key, v) {
  const [lo, hi] = RANGES[key];
  return (key in INTS ? Number.isInteger(v) : Number.isFinite(v)) && v >= lo && v <= hi;
}

/** Selected head indices for `numHeads` heads. */
export function selectedHeads(state, numHeads) {
  if (state.heads === 'all' || state.heads === '') return [...Array(numHeads).keys()];
  const hs = [...new Set(state.heads.split(',').map(Number))]
    .filter((x) => Number.isInteger(x) && x >= 0 && x < numHeads).sort((a, b) => a - b);
  return hs.length ? hs : [...Array(numHeads).keys()];
}

export function headsString(list, numHeads) {
  return list.length === numHeads ? 'all' : list.join(',');
}

/** The worked example's 6×3 embeddings (edited ones from the hash if valid). */
export function exampleEmbeddings(state) {
  const v = state.ex ? state.ex.split(',').map(Number) : [];
  if (v.length === 18 && v.every(Number.isFinite)) {
    return Array.from({ length: 6 }, (_, i) => v.slice(i * 3, i * 3 + 3));
  }
  return EXAMPLE_EMBEDDINGS.map((r) => [...r]);
}
