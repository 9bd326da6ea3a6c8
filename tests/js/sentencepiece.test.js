// sentencepiece.test.js: as.loadTokenizer on SentencePiece model files (API.md "Encoder–decoder checkpoints", the
// tokenizer bullet). References: Debian's python3-sentencepiece 0.1.97 (ids written by
// tests/fixtures/sentencepiece/generate.py for six small trained models, and transformers' T5Tokenizer /
// MarianTokenizer rules over it), and @huggingface/tokenizers for the T5-layout tokenizer.json (Unigram + Precompiled
// + Metaspace) the generator writes. Every string must agree; the counts are in the test names' output.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';

const as = await createAttnScope({ simd: process.env.ATTNSCOPE_SIMD === 'false' ? false : 'auto', threads: 1 });
const DIR = new URL('../fixtures/sentencepiece/', import.meta.url);
const bytes = (name) => new Uint8Array(readFileSync(new URL(name, DIR)));
const json = (name) => JSON.parse(readFileSync(new URL(name, DIR), 'utf8'));
const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

let Reference = null;
try {
  ({ Tokenizer: Reference } = await import('@huggingface/tokenizers'));
} catch {
  Reference = null;
}

const MODELS = ['unigram_nfkc', 'bpe_nfkc', 'unigram_identity', 'bpe_identity', 'unigram_custom_bytes', 'bpe_identity_bytes'];
// T5Tokenizer keeps these whole, so sentencepiece's own ids differ on texts that contain them (t5_expected covers them).
const T5_SPECIAL = /<\/s>|<unk>|<pad>|<extra_id_/;

for (const name of MODELS) {
  test(`sentencepiece: ${name}.model ids equal python3-sentencepiece's`, (t) => {
    const doc = json(`${name}.json`);
    const tok = as.loadTokenizer({ sentencepiece: bytes(`${name}.model`) });
    let agree = 0;
    let n = 0;
    for (let i = 0; i < doc.strings.length; i++) {
      if (T5_SPECIAL.test(doc.strings[i])) continue;
      n++;
      const got = tok.encode(doc.strings[i], { addSpecialTokens: false });
      assert.equal(got.tokens.length, got.ids.length);
      assert.equal(got.offsets.length, 2 * got.ids.length);
      if (same(Array.from(got.ids), doc.ids[i])) agree++;
      else t.diagnostic(`${JSON.stringify(doc.strings[i])}: ${JSON.stringify(Array.from(got.ids))} != ${JSON.stringify(doc.ids[i])}`);
    }
    t.diagnostic(`${name}: ${agree} / ${n} agree`);
    assert.ok(n >= 550, `${n} strings`);
    assert.equal(agree, n);
    tok.delete();
  });
}

function checkExpected(t, tok, doc, what) {
  let agreeIds = 0;
  let agreeText = 0;
  for (let i = 0; i < doc.strings.length; i++) {
    const ids = Array.from(tok.encode(doc.strings[i]).ids);
    if (same(ids, doc.ids[i])) agreeIds++;
    else t.diagnostic(`${what} ${JSON.stringify(doc.strings[i])}: ${JSON.stringify(ids)} != ${JSON.stringify(doc.ids[i])}`);
    if (tok.decode(doc.ids[i]) === doc.decoded[i]) agreeText++;
  }
  t.diagnostic(`${what}: ids ${agreeIds} / ${doc.strings.length}, decode ${agreeText} / ${doc.strings.length}`);
  assert.equal(agreeIds, doc.strings.length);
  assert.equal(agreeText, doc.strings.length);
}

test('sentencepiece: T5 spiece.model gives T5Tokenizer ids (</s> appended, specials and <extra_id_n> whole)', (t) => {
  const tok = as.loadTokenizer({ sentencepiece: bytes('unigram_nfkc.model').buffer });
  assert.equal(tok.vocabSize, 900);
  const hello = tok.encode('The <extra_id_0> dog');
  assert.deepEqual(hello.tokens.slice(1, 2), ['<extra_id_0>']);
  assert.equal(hello.tokens.at(-1), '</s>');
  checkExpected(t, tok, json('t5_expected.json'), 't5');
  tok.delete();
});

test('sentencepiece: Marian source.spm / target.spm + vocab.json give MarianTokenizer ids; a missing piece is <unk>', (t) => {
  const doc = json('marian_expected.json');
  const vocabText = readFileSync(new URL('marian_vocab.json', DIR), 'utf8');
  for (const vocab of [vocabText, JSON.parse(vocabText)]) {
    const tok = as.loadTokenizer({ source: bytes(doc.source), target: bytes(doc.target), vocab });
    checkExpected(t, tok, doc, 'marian');
    // '▁you' was left out of vocab.json: the source model still gives the piece, and its id is <unk>'s (1)
    const you = tok.encode('you', { addSpecialTokens: false });
    assert.deepEqual(you.tokens, ['\u2581you']);
    assert.deepEqual(Array.from(you.ids), [1]);
    assert.deepEqual(Array.from(tok.encode('>>zh<< 城市').ids).slice(0, 1), [JSON.parse(vocabText)['>>zh<<']]);
    tok.delete();
  }
});

