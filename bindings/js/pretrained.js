// `as.loadPretrained({ config, weights, tokenizer, generationConfig, onProgress })`: a Hugging Face GPT-2, BERT or
// decoder-only (Llama, Mistral, Qwen2/3, Gemma 1/2/3, Phi-3) checkpoint (API.md "Pretrained checkpoints", "Modern
// decoder checkpoints"); `weights` may be the shards of model.safetensors.index.json, in any order. Layer: bindings/js. Checks JS types and unknown keys only; the C++ core
// (src/model/hf_checkpoint.h) checks the files. The weights go to wasm in chunks — from a Blob/File read slice
// by slice, or from a Uint8Array/ArrayBuffer already in memory — so the file never exists twice in full.
import { createOrThrow, fail, unwrap } from './errors.js';
import { Model } from './model.js';
import { isPlainObject, typeName } from './validate.js';

const FN = 'loadPretrained';
const CHUNK = 8 << 20;                 // bytes per feed

const isBlob = (v) => typeof Blob !== 'undefined' && v instanceof Blob;

function jsonText(name, v) {
  if (typeof v === 'string') return v;
  if (isPlainObject(v)) return JSON.stringify(v);
  return fail('TypeError', `${FN}: ${name} must be a string or an object (the parsed JSON), got ${typeName(v)}`);
}

// tokenizer.json (text or object) | { vocab, merges } (GPT-2 files) | { vocab, lowercase } (BERT vocab.txt)
function tokenizerArg(v) {
  if (v === undefined || v === null) fail('TypeError', `${FN}: tokenizer is required`);
  if (typeof v === 'string') return { json: v };
  if (!isPlainObject(v)) fail('TypeError', `${FN}: tokenizer must be tokenizer.json (string or object), { vocab, merges } or { vocab, lowercase }, got ${typeName(v)}`);
  if (v.model !== undefined || v.vocab === undefined) return { json: JSON.stringify(v) };
  for (const key of Object.keys(v)) {
    if (!['vocab', 'merges', 'lowercase'].includes(key)) fail('TypeError', `${FN}: unknown option 'tokenizer.${key}'`);
  }
  if (v.merges !== undefined) {
    if (typeof v.merges !== 'string') fail('TypeError', `${FN}: tokenizer.merges must be a string (merges.txt / vocab.bpe), got ${typeName(v.merges)}`);
    return { vocab: jsonText('tokenizer.vocab', v.vocab), merges: v.merges };
  }
  if (typeof v.vocab !== 'string') fail('TypeError', `${FN}: tokenizer.vocab must be a string (vocab.txt), got ${typeName(v.vocab)}`);
  if (v.lowercase !== undefined && typeof v.lowercase !== 'boolean') {
    fail('TypeError', `${FN}: tokenizer.lowercase must be a boolean, got ${typeName(v.lowercase)}`);
  }
  return { vocab: v.vocab, lowercase: v.lowercase ?? true };
}

// The weights as a reader of byte ranges.
function weightsReader(v) {
  if (v instanceof Uint8Array) return { size: v.byteLength, read: async (a, b) => v.subarray(a, b) };
  if (v instanceof ArrayBuffer) {
    const u = new Uint8Array(v);
    return { size: u.byteLength, read: async (a, b) => u.subarray(a, b) };
  }
  if (isBlob(v)) return { size: v.size, read: async (a, b) => new Uint8Array(await v.slice(a, b).arrayBuffer()) };
  if (v === undefined || v === null) fail('TypeError', `${FN}: weights is required`);
  return fail('TypeError', `${FN}: weights must be a Uint8Array, an ArrayBuffer or a Blob/File (model.safetensors), got ${typeName(v)}`);
}

// One reader per file: `weights` or each of its shards.
function shardReaders(v) {
  if (!Array.isArray(v)) return [weightsReader(v)];
  if (v.length === 0) fail('TypeError', `${FN}: weights must not be an empty array (give the shards of model.safetensors.index.json)`);
  return v.map((w, i) => {
    try {
      return weightsReader(w);
    } catch (e) {
      return fail('TypeError', e.message.replace(`${FN}: weights`, `${FN}: weights[${i}]`));
    }
  });
}

/** Loads a checkpoint (index.js: `as.loadPretrained(options)`); resolves to a Model. */
export async function loadPretrained(module, options) {
  if (!isPlainObject(options)) fail('TypeError', `${FN}: expected one argument object, got ${typeName(options)}`);
  for (const key of Object.keys(options)) {
    if (!['config', 'weights', 'tokenizer', 'generationConfig', 'onProgress', 'weights8'].includes(key)) fail('TypeError', `${FN}: unknown option '${key}'`);
  }
  const { config, weights, tokenizer, generationConfig, onProgress, weights8 = false } = options;
  if (typeof weights8 !== 'boolean') fail('TypeError', `${FN}: weights8 must be a boolean, got ${typeName(weights8)}`);
  if (config === undefined || config === null) fail('TypeError', `${FN}: config is required`);
  const configText = jsonText('config', config);
  const generationText = generationConfig === undefined || generationConfig === null ? null : jsonText('generationConfig', generationConfig);
  const tok = tokenizerArg(tokenizer);
  const readers = shardReaders(weights);
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    fail('TypeError', `${FN}: onProgress must be a function, got ${typeName(onProgress)}`);
  }
  const progress = (f) => onProgress?.(Math.min(1, Math.max(0, f)));
  const total = readers.reduce((n, r) => n + r.size, 0);
  const loader = new module.CheckpointHandle();
  try {
    // 1. each file's header: its first chunk read once (it usually holds the whole header); the core reads the
    // header's length from its first 8 bytes (headerBytes: 0 when they are not valid, and begin() says why)
    const firsts = [];
    const headers = [];
    for (const reader of readers) {
      const first = await reader.read(0, Math.min(reader.size, CHUNK));
      const need = loader.headerBytes(first.subarray(0, 8), reader.size);
      firsts.push(first);
      headers.push(need > first.byteLength ? await reader.read(0, need) : first.subarray(0, need || first.byteLength));
    }
    unwrap(loader.begin(configText, tok, headers, readers.map((r) => r.size), generationText, weights8));
    progress(0);
    // 2. every byte of every file, in order, chunk by chunk (each first chunk as read above)
    let done = 0;
    for (let s = 0; s < readers.length; s++) {
      const reader = readers[s];
      for (let at = 0; at < reader.size; at += CHUNK) {
        const end = Math.min(reader.size, at + CHUNK);
        unwrap(loader.feed(s, at, at === 0 ? firsts[s] : await reader.read(at, end)));
        done += end - at;
        progress(done / total);
      }
    }
    const handle = createOrThrow(module.ModelHandle, (h) => loader.finishInto(h));
    progress(1);
    return new Model(handle);
  } finally {
    loader.delete();
  }
}
