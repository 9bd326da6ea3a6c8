// `as.loadPretrained({ config, weights, tokenizer, generationConfig, onProgress, weights8, streamWeights, signal })`:
// a Hugging Face GPT-2, BERT or
// decoder-only (Llama, Mistral, Qwen2/3, Gemma 1/2/3, Phi-3) checkpoint (API.md "Pretrained checkpoints", "Modern
// decoder checkpoints"); `weights` may be the shards of model.safetensors.index.json, in any order. Layer: bindings/js. Checks JS types and unknown keys only; the C++ core
// (src/model/hf_checkpoint.h) checks the files. The weights go to wasm in chunks — from a Blob/File read slice
// by slice, or from a Uint8Array/ArrayBuffer already in memory — so the file never exists twice in full — tensor by
// tensor (large ones in CHUNK pieces), yielding to the event loop between them so that `signal` (an AbortSignal)
// can stop the load: it then rejects with an AbortError and frees what it allocated. Memory is reserved by the core
// before anything is allocated (bindings/embind/memory_reserve.h): not enough is an Error saying so, nothing kept.
// streamWeights (decoder checkpoints): the layers' and the token tables' bytes are not fed; the model reads each
// layer synchronously before its forward, and the tables' rows and pieces when it embeds and when its head runs
// (src/model/layer_stream.h), through layerReader: FileReaderSync on a Blob/File in a Web Worker,
// fs.readSync on a file path in Node, or the bytes of a Uint8Array/ArrayBuffer (which keeps them out of the wasm
// heap only). Node paths work without streamWeights too. In a cross-origin-isolated worker the Blob reads are done
// by a helper worker (blob-reader.js), whose garbage is collected at once.
import { createOrThrow, fail, unwrap } from './errors.js';
import { Model } from './model.js';
import { isPlainObject, typeName } from './validate.js';
import { sentencePieceArg } from './tokenizer.js';
import { blobHelper, readInto } from './blob-reader.js';

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
  const spm = sentencePieceArg(FN, 'tokenizer', v); // T5's { sentencepiece }, Marian's { source, target, vocab }
  if (spm !== null) return spm;
  if (!isPlainObject(v)) fail('TypeError', `${FN}: tokenizer must be tokenizer.json (string or object), { vocab, merges }, { vocab, lowercase }, { sentencepiece } or { source, target, vocab }, got ${typeName(v)}`);
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

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

/**
 * The weights as a reader of byte ranges: `read(a, b)` (async, while loading; a Blob's also `readReused(a, b)`, whose
 * bytes last until its next call) and, for streamWeights,
 * `readSync(a, b)` (the layer reads: a Uint8Array, or a string saying what went wrong; it never throws). `fs`:
 * node:fs when running in Node (a file path is then accepted).
 */
function weightsReader(v, fs) {
  const fromMemory = (u) => ({ size: u.byteLength, name: 'weights', read: async (a, b) => u.subarray(a, b), readSync: (a, b) => u.subarray(a, b) });
  if (v instanceof Uint8Array) return fromMemory(v);
  if (v instanceof ArrayBuffer) return fromMemory(new Uint8Array(v));
  if (isBlob(v)) {
    const name = typeof v.name === 'string' && v.name ? v.name : 'weights';
    const sync = typeof FileReaderSync === 'function'
      ? (a, b) => {
        try {
          return new Uint8Array(new FileReaderSync().readAsArrayBuffer(v.slice(a, b)));
        } catch (e) { // a File changed or removed since it was chosen: NotReadableError
          return `the file '${name}' could not be read (${e.name}: ${e.message}); was it changed or removed since it was chosen?`;
        }
      }
      : null;
    // readReused (the load's chunks, each fed before the next is read): into one buffer (blob-reader.js readInto)
    const box = { buffer: null };
    const readReused = async (a, b) => {
      const n = await readInto(v.slice(a, b), b - a, box);
      return n === b - a ? new Uint8Array(box.buffer, 0, n) : fail('Error', `${FN}: weights: the file '${name}' gave ${n} of ${b - a} bytes (was it changed?)`);
    };
    return { size: v.size, name, read: async (a, b) => new Uint8Array(await v.slice(a, b).arrayBuffer()), readReused, readSync: sync };
  }
  if (typeof v === 'string' && fs) return pathReader(v, fs);
  if (v === undefined || v === null) fail('TypeError', `${FN}: weights is required`);
  return fail('TypeError', `${FN}: weights must be a Uint8Array, an ArrayBuffer, a Blob/File (model.safetensors)${fs ? ' or a file path' : ''}, got ${typeName(v)}`);
}

