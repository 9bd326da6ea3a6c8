// marian_bench.mjs: generation speed of a Marian-base-shaped encoder-decoder checkpoint (opus-mt-* sizes: d_model
// 512, 6 + 6 layers, 8 heads, FFN 2048, vocabulary 65001, random F16 weights built in memory in Hugging Face's
// layout) through the public `as.loadPretrained` / `model.generate`, at 1 and 2 threads (issue 26). Layer: bench
// (never asserts time). Run: `node bench/marian_bench.mjs [--tokens N] [--beams B]`; each thread count runs in its
// own process (`--threads N` is the child's). Method: one warm-up, then 5 timed runs, medians; random weights
// never produce the end token, so every run decodes exactly N tokens.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { byteAlphabet } from './gguf_writer.mjs';

const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const tokens = Number(arg('tokens', '32'));
const beams = Number(arg('beams', '1'));

if (arg('threads', null) === null) {
  console.log(`marian_bench: d 512, 6+6 layers, 8 heads, FFN 2048, vocab 65001; ${tokens} new tokens, numBeams ${beams}; medians of 5`);
  for (const threads of [1, 2]) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...argv, '--threads', String(threads)], { stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  process.exit(0);
}

const { createAttnScope } = await import('attnscope');
const threads = Number(arg('threads', '1'));
const D = 512, F = 2048, V = 65001, L = 6, H = 8, P = 512;

// F16 bits of a random value with |x| in [2^-10, 2^-1) (sign, exponent 5..13, mantissa from a 32-bit LCG): integer
// work only, so that building the 154 MB file takes seconds (the distribution does not matter for speed)
let state = 12345;
function half() {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return ((state >>> 31) << 15) | ((5 + ((state >>> 10) % 9)) << 10) | (state & 1023);
}

function checkpoint() {
  const t = [];
  const add = (name, shape, fill = null) => t.push({ name, shape, fill });
  add('model.shared.weight', [V, D]);
  add('final_logits_bias', [1, V]);
  for (const stack of ['encoder', 'decoder']) {
    for (let i = 0; i < L; i++) {
      const p = `model.${stack}.layers.${i}.`;
      for (const a of stack === 'decoder' ? ['self_attn', 'encoder_attn'] : ['self_attn']) {
        for (const w of ['q_proj', 'k_proj', 'v_proj', 'out_proj']) {
          add(`${p}${a}.${w}.weight`, [D, D]);
          add(`${p}${a}.${w}.bias`, [D]);
        }
        add(`${p}${a}_layer_norm.weight`, [D], 1);
        add(`${p}${a}_layer_norm.bias`, [D], 0);
      }
      add(`${p}fc1.weight`, [F, D]);
      add(`${p}fc1.bias`, [F]);
      add(`${p}fc2.weight`, [D, F]);
      add(`${p}fc2.bias`, [D]);
      add(`${p}final_layer_norm.weight`, [D], 1);
      add(`${p}final_layer_norm.bias`, [D], 0);
    }
  }
  const header = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const e of t) {
    const n = e.shape.reduce((a, b) => a * b, 1);
    header[e.name] = { dtype: 'F16', shape: e.shape, data_offsets: [at, at + 2 * n] };
    at += 2 * n;
  }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const out = new Uint8Array(8 + h.length + at);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(new TextEncoder().encode(h), 8);
  const data = new Uint16Array(out.buffer, 8 + h.length, at / 2);
  let k = 0;
  for (const e of t) {
    const n = e.shape.reduce((a, b) => a * b, 1);
    const one = e.fill === 1 ? 0x3c00 : 0;
    for (let i = 0; i < n; i++) data[k++] = e.fill !== null ? one : half();
  }
  return out;
}

// byte-level BPE (id = byte), then <pad> 256, </s> 257, <s> 258, <unk> 259; source template "$A </s>"
function tokenizer() {
  const vocab = {};
  byteAlphabet().forEach((ch, b) => { vocab[ch] = b; });
  const names = ['<pad>', '</s>', '<s>', '<unk>'];
  names.forEach((t, i) => { vocab[t] = 256 + i; });
  return {
    version: '1.0', truncation: null, padding: null, normalizer: null,
    added_tokens: names.map((content, i) => ({ id: 256 + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'TemplateProcessing', single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [], special_tokens: { '</s>': { id: '</s>', ids: [257], tokens: ['</s>'] } } },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: [] },
  };
}

const config = {
  model_type: 'marian', d_model: D, encoder_layers: L, decoder_layers: L, encoder_attention_heads: H,
  decoder_attention_heads: H, encoder_ffn_dim: F, decoder_ffn_dim: F, vocab_size: V, max_position_embeddings: P,
  activation_function: 'swish', scale_embedding: true, pad_token_id: 65000, decoder_start_token_id: 65000,
  eos_token_id: 0,
};
const as = await createAttnScope({ threads });
const t0 = performance.now();
const model = await as.loadPretrained({ config, weights: checkpoint(), tokenizer: tokenizer() });
const loadMs = performance.now() - t0;
const source = 'The quick brown fox jumps over the lazy dog near the river bank.';
const medianOf = (fn) => {
  fn();  // warm-up
  const ms = [];
  for (let i = 0; i < 5; i++) {
    const s = performance.now();
    fn();
    ms.push(performance.now() - s);
  }
  return [...ms].sort((a, b) => a - b)[2];
};
const first = model.generate(source, { maxNewTokens: tokens, numBeams: beams });
const all = medianOf(() => model.generate(source, { maxNewTokens: tokens, numBeams: beams }));
const encode = medianOf(() => model.generate(source, { maxNewTokens: 0 }));  // the encoder over the source only
const n = first.ids.length;
console.log(`threads ${as.threads}: ${n} tokens in ${all.toFixed(0)} ms (median; the encoder over the ` +
  `${source.length + 1}-token source ${encode.toFixed(0)} ms of it), decoding ${((all - encode) / n).toFixed(1)} ms/token = ` +
  `${(n / ((all - encode) / 1000)).toFixed(1)} tokens/s; load ${loadMs.toFixed(0)} ms (checkpoint built in JS, F16 → F32)`);
model.delete();
