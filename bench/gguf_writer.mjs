// gguf_writer.mjs: a small GGUF writer for the LLM engine bench (bench/llm_engines.mjs): a Hugging Face Llama-layout
// checkpoint (model.safetensors, BF16 / F16 / F32) as a llama.cpp model file at F16 or Q8_0. Layer: bench.
//
// Format: ggml's docs/gguf.md (github.com/ggml-org/ggml, docs/gguf.md, "File Structure", GGUF v3): little-endian;
// header = magic "GGUF", u32 version 3, u64 tensor_count, u64 metadata_kv_count; then the key/value pairs (key =
// gguf_string_t: u64 length + UTF-8 bytes; u32 value type; value; arrays: u32 element type, u64 count, elements);
// then per tensor: name, u32 n_dims, u64 ne[n_dims] (ne[0] the contiguous dimension, so a PyTorch [out, in] Linear
// weight is ne = [in, out]), u32 ggml_type, u64 offset into the data section (a multiple of general.alignment);
// then padding to general.alignment (32) and the tensor data, each tensor padded to the alignment.
// ggml types used: F32 = 0 (norm weights, as convert_hf_to_gguf.py keeps 1-D tensors), F16 = 1, Q8_0 = 8 (blocks of
// 32 weights: f16 scale d = max|x| / 127, then 32 int8 round(x / d); ggml-quants.c quantize_row_q8_0_ref).
// Metadata keys: docs/gguf.md "Standardized key-value pairs" (general.*, [llm].*, tokenizer.ggml.*). Tensor names:
// llama.cpp's LLM_ARCH_LLAMA table (token_embd, blk.N.attn_norm / attn_q / attn_k / attn_v / attn_output / ffn_norm /
// ffn_gate / ffn_up / ffn_down, output_norm; no output.weight when the head is tied to the embedding).
// Q and K rows: llama.cpp rotates adjacent pairs (its "normal" RoPE mode) while Hugging Face's Llama rotates the two
// halves of each head (rotate_half), so the converter permutes the rows of q_proj / k_proj: convert_hf_to_gguf.py,
// LlamaModel.permute(weights, n_head, n_head_kv): reshape(n_head, 2, rows / n_head / 2, in).swapaxes(1, 2) — within
// each head, row i of the first half goes to 2i and row i of the second half to 2i + 1. permuteRows below does that.
// Tokenizer: tokenizer.ggml.model "gpt2" (byte-level BPE) with the checkpoint's vocabulary as a token list: here the
// byte-level, merge-free vocabulary of tests/fixtures/modern (id = byte value in GPT-2's byte alphabet, <s> 256, </s>
// 257), padded to vocab_size with unique placeholder tokens "<|rN|>" (never produced by tokenizing), no BOS added.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

const T = { U16: 2, U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9 };
export const GGML = { F32: 0, F16: 1, Q8_0: 8 };
const ALIGN = 32;

// ---- numbers

const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
/** float -> IEEE half bits, round to nearest even (subnormals included; overflow to ±inf). */
export function f16Bits(x) {
  f32[0] = x;
  const u = u32[0], sign = (u >>> 16) & 0x8000, exp = (u >>> 23) & 0xFF;
  let mant = u & 0x7FFFFF;
  if (exp === 0xFF) return sign | 0x7C00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1F) return sign | 0x7C00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1), rest = mant & ((1 << shift) - 1);
    let h = mant >>> shift;
    if (rest > half || (rest === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h++;  // a carry into the exponent is still correct
  return sign | h;
}

/** Q8_0 blocks of `src` (length a multiple of 32) into `dst` bytes (34 per block). */
export function quantizeQ8_0(src, dst) {
  const dv = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
  for (let b = 0; b < src.length / 32; b++) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(src[b * 32 + j]));
    const d = amax / 127, id = d ? 1 / d : 0;
    dv.setUint16(b * 34, f16Bits(d), true);
    for (let j = 0; j < 32; j++) {
      const v = src[b * 32 + j] * id;
      dv.setInt8(b * 34 + 2 + j, Math.sign(v) * Math.round(Math.abs(v)));  // roundf: half away from zero
    }
  }
}

