// A random Marian-shaped checkpoint made at test time (not a test file itself): the layout of
// tests/fixtures/encdec/marian-f32 (Hugging Face's MarianMTModel tensor names, written by generate_models.py) with
// the token table and final_logits_bias widened to the 1,081 pieces of tests/fixtures/sentencepiece/marian_vocab.json,
// and Marian's own tokenizer files: source.spm / target.spm (that folder's unigram_nfkc.model / bpe_nfkc.model, the
// pair marian_expected.json checks MarianTokenizer's ids against) and vocab.json. The widened tensors are drawn from
// the page's seeded generator (web/rng.js mulberry32), so every run makes the same file; the others are the fixture's.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../../web/rng.js';

/** A safetensors file as { header, data }. */
function split(bytes) {
  const len = Number(Buffer.from(bytes.buffer, bytes.byteOffset, 8).readBigUInt64LE(0));
  return { header: JSON.parse(Buffer.from(bytes.subarray(8, 8 + len)).toString('utf8')), data: bytes.subarray(8 + len) };
}

/** { header, tensors: [name, Float32Array, shape] } → a safetensors file (header padded to a multiple of 8). */
function join(tensors) {
  const header = {};
  let at = 0;
  for (const [name, values, shape] of tensors) {
    header[name] = { dtype: 'F32', shape, data_offsets: [at, at + 4 * values.length] };
    at += 4 * values.length;
  }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const out = Buffer.alloc(8 + h.length + at);
  out.writeBigUInt64LE(BigInt(h.length), 0);
  out.write(h, 8, 'utf8');
  let p = 8 + h.length;
  for (const [, values] of tensors) {
    Buffer.from(values.buffer, values.byteOffset, values.byteLength).copy(out, p);
    p += values.byteLength;
  }
  return out;
}

/**
 * The checkpoint's files as playwright's setInputFiles takes them ({ name, mimeType, buffer }) and the same as
 * loadPretrained's arguments ({ config, weights, tokenizer: { source, target, vocab }, generationConfig }).
 * `endBias`: final_logits_bias of the end token (0), so that greedy decoding ends after a few tokens.
 */
export function marianShaped(root, { seed = 26, endBias = 5 } = {}) {
  const enc = path.join(root, 'tests', 'fixtures', 'encdec', 'marian-f32');
  const spm = path.join(root, 'tests', 'fixtures', 'sentencepiece');
  const vocabText = readFileSync(path.join(spm, 'marian_vocab.json'), 'utf8');
  const vocab = JSON.parse(vocabText);
  const V = Object.keys(vocab).length; // 1081: ids 0 … 1080, '<pad>' last as in opus-mt's vocab.json
  const config = {
    ...JSON.parse(readFileSync(path.join(enc, 'config.json'), 'utf8')),
    vocab_size: V, pad_token_id: vocab['<pad>'], eos_token_id: vocab['</s>'], bos_token_id: vocab['</s>'],
    decoder_start_token_id: vocab['<pad>'], max_position_embeddings: 256,
  };
  const generation = { decoder_start_token_id: vocab['<pad>'], eos_token_id: vocab['</s>'], num_beams: 3 };
  const { header, data } = split(readFileSync(path.join(enc, 'model.safetensors')));
  const rand = mulberry32(seed);
  const tensors = [];
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (e.dtype !== 'F32') throw new Error(`marianShaped: ${name} is ${e.dtype}, expected F32`);
    const old = new Float32Array(data.buffer.slice(data.byteOffset + e.data_offsets[0], data.byteOffset + e.data_offsets[1]));
    if (!e.shape.includes(260)) {
      tensors.push([name, old, e.shape]);
      continue;
    }
    const shape = e.shape.map((d) => (d === 260 ? V : d));
    const values = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name === 'final_logits_bias') values[vocab['</s>']] = endBias;
    else for (let k = 0; k < values.length; k++) values[k] = (rand() * 2 - 1) * 0.8;
    tensors.push([name, values, shape]);
  }
  const weights = join(tensors);
  const source = readFileSync(path.join(spm, 'unigram_nfkc.model'));
  const target = readFileSync(path.join(spm, 'bpe_nfkc.model'));
  const file = (name, buffer) => ({ name, mimeType: 'application/octet-stream', buffer });
  return {
    files: [file('config.json', Buffer.from(JSON.stringify(config))), file('model.safetensors', weights),
      file('source.spm', source), file('target.spm', target), file('vocab.json', Buffer.from(vocabText)),
      file('generation_config.json', Buffer.from(JSON.stringify(generation)))],
    load: {
      config: JSON.stringify(config), weights: new Uint8Array(weights),
      tokenizer: { source: new Uint8Array(source), target: new Uint8Array(target), vocab: vocabText },
      generationConfig: JSON.stringify(generation),
    },
    config,
  };
}