/** Node: a safetensors file by its path, read with fs.readSync (opened per read, its size checked each time). */
function pathReader(path, fs) {
  let size;
  try {
    size = fs.statSync(path).size;
  } catch (e) {
    return fail('Error', `${FN}: weights: cannot read '${path}' (${e.code ?? e.message})`);
  }
  const readSync = (a, b) => {
    let fd = -1;
    try {
      fd = fs.openSync(path, 'r');
      const now = fs.fstatSync(fd).size;
      if (now !== size) return `the file '${path}' changed size (${size} bytes when loaded, ${now} now)`;
      const out = new Uint8Array(b - a);
      for (let at = 0; at < out.byteLength;) {
        const n = fs.readSync(fd, out, at, out.byteLength - at, a + at);
        if (n === 0) return `the file '${path}' ended at byte ${a + at}`;
        at += n;
      }
      return out;
    } catch (e) {
      return `the file '${path}' could not be read (${e.code ?? e.message})`;
    } finally {
      if (fd >= 0) fs.closeSync(fd);
    }
  };
  return {
    size,
    name: path,
    readSync,
    read: async (a, b) => {
      const r = readSync(a, b);
      return typeof r === 'string' ? fail('Error', `${FN}: weights: ${r}`) : r;
    },
  };
}

// One reader per file: `weights` or each of its shards.
function shardReaders(v, fs) {
  if (!Array.isArray(v)) return [weightsReader(v, fs)];
  if (v.length === 0) fail('TypeError', `${FN}: weights must not be an empty array (give the shards of model.safetensors.index.json)`);
  return v.map((w, i) => {
    try {
      return weightsReader(w, fs);
    } catch (e) {
      return fail(e.name === 'TypeError' ? 'TypeError' : 'Error', e.message.replace(`${FN}: weights`, `${FN}: weights[${i}]`));
    }
  });
}

/** The chunks of one file: [begin, end) ranges that end at its tensors' ends (`ends`), none above CHUNK bytes. */
function chunks(size, ends) {
  const out = [];
  let at = 0;
  for (const end of [...ends.filter((e) => e > 0 && e < size), size]) {
    for (; at < end; at = Math.min(end, at + CHUNK)) out.push([at, Math.min(end, at + CHUNK)]);
  }
  return out;
}

/** streamWeights: the chunks of the ranges to feed ([a0, b0, a1, b1, ...], the tensors kept in memory). */
function rangeChunks(flat) {
  const out = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    for (let at = flat[i]; at < flat[i + 1]; at = Math.min(flat[i + 1], at + CHUNK)) out.push([at, Math.min(flat[i + 1], at + CHUNK)]);
  }
  return out;
}

/**
 * streamWeights: the synchronous reader the model calls before each layer's forward (shard, offset, length) ->
 * Uint8Array or a string saying what failed (it never throws: an exception would unwind through the wasm frames).
 */
function layerReader(readers) {
  return (shard, offset, length) => {
    try {
      const r = readers[shard].readSync(offset, offset + length);
      if (typeof r === 'string') return r;
      return r.byteLength === length ? r : `the file '${readers[shard].name}' gave ${r.byteLength} of ${length} bytes (was it changed?)`;
    } catch (e) {
      return `the file '${readers[shard].name}' could not be read (${e?.message ?? e})`;
    }
  };
}

/**
 * A macrotask turn: lets an abort (a timer, a click, a message) be handled between two chunks. setImmediate in
 * Node, a MessageChannel in browsers (setTimeout(0) is clamped to 4 ms there once nested).
 */
let channel = null;
const waiting = [];
function turn() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => { setImmediate(resolve); });
  if (typeof MessageChannel !== 'function') return new Promise((resolve) => { setTimeout(resolve, 0); });
  if (!channel) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => waiting.shift()?.();
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });
}

/** The AbortError a stopped load rejects with (a DOMException where there is one, as fetch's). */
function abortError() {
  const message = `${FN}: the load was aborted (signal); nothing was kept`;
  if (typeof DOMException === 'function') return new DOMException(message, 'AbortError');
  const e = new Error(message);
  e.name = 'AbortError';
  return e;
}

function signalArg(signal) {
  if (signal === undefined || signal === null) return null;
  const isSignal = typeof AbortSignal === 'function' ? signal instanceof AbortSignal
    : typeof signal === 'object' && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function';
  if (!isSignal) fail('TypeError', `${FN}: signal must be an AbortSignal (new AbortController().signal), got ${typeName(signal)}`);
  return signal;
}