/** Rows of a [rows, cols] matrix permuted as convert_hf_to_gguf.py's LlamaModel.permute(w, heads, heads_kv). */
export function permuteRows(src, rows, cols, heads) {
  const out = new Float32Array(src.length), per = rows / heads, half = per / 2;
  for (let h = 0; h < heads; h++) {
    for (let r = 0; r < per; r++) {
      // reshape(heads, 2, half, cols).swapaxes(1, 2): new row (i, a) <- old row (a, i)
      const from = h * per + (r % 2) * half + (r >> 1);
      out.set(src.subarray(from * cols, (from + 1) * cols), (h * per + r) * cols);
    }
  }
  return out;
}

// ---- safetensors input

/** { header, dataStart, fd }: the safetensors file's JSON header. */
export function openSafetensors(path) {
  const fd = openSync(path, 'r');
  const len = Buffer.alloc(8);
  readSync(fd, len, 0, 8, 0);
  const n = Number(len.readBigUInt64LE());
  const h = Buffer.alloc(n);
  readSync(fd, h, 0, n, 8);
  return { fd, header: JSON.parse(h.toString('utf8')), dataStart: 8 + n };
}

/** Float32Array of tensor `name` (BF16, F16 or F32). */
export function readTensor(st, name) {
  const e = st.header[name];
  if (!e) throw new Error(`gguf_writer: tensor ${name} is missing from the safetensors file`);
  const [a, b] = e.data_offsets;
  const raw = Buffer.alloc(b - a);
  readSync(st.fd, raw, 0, b - a, st.dataStart + a);
  const n = e.shape.reduce((x, y) => x * y, 1), out = new Float32Array(n);
  if (e.dtype === 'F32') return new Float32Array(raw.buffer, raw.byteOffset, n).slice();
  const u16 = new Uint16Array(raw.buffer, raw.byteOffset, n);
  if (e.dtype === 'BF16') {
    const o32 = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) o32[i] = u16[i] << 16;
  } else if (e.dtype === 'F16') {
    for (let i = 0; i < n; i++) {
      const h = u16[i], s = h & 0x8000 ? -1 : 1, ex = (h >>> 10) & 0x1F, m = h & 0x3FF;
      out[i] = ex === 0 ? s * m * 2 ** -24 : ex === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (ex - 15);
    }
  } else {
    throw new Error(`gguf_writer: ${name} has dtype ${e.dtype} (BF16, F16 or F32 expected)`);
  }
  return out;
}

// ---- GGUF output

class Bytes {
  constructor() { this.parts = []; this.length = 0; }
  push(b) { this.parts.push(b); this.length += b.length; }
  u16(v) { const b = Buffer.alloc(2); b.writeUInt16LE(v); this.push(b); }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  str(s) { const b = Buffer.from(s, 'utf8'); this.u64(b.length); this.push(b); }
  buffer() { return Buffer.concat(this.parts); }
}

function kv(out, key, type, value, elemType) {
  out.str(key);
  out.u32(type);
  const put = (t, v) => {
    if (t === T.U16) out.u16(v);
    else if (t === T.U32) out.u32(v);
    else if (t === T.I32) out.i32(v);
    else if (t === T.F32) out.f32(v);
    else if (t === T.BOOL) out.push(Buffer.from([v ? 1 : 0]));
    else if (t === T.STRING) out.str(v);
    else throw new Error(`gguf_writer: value type ${t}`);
  };
  if (type === T.ARRAY) {
    out.u32(elemType);
    out.u64(value.length);
    for (const v of value) put(elemType, v);
  } else {
    put(type, value);
  }
}

/** GPT-2's byte alphabet: the character standing for each byte value 0..255. */
export function byteAlphabet() {
  // GPT-2's byte alphabet (bytes_to_unicode in openai/gpt-2 encoder.py; tokenizers' ByteLevel)
  const bs = [];
  for (let i = 33; i <= 126; i++) bs.push(i);
  for (let i = 161; i <= 172; i++) bs.push(i);
  for (let i = 174; i <= 255; i++) bs.push(i);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
  const map = new Array(256);
  bs.forEach((b, i) => { map[b] = String.fromCodePoint(cs[i]); });
  return map;
}

