// marian_target.test.js: a Marian checkpoint's target text is tokenized with target.spm, as transformers'
// MarianTokenizer does for text_target (_switch_to_target_mode: current_spm = spm_target, the shared vocab.json
// kept), while the source text reads source.spm. Reference: tests/fixtures/sentencepiece/generate.py's
// marian_expected(target=True) over Debian's python3-sentencepiece (source unigram_nfkc.model and target
// bpe_nfkc.model: two different models, so the sides' ids differ on about a third of the strings). The checkpoint is
// tests/fixtures/encdec/marian-f32 with its vocabulary rows repeated up to vocab.json's size (only ids are checked).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { SIMD } from './helpers.js';

const as = await createAttnScope({ simd: SIMD, threads: 1 });
const SPM = new URL('../fixtures/sentencepiece/', import.meta.url);
const ENCDEC = new URL('../fixtures/encdec/marian-f32/', import.meta.url);
const doc = JSON.parse(readFileSync(new URL('marian_expected.json', SPM), 'utf8'));
const vocabText = readFileSync(new URL('marian_vocab.json', SPM), 'utf8');
const bytes = (url) => new Uint8Array(readFileSync(url));

// marian-f32's safetensors with every [.., 260] vocabulary axis grown to `size` (row i copies row i % 260).
function grownWeights(size) {
  const file = bytes(new URL('model.safetensors', ENCDEC));
  const len = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + len)));
  const data = file.subarray(8 + len);
  const parts = [];
  let at = 0;
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    let chunk = data.subarray(e.data_offsets[0], e.data_offsets[1]);
    const axis = e.shape.indexOf(260);
    if (axis >= 0) {
      assert.equal(e.dtype, 'F32');
      const inner = e.shape.slice(axis + 1).reduce((a, b) => a * b, 1) * 4;
      const grown = new Uint8Array(size * inner);
      for (let i = 0; i < size; i++) grown.set(chunk.subarray((i % 260) * inner, (i % 260 + 1) * inner), i * inner);
      chunk = grown;
      e.shape[axis] = size;
    }
    e.data_offsets = [at, at + chunk.length];
    at += chunk.length;
    parts.push(chunk);
  }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const hb = new TextEncoder().encode(h);
  const out = new Uint8Array(8 + hb.length + at);
  new DataView(out.buffer).setBigUint64(0, BigInt(hb.length), true);
  out.set(hb, 8);
  let p = 8 + hb.length;
  for (const c of parts) {
    out.set(c, p);
    p += c.length;
  }
  return out;
}

test('Marian: run({ source, target }) reads the source with source.spm and the target with target.spm (MarianTokenizer text_target)', async (t) => {
  const size = Object.keys(JSON.parse(vocabText)).length;
  const config = { ...JSON.parse(readFileSync(new URL('config.json', ENCDEC), 'utf8')), vocab_size: size };
  const model = await as.loadPretrained({
    config: JSON.stringify(config),
    weights: grownWeights(size),
    tokenizer: { source: bytes(new URL(doc.source, SPM)), target: bytes(new URL(doc.target, SPM)), vocab: vocabText },
  });
  try {
    const start = config.decoder_start_token_id;
    let agreeSource = 0; let agreeTarget = 0; let differ = 0; let n = 0;
    for (let i = 0; i < doc.strings.length; i++) {
      const s = doc.strings[i];
      // the decoder reads [decoder_start] + the target's ids without special tokens; an empty source is not run
      if (s.trim() === '' || doc.targetIds[i].length === 0 || doc.ids[i].length > config.max_position_embeddings
        || doc.targetIds[i].length + 1 > config.max_position_embeddings) continue;
      n++;
      const r = model.run({ source: s, target: s }, { trace: 'none', topK: 0 });
      const src = Array.from(r.source.ids);
      const tgt = Array.from(r.ids);
      if (JSON.stringify(src) === JSON.stringify(doc.ids[i])) agreeSource++;
      else t.diagnostic(`source ${JSON.stringify(s)}: ${JSON.stringify(src)} != ${JSON.stringify(doc.ids[i])}`);
      if (JSON.stringify(tgt) === JSON.stringify([start, ...doc.targetIds[i]])) agreeTarget++;
      else t.diagnostic(`target ${JSON.stringify(s)}: ${JSON.stringify(tgt)} != ${JSON.stringify([start, ...doc.targetIds[i]])}`);
      if (JSON.stringify(doc.ids[i].slice(0, -1)) !== JSON.stringify(doc.targetIds[i])) differ++;
    }
    t.diagnostic(`Marian sides: source ${agreeSource} / ${n}, target ${agreeTarget} / ${n} agree; the sides differ on ${differ}`);
    assert.ok(n >= 400, `${n} strings`);
    assert.ok(differ >= 100, `the two models must differ on many strings (${differ})`);
    assert.equal(agreeSource, n);
    assert.equal(agreeTarget, n);
  } finally {
    model.delete();
  }
});
