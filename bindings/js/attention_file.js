// Attention files (API.md "Attention files — extension, 2026-11-26"): `as.readAttentionFile(bytes)` and the lazy
// reader the CLI uses for files too large to hold. Layer: bindings/js. Checks JS types only; the C++ core
// (src/io/attention_file.h) checks the file: the header, the shapes against the tokens, and each head's weights.
//
// Both read the same way: the core parses the header into an index of tensors with their byte offsets, then widens
// and checks one head at a time from exactly that head's bytes. readAttentionFile does this for every head of a
// buffer in memory; openAttentionFile takes a byte-range reader (a Node file handle, a Blob) and reads a head's
// bytes only when it is asked for, so a 32-layer x 32-head x 1024-token F32 file (4 GiB) opens by reading its header.
import { createOrThrow, fail, unwrap } from './errors.js';
import { typeName } from './validate.js';

const FN = 'readAttentionFile';

/** A Uint8Array view of `bytes` (Uint8Array or ArrayBuffer), or a TypeError naming the argument. */
function byteView(bytes) {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  return fail('TypeError', `${FN}: bytes must be a Uint8Array or an ArrayBuffer (the attention file), got ${typeName(bytes)}`);
}

// An AttentionFileHandle opened on a source's header: { handle, info }. read(a, b) returns bytes [a, b).
async function openHandle(module, size, read) {
  const first = await read(0, Math.min(size, 8));
  const handle = new module.AttentionFileHandle();
  try {
    const need = unwrap(handle.headerBytes(first, size));
    unwrap(handle.open(await read(0, need), size));
    return { handle, info: handle.info() };
  } catch (e) {
    handle.delete();
    throw e;
  }
}

const headRange = (t, h) => [t.offset + h * t.headBytes, t.offset + (h + 1) * t.headBytes];

// The public result's top level from the index.
function summary(info) {
  const out = { tokens: info.tokens };
  if (info.sourceTokens !== undefined) out.sourceTokens = info.sourceTokens;
  if (info.model !== undefined) out.model = info.model;
  out.n = info.n;
  out.numHeads = info.numHeads;
  return out;
}

/**
 * `as.readAttentionFile(bytes)`: the whole file as { tokens, sourceTokens?, model?, n, numHeads, layers: [{ attention:
 * { weights, numHeads }, cross?: { weights, numHeads } }] }; weights Float32Array [heads, n, n] / [heads, n, m].
 */
export function readAttentionFile(module, bytes) {
  const view = byteView(bytes);
  const size = view.byteLength;
  const first = view.subarray(0, Math.min(size, 8));
  const handle = createOrThrow(module.AttentionFileHandle, (h) => {
    const need = h.headerBytes(first, size);
    return typeof need === 'number' ? h.open(view.subarray(0, need), size) : need;
  });
  try {
    const info = handle.info();
    const all = (t, l, cross) => {
      const size1 = t.rows * t.cols;
      const weights = new Float32Array(t.heads * size1);
      for (let h = 0; h < t.heads; h++) weights.set(unwrap(handle.head(l, cross, h, view.subarray(...headRange(t, h)))), h * size1);
      return { weights, numHeads: t.heads };
    };
    const layers = info.layers.map((ly, l) => {
      const layer = { attention: all(ly.self, l, false) };
      if (ly.cross) layer.cross = all(ly.cross, l, true);
      return layer;
    });
    return { ...summary(info), layers };
  } finally {
    handle.delete();
  }
}

/**
 * The lazy reader: `source` is { size, read(begin, end) → Promise<Uint8Array> } (bytes [begin, end)). Resolves to
 * { tokens, sourceTokens?, model?, n, numHeads, layers: [{ numHeads, crossHeads? }], head(layer, head, attention =
 * 'self') → Promise<Float32Array [n, keys]>, layer(layer, attention) → Promise<{ weights, numHeads }>, close() }.
 * Only the header is read at open; each head's bytes when it is asked for.
 */
export async function openAttentionFile(module, source) {
  const { size } = source;
  // the source's own failure (a file gone, a read callback that throws) named as this file's read, its error the
  // cause; an AbortError (a cancelled read) passes as it is
  const read = (begin, end) => Promise.resolve().then(() => source.read(begin, end)).catch((e) => {
    if (e?.name === 'AbortError') throw e;
    throw new Error(`${FN}: reading bytes [${begin}, ${end}) of the file failed: ${e?.message ?? String(e)}`, { cause: e });
  });
  const { handle, info } = await openHandle(module, size, read);
  let closed = false;
  const tensorOf = (layer, attention) => {
    if (closed) fail('Error', `${FN}: the file is closed`);
    if (attention !== 'self' && attention !== 'cross') fail(typeof attention === 'string' ? 'RangeError' : 'TypeError', `${FN}: attention (${typeof attention === 'string' ? JSON.stringify(attention) : typeName(attention)}) must be 'self' or 'cross'`);
    const ly = info.layers[layer];
    if (!Number.isInteger(layer) || ly === undefined) fail('RangeError', `${FN}: layer (${layer}) must be from 0 to ${info.layers.length - 1}`);
    if (attention === 'cross' && !ly.cross) fail('RangeError', `${FN}: layer ${layer} has no cross-attention in this file`);
    return attention === 'cross' ? ly.cross : ly.self;
  };
  const head = async (layer, h, attention = 'self') => {
    const t = tensorOf(layer, attention);
    if (!Number.isInteger(h) || h < 0 || h >= t.heads) fail('RangeError', `${FN}: head (${h}) must be from 0 to ${t.heads - 1} (layer ${layer} has ${t.heads} heads)`);
    const bytes = await read(...headRange(t, h));
    return unwrap(handle.head(layer, attention === 'cross', h, bytes));
  };
  return {
    ...summary(info),
    layers: info.layers.map((ly) => (ly.cross ? { numHeads: ly.self.heads, crossHeads: ly.cross.heads } : { numHeads: ly.self.heads })),
    head,
    async layer(layer, attention = 'self') {
      const t = tensorOf(layer, attention);
      const weights = new Float32Array(t.heads * t.rows * t.cols);
      for (let h = 0; h < t.heads; h++) weights.set(await head(layer, h, attention), h * t.rows * t.cols);
      return { weights, numHeads: t.heads };
    },
    close() {
      if (!closed) handle.delete();
      closed = true;
    },
  };
}