/** The vocabulary: 256 byte tokens, <s>, </s>, then placeholders "<|rN|>" up to vocabSize. */
export function byteVocab(vocabSize) {
  const tokens = byteAlphabet().concat(['<s>', '</s>']);
  const types = tokens.map((_, i) => (i >= 256 ? 3 : 1));  // 1 normal, 3 control
  for (let i = tokens.length; i < vocabSize; i++) { tokens.push(`<|r${i}|>`); types.push(1); }
  return { tokens, types };
}

/**
 * Writes `out` (a .gguf path) from the Hugging Face Llama checkpoint `safetensors` + `config` (config.json object)
 * with the 2-D weights at `type` ('F16' or 'Q8_0'). `maxBytes` > 0 cuts the tensors into files of at most that many
 * bytes of data (gguf-split's layout: wllama reads no file over 2 GB, an ArrayBuffer's limit). Returns { bytes,
 * tensors, paths } (paths: the files written, in order).
 */
export function writeLlamaGguf({ safetensors, config: c, out, type, maxBytes = 0 }) {
  if (type !== 'F16' && type !== 'Q8_0') throw new Error(`writeLlamaGguf: type '${type}' (F16 or Q8_0)`);
  const st = openSafetensors(safetensors);
  const hd = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const { tokens, types } = byteVocab(c.vocab_size);
  const meta = new Bytes();
  let nkv = 0;
  const add = (...a) => { kv(meta, ...a); nkv++; };
  add('general.architecture', T.STRING, 'llama');
  add('general.name', T.STRING, 'attnscope bench random llama');
  add('general.alignment', T.U32, ALIGN);
  add('general.file_type', T.U32, type === 'F16' ? 1 : 7);  // LLAMA_FTYPE_MOSTLY_F16 / MOSTLY_Q8_0
  add('llama.vocab_size', T.U32, c.vocab_size);
  add('llama.context_length', T.U32, c.max_position_embeddings);
  add('llama.embedding_length', T.U32, c.hidden_size);
  add('llama.block_count', T.U32, c.num_hidden_layers);
  add('llama.feed_forward_length', T.U32, c.intermediate_size);
  add('llama.attention.head_count', T.U32, c.num_attention_heads);
  add('llama.attention.head_count_kv', T.U32, c.num_key_value_heads);
  add('llama.attention.key_length', T.U32, hd);
  add('llama.attention.value_length', T.U32, hd);
  add('llama.rope.freq_base', T.F32, c.rope_theta);
  add('llama.rope.dimension_count', T.U32, hd);
  add('llama.attention.layer_norm_rms_epsilon', T.F32, c.rms_norm_eps);
  add('tokenizer.ggml.model', T.STRING, 'gpt2');
  add('tokenizer.ggml.pre', T.STRING, 'default');
  add('tokenizer.ggml.tokens', T.ARRAY, tokens, T.STRING);
  add('tokenizer.ggml.token_type', T.ARRAY, types, T.I32);
  add('tokenizer.ggml.merges', T.ARRAY, [], T.STRING);
  add('tokenizer.ggml.bos_token_id', T.U32, 256);
  add('tokenizer.ggml.eos_token_id', T.U32, 257);
  add('tokenizer.ggml.add_bos_token', T.BOOL, false);
  add('tokenizer.ggml.add_eos_token', T.BOOL, false);

  // [gguf name, hf name, 'norm' | 'matrix', heads to permute for]
  const list = [['token_embd.weight', 'model.embed_tokens.weight'], ['output_norm.weight', 'model.norm.weight']];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`, b = `blk.${l}.`;
    list.push([`${b}attn_norm.weight`, `${p}input_layernorm.weight`],
      [`${b}attn_q.weight`, `${p}self_attn.q_proj.weight`, c.num_attention_heads],
      [`${b}attn_k.weight`, `${p}self_attn.k_proj.weight`, c.num_key_value_heads],
      [`${b}attn_v.weight`, `${p}self_attn.v_proj.weight`], [`${b}attn_output.weight`, `${p}self_attn.o_proj.weight`],
      [`${b}ffn_norm.weight`, `${p}post_attention_layernorm.weight`], [`${b}ffn_gate.weight`, `${p}mlp.gate_proj.weight`],
      [`${b}ffn_up.weight`, `${p}mlp.up_proj.weight`], [`${b}ffn_down.weight`, `${p}mlp.down_proj.weight`]);
  }
  if (c.tie_word_embeddings === false) list.push(['output.weight', 'lm_head.weight']);

  // the tensors, cut into files of at most maxBytes of data when asked (llama.cpp's gguf-split layout, below)
  const plan = [];
  for (const [name, hf, heads] of list) {
    const shape = st.header[hf]?.shape;
    if (!shape) throw new Error(`writeLlamaGguf: tensor ${hf} is missing from ${safetensors}`);
    const n = shape.reduce((x, y) => x * y, 1);
    const ggml = shape.length === 1 ? GGML.F32 : GGML[type];
    const bytes = ggml === GGML.F32 ? 4 * n : ggml === GGML.F16 ? 2 * n : (n / 32) * 34;
    if (ggml === GGML.Q8_0 && shape[1] % 32) throw new Error(`writeLlamaGguf: ${hf} rows of ${shape[1]} are not whole Q8_0 blocks`);
    plan.push({ name, hf, heads, shape, ggml, bytes });
  }
  const splits = [[]];
  let size = 0;
  for (const t of plan) {
    const padded = Math.ceil(t.bytes / ALIGN) * ALIGN;
    if (maxBytes && size + padded > maxBytes && splits.at(-1).length) { splits.push([]); size = 0; }
    splits.at(-1).push(t);
    size += padded;
  }
  // gguf-split (llama.cpp tools/gguf-split/gguf-split.cpp, split_strategy): every file is a whole GGUF file with the
  // keys split.no (u16), split.count (u16) and split.tensors.count (i32, all files' tensors); only the first file
  // has the model's metadata; names <prefix>-%05d-of-%05d.gguf (llama_split_path), numbered from 1.
  if (!out.endsWith('.gguf')) throw new Error(`writeLlamaGguf: out '${out}' must end in .gguf`);
  const paths = splits.length === 1 ? [out]
    : splits.map((_, i) => `${out.slice(0, -5)}-${String(i + 1).padStart(5, '0')}-of-${String(splits.length).padStart(5, '0')}.gguf`);
  let total = 0;
  try {
    splits.forEach((tensors, i) => {
      const m = new Bytes();
      let count = 0;
      if (i === 0) { m.push(meta.buffer()); count = nkv; }
      if (splits.length > 1) {
        kv(m, 'split.no', T.U16, i);
        kv(m, 'split.count', T.U16, splits.length);
        kv(m, 'split.tensors.count', T.I32, plan.length);
        count += 3;
      }
      const infos = new Bytes();
      let offset = 0;
      for (const t of tensors) {
        infos.str(t.name);
        infos.u32(t.shape.length);
        for (const d of [...t.shape].reverse()) infos.u64(d);
        infos.u32(t.ggml);
        infos.u64(offset);
        offset += Math.ceil(t.bytes / ALIGN) * ALIGN;
      }
      const head = new Bytes();
      head.push(Buffer.from('GGUF', 'latin1'));
      head.u32(3);
      head.u64(tensors.length);
      head.u64(count);
      const pre = Buffer.concat([head.buffer(), m.buffer(), infos.buffer()]);
      const fd = openSync(paths[i], 'w');
      try {
        writeSync(fd, pre);
        writeSync(fd, Buffer.alloc((ALIGN - (pre.length % ALIGN)) % ALIGN));
        for (const t of tensors) writeTensor(fd, st, t);
      } finally {
        closeSync(fd);
      }
      total += Math.ceil(pre.length / ALIGN) * ALIGN + offset;
    });
  } finally {
    closeSync(st.fd);
  }
  return { bytes: total, tensors: list.length, paths };
}

function writeTensor(fd, st, t) {
  let v = readTensor(st, t.hf);
  if (t.heads) v = permuteRows(v, t.shape[0], t.shape[1], t.heads);
  let buf;
  if (t.ggml === GGML.F32) buf = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  else if (t.ggml === GGML.F16) {
    const h = new Uint16Array(v.length);
    for (let i = 0; i < v.length; i++) h[i] = f16Bits(v[i]);
    buf = Buffer.from(h.buffer);
  } else {
    buf = Buffer.alloc(t.bytes);
    quantizeQ8_0(v, buf);
  }
  writeSync(fd, buf);
  writeSync(fd, Buffer.alloc(Math.ceil(t.bytes / ALIGN) * ALIGN - t.bytes));
}
