// llama1b_checkpoint.mjs: a Llama-3.2-1B-shaped random BF16 checkpoint in Hugging Face layout (hidden 2048, 16
// layers, 32 query heads sharing 8 K/V heads, intermediate 8192, vocab 128256, tied head: 2.47 GB), written at bench
// time to a folder (never committed). Shared by bench/llama1b_bench.mjs (Node) and bench/page_latency.mjs (the page,
// 2,048 tokens). Layer: bench.
import { openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { llamaTensors } from '../tests/js/support/llama.mjs';

export const CFG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: 128256, hidden_size: 2048,
  intermediate_size: 8192, num_hidden_layers: 16, num_attention_heads: 32, num_key_value_heads: 8, head_dim: 64,
  max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 500000.0, hidden_act: 'silu',
  rope_scaling: { rope_type: 'llama3', factor: 32.0, low_freq_factor: 1.0, high_freq_factor: 4.0,
    original_max_position_embeddings: 8192 },
  tie_word_embeddings: true, bos_token_id: 256, eos_token_id: 257, torch_dtype: 'bfloat16',
};

// BF16 bits of float x (round to nearest even).
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
function bf16(x) {
  f32[0] = x;
  const u = u32[0];
  return ((u + 0x7FFF + ((u >>> 16) & 1)) >>> 16) & 0xFFFF;
}

// Writes model.safetensors of `cfg` (default CFG; e.g. fewer layers): matrices uniform in ±0.5/sqrt(in) (so activations stay O(1) through 16 layers), norm
// weights 1. A 16 MiB block of random BF16 values is written over and over at shifting offsets (random enough for a
// speed test, and 2.5 GB are written in seconds).
export function writeCheckpoint(dir, cfg = CFG) {
  const list = llamaTensors(cfg);
  const header = {};
  let off = 0;
  for (const [name, shape] of list) {
    const bytes = shape.reduce((a, b) => a * b, 1) * 2;
    header[name] = { dtype: 'BF16', shape, data_offsets: [off, off + bytes] };
    off += bytes;
  }
  header.__metadata__ = { format: 'pt' };
  let h = Buffer.from(JSON.stringify(header));
  const pad = (8 - (h.length % 8)) % 8;
  h = Buffer.concat([h, Buffer.alloc(pad, 0x20)]);
  const path = join(dir, 'model.safetensors');
  const fd = openSync(path, 'w');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  writeSync(fd, len);
  writeSync(fd, h);
  const BLOCK = 8 << 20;  // values
  const rnd = new Uint16Array(BLOCK + 4096);
  let s = 12345;
  for (let i = 0; i < rnd.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    rnd[i] = bf16(((s >>> 8) / 16777216 - 0.5) * 2);  // uniform [-1, 1); scaled per tensor below
  }
  const one = bf16(1.0);
  for (const [name, shape] of list) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (shape.length === 1) {
      writeSync(fd, Buffer.from(new Uint16Array(n).fill(one).buffer));
      continue;
    }
    // scale by 2^-e (an exact BF16 exponent shift) with 2^e ~ 2·sqrt(in)
    const e = Math.round(Math.log2(2 * Math.sqrt(shape[1])));
    const scaled = new Uint16Array(rnd.length);
    for (let i = 0; i < rnd.length; i++) {
      const v = rnd[i], ex = (v >>> 7) & 0xFF;
      scaled[i] = ex > e ? v - (e << 7) : v & 0x8000;
    }
    let done = 0, shift = 0;
    while (done < n) {
      const k = Math.min(BLOCK, n - done);
      writeSync(fd, Buffer.from(scaled.buffer, (shift % 4096) * 2, k * 2));
      done += k;
      shift += 977;
    }
  }
  closeSync(fd);
  return { path, bytes: 8 + h.length + off };
}