/** Loads a checkpoint (index.js: `as.loadPretrained(options)`); resolves to a Model. */
export async function loadPretrained(module, options) {
  if (!isPlainObject(options)) fail('TypeError', `${FN}: expected one argument object, got ${typeName(options)}`);
  for (const key of Object.keys(options)) {
    if (!['config', 'weights', 'tokenizer', 'generationConfig', 'onProgress', 'weights8', 'signal', 'streamWeights'].includes(key)) fail('TypeError', `${FN}: unknown option '${key}'`);
  }
  const { config, weights, tokenizer, generationConfig, onProgress, weights8 = false, streamWeights = false } = options;
  if (typeof weights8 !== 'boolean') fail('TypeError', `${FN}: weights8 must be a boolean, got ${typeName(weights8)}`);
  if (typeof streamWeights !== 'boolean') fail('TypeError', `${FN}: streamWeights must be a boolean, got ${typeName(streamWeights)}`);
  if (streamWeights && weights8) fail('TypeError', `${FN}: streamWeights and weights8 cannot be combined (streamed layers are read at their stored width)`);
  const signal = signalArg(options.signal);
  if (config === undefined || config === null) fail('TypeError', `${FN}: config is required`);
  const configText = jsonText('config', config);
  const generationText = generationConfig === undefined || generationConfig === null ? null : jsonText('generationConfig', generationConfig);
  const tok = tokenizerArg(tokenizer);
  const fs = isNode ? await import('node:fs') : null;
  const readers = shardReaders(weights, fs);
  if (streamWeights) {
    const i = readers.findIndex((r) => r.readSync === null);
    if (i >= 0) {
      fail('TypeError', `${FN}: streamWeights reads each layer synchronously while the model runs, which a Blob/File allows only in a Web Worker (FileReaderSync)${fs ? '; in Node give the file path (weights: \'/path/model.safetensors\') or its bytes' : ': load the checkpoint in a worker'} (weights${readers.length > 1 ? `[${i}]` : ''})`);
    }
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    fail('TypeError', `${FN}: onProgress must be a function, got ${typeName(onProgress)}`);
  }
  const progress = (f) => onProgress?.(Math.min(1, Math.max(0, f)));
  const stopped = () => {
    if (signal?.aborted) throw abortError();
  };
  stopped();
  // streamWeights on Blobs in a cross-origin-isolated worker: a helper worker reads them (blob-reader.js); closed
  // when the model is deleted or the load fails
  const blobs = [weights].flat();
  const helper = streamWeights && readers.every((r) => r.readSync !== null) && blobs.every(isBlob)
    ? await blobHelper(blobs, readers.map((r) => r.name)) : null;
  if (helper) {
    readers.forEach((r, s) => {
      const direct = r.readSync; // FileReaderSync here, once the helper has stopped answering
      r.readSync = (a, b) => helper.read(s, a, b) ?? direct(a, b);
    });
  }
  const loader = new module.CheckpointHandle();
  let model = null;
  try {
    // 0. room for the texts and the tokenizer built from them (an Error saying so when there is none)
    const textBytes = configText.length + (generationText?.length ?? 0) + (tok.json ?? '').length + (tok.vocab ?? '').length + (tok.merges ?? '').length +
      (tok.sentencepiece?.byteLength ?? 0) + (tok.source?.byteLength ?? 0) + (tok.target?.byteLength ?? 0);
    unwrap(loader.reserve(textBytes));
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
    stopped();
    unwrap(loader.begin(configText, tok, headers, readers.map((r) => r.size), generationText, weights8, streamWeights));
    progress(0);
    // 2. every byte of every file, in order, tensor by tensor (each file's first CHUNK bytes as read above), with a
    // turn of the event loop before each piece so that an abort lands
    const pieces = readers.map((r, s) => (streamWeights ? rangeChunks(loader.residentRanges(s)) : chunks(r.size, loader.tensorEnds(s))));
    const total = pieces.flat().reduce((n, [at, end]) => n + end - at, 0) || 1;
    let done = 0;
    for (let s = 0; s < readers.length; s++) {
      const reader = readers[s];
      for (const [at, end] of pieces[s]) {
        await turn();
        stopped();
        const bytes = end <= firsts[s].byteLength ? firsts[s].subarray(at, end) : await (reader.readReused ?? reader.read)(at, end);
        unwrap(loader.feed(s, at, bytes));
        done += end - at;
        progress(done / total);
      }
      if (streamWeights) unwrap(loader.feed(s, reader.size, new Uint8Array(0))); // the layers' bytes stay in the file
    }
    await turn();
    stopped();
    const checkpoint = { ...loader.summary(), streamed: streamWeights };
    const handle = createOrThrow(module.ModelHandle, (h) => loader.finishInto(h, streamWeights ? layerReader(readers) : null));
    progress(1);
    model = new Model(handle, { checkpoint: Object.freeze(checkpoint) });
    if (helper) {
      const free = model.delete.bind(model);
      model.delete = () => { helper.close(); free(); };
    }
    return model;
  } finally {
    loader.delete();
    if (helper && !model) helper.close();
  }
}
