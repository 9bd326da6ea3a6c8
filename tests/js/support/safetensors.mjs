// The one safetensors writer of the tests and benches (format: huggingface/safetensors' README, "Format": an 8-byte
// little-endian header length N, N bytes of JSON — here padded with spaces to a multiple of 8, as the Python
// library writes it — then the data section, each tensor at its data_offsets). Tests that need a malformed file
// build the header they want and pass it through headerBytes/join unchanged: nothing here checks it.

const WIDTH = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

/** The file's first part for `header` (an object, written as given): the length prefix and the padded JSON. */
export function headerBytes(header) {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const pad = (8 - (json.length % 8)) % 8;
  const out = new Uint8Array(8 + json.length + pad);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length + pad), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length);
  return out;
}

/** A whole file: `header` followed by the data section `data` (bytes; default none). */
export function join(header, data = new Uint8Array(0)) {
  const head = headerBytes(header);
  const out = new Uint8Array(head.length + data.byteLength);
  out.set(head);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), head.length);
  return out;
}

/** A file's { header, data }: the parsed header and a view of its data section. */
export function split(bytes) {
  const len = Number(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(0, true));
  return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + len))), data: bytes.subarray(8 + len) };
}

/**
 * Tensors laid out one after another, in the order given: `entries` [{ name, dtype, shape }], `metadata` an
 * optional `__metadata__` object (string values). Returns { bytes: the whole file, zero-filled data, data: the data
 * section's bytes (a view of `bytes`, 8-aligned, for the caller to fill), offsets: Map name → [begin, end) within
 * data }.
 */
export function layout(entries, metadata) {
  const { header, offsets, size } = headerOf(entries, metadata);
  const bytes = join(header, new Uint8Array(size));
  return { bytes, data: bytes.subarray(bytes.length - size), offsets };
}

/**
 * layout's header alone, for a file written piece by piece (a big one): { header, offsets: Map name → [begin, end)
 * within the data section, size: the data section's bytes }.
 */
export function headerOf(entries, metadata) {
  const header = metadata ? { __metadata__: metadata } : {};
  const offsets = new Map();
  let at = 0;
  for (const { name, dtype, shape } of entries) {
    const width = WIDTH[dtype];
    if (!width) throw new Error(`safetensors layout: unknown dtype ${dtype} for ${name}`);
    const bytes = shape.reduce((a, b) => a * b, 1) * width;
    header[name] = { dtype, shape, data_offsets: [at, at + bytes] };
    offsets.set(name, [at, at + bytes]);
    at += bytes;
  }
  return { header, offsets, size: at };
}