test('sentencepiece: T5-layout tokenizer.json (Unigram, Precompiled, WhitespaceSplit + Metaspace) vs @huggingface/tokenizers',
  { skip: Reference === null ? '@huggingface/tokenizers is not installed (npm install)' : false }, (t) => {
    const file = json('t5_unigram_tokenizer.json');
    const ref = new Reference(file, {});
    const tok = as.loadTokenizer(file);
    const doc = json('unigram_nfkc.json');
    // @huggingface/tokenizers 0.2.0's Precompiled normalizer does not read the charsmap: it removes and maps a fixed
    // set of control and space characters and applies String.prototype.normalize('NFKC'). Strings with those
    // characters are checked against python3-sentencepiece instead (its ids + </s>: what the charsmap gives).
    const APPROXIMATED = /[\u0000-\u001F\u007F-\u009F\u00A0\u1680\u2000-\u200F\u2028\u2029\u202F\u205F\u2581\u3000\uFEFF\uFFFD\uFF5E]/u;
    let agreeRef = 0;
    let nRef = 0;
    let agreeSpm = 0;
    let nSpm = 0;
    for (let i = 0; i < doc.strings.length; i++) {
      const s = doc.strings[i];
      const ids = Array.from(tok.encode(s).ids);
      if (!APPROXIMATED.test(s)) {
        nRef++;
        const want = ref.encode(s).ids;
        if (same(ids, want)) agreeRef++;
        else t.diagnostic(`tokenizers ${JSON.stringify(s)}: ${JSON.stringify(ids)} != ${JSON.stringify(want)}`);
      } else {
        nSpm++;
        const want = [...doc.ids[i], 2];
        if (same(ids, want)) agreeSpm++;
        else t.diagnostic(`sentencepiece ${JSON.stringify(s)}: ${JSON.stringify(ids)} != ${JSON.stringify(want)}`);
      }
    }
    t.diagnostic(`@huggingface/tokenizers: ${agreeRef} / ${nRef}; python3-sentencepiece (+ </s>): ${agreeSpm} / ${nSpm}`);
    assert.ok(nRef >= 400);
    assert.equal(agreeRef, nRef);
    assert.equal(agreeSpm, nSpm);
    // the Metaspace decoder
    assert.equal(tok.decode(ref.encode('the quick brown fox').ids), 'the quick brown fox</s>');
    tok.delete();
  });

test('sentencepiece: bad files and arguments give errors naming them; the module keeps working', () => {
  const good = bytes('unigram_identity.model');
  assert.throws(() => as.loadTokenizer({ sentencepiece: good.subarray(0, good.length >> 1) }),
    { name: 'Error', message: /^loadTokenizer: tokenizer\.sentencepiece is truncated or malformed in pieces\[\d+\]/ });
  assert.throws(() => as.loadTokenizer({ sentencepiece: new TextEncoder().encode('not a model file') }),
    { name: 'Error', message: /^loadTokenizer: tokenizer\.sentencepiece / });
  assert.throws(() => as.loadTokenizer({ sentencepiece: new Uint8Array(0) }),
    { name: 'Error', message: 'loadTokenizer: tokenizer.sentencepiece is empty (a SentencePiece model file was expected)' });
  assert.throws(() => as.loadTokenizer({ sentencepiece: 'spiece.model' }),
    { name: 'TypeError', message: 'loadTokenizer: tokenizer.sentencepiece must be a Uint8Array or an ArrayBuffer (the file\'s bytes), got string' });
  assert.throws(() => as.loadTokenizer({ sentencepiece: good, vocab: '{}' }),
    { name: 'TypeError', message: "loadTokenizer: unknown option 'tokenizer.vocab' (sentencepiece)" });
  assert.throws(() => as.loadTokenizer({ source: good, target: good.subarray(0, 100), vocab: '{"</s>": 0, "<unk>": 1}' }),
    { name: 'Error', message: /^loadTokenizer: tokenizer\.target is truncated/ });
  assert.throws(() => as.loadTokenizer({ source: good, target: good, vocab: '{"</s>": 0}' }),
    { name: 'Error', message: "loadTokenizer: tokenizer.vocab has no '<unk>' (MarianTokenizer needs it)" });
  assert.throws(() => as.loadTokenizer({ source: good, target: good, vocab: 7 }),
    { name: 'TypeError', message: 'loadTokenizer: tokenizer.vocab must be vocab.json (a string or an object), got number' });
  const file = json('t5_unigram_tokenizer.json');
  file.normalizer.precompiled_charsmap = '@@@';
  assert.throws(() => as.loadTokenizer(file),
    { name: 'Error', message: 'loadTokenizer: tokenizerJson.normalizer.precompiled_charsmap is not base64 (character 0)' });
  const tok = as.loadTokenizer({ sentencepiece: good });
  assert.ok(tok.encode('still working').ids.length > 0);
  tok.delete();
});
