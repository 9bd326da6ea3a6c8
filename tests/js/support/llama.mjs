import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { headerBytes, headerOf, layout } from './safetensors.mjs';

// The tensors of a Hugging Face Llama checkpoint (LlamaForCausalLM's state dict) for a config.json object, as
// [name, shape] in one order: embedding, final norm, lm_head when the head is untied, then each layer's norms,
// attention and MLP. PyTorch Linear weights are [out, in]; head_dim defaults to hidden_size / num_attention_heads.
// Shared by the tests and benches that write random Llama-shaped checkpoints at run time (with ./safetensors.mjs).
export function llamaTensors(c) {
  const d = c.hidden_size, f = c.intermediate_size, hd = c.head_dim ?? d / c.num_attention_heads;
  const q = c.num_attention_heads * hd, kv = c.num_key_value_heads * hd;
  const out = [['model.embed_tokens.weight', [c.vocab_size, d]], ['model.norm.weight', [d]]];
  if (c.tie_word_embeddings === false) out.push(['lm_head.weight', [c.vocab_size, d]]);
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    out.push([`${p}input_layernorm.weight`, [d]], [`${p}post_attention_layernorm.weight`, [d]],
      [`${p}self_attn.q_proj.weight`, [q, d]], [`${p}self_attn.k_proj.weight`, [kv, d]],
      [`${p}self_attn.v_proj.weight`, [kv, d]], [`${p}self_attn.o_proj.weight`, [d, q]],
      [`${p}mlp.gate_proj.weight`, [f, d]], [`${p}mlp.up_proj.weight`, [f, d]], [`${p}mlp.down_proj.weight`, [d, f]]);
  }
  return out;
}

/**
 * A whole safetensors file of config `c`'s Llama tensors in `dtype` ('BF16' or 'F32'): seeded uniform values in
 * ±scale/2 (an LCG from `seed`), norm weights 1.
 */
export function llamaCheckpoint(c, { dtype = 'BF16', seed = 7, scale = 0.04 } = {}) {
  const tensors = llamaTensors(c);
  const file = layout(tensors.map(([name, shape]) => ({ name, dtype, shape })));
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  const out = dtype === 'BF16'
    ? new Uint16Array(file.data.buffer, file.data.byteOffset, file.data.byteLength / 2)
    : new Float32Array(file.data.buffer, file.data.byteOffset, file.data.byteLength / 4);
  let s = seed;
  let at = 0;
  for (const [name, shape] of tensors) {
    const count = shape.reduce((x, y) => x * y, 1);
    for (let i = 0; i < count; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      f[0] = name.endsWith('norm.weight') ? 1 : (s / 2 ** 32 - 0.5) * scale;
      out[at++] = dtype === 'BF16' ? u[0] >>> 16 : f[0];
    }
  }
  return file.bytes;
}

/**
 * Writes to `path` a BF16 safetensors file of config `c`'s Llama tensors whose matrices are all zero and left as
 * holes (a sparse file: a 1B-shaped checkpoint of GBs is written in milliseconds and takes no disk), norm weights 1.
 * Returns its size in bytes. For tests of reading big files, not of numbers.
 */
export function sparseLlamaCheckpoint(path, c) {
  const { header, offsets, size } = headerOf(llamaTensors(c).map(([name, shape]) => ({ name, dtype: 'BF16', shape })));
  const head = headerBytes(header);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head, 0, head.length, 0);
    for (const [name, shape] of llamaTensors(c)) {
      if (shape.length !== 1) continue;
      const ones = new Uint16Array(shape[0]).fill(0x3F80); // BF16 1.0
      writeSync(fd, new Uint8Array(ones.buffer), 0, ones.byteLength, head.length + offsets.get(name)[0]);
    }
    ftruncateSync(fd, head.length + size);
  } finally {
    closeSync(fd);
  }
  return head.length + size;
}
