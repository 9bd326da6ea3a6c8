// onnx_fp16.mjs: an ONNX model's float32 tensors to float16 — weights, constants and activations — for the FP16
// onnxruntime-web contestant of llm_engines.mjs. Layer: bench (onnx-proto only; no attnscope code).
//
// Debian's torch 1.13 cannot trace a float16 forward on the CPU ("addmm_impl_cpu_" not implemented for 'Half'), so
// bench/llm_ref.py's float32 export is converted here, as onnxconverter-common's
// convert_float_to_float16(keep_io_types=True) does: float32 initializers and the tensors of Constant /
// ConstantOfShape nodes become float16 (round to nearest even; |x| > 65504 becomes ±inf, as a cast does), Cast nodes
// to float32 cast to float16, every float32 value_info becomes float16, and each float32 graph output gets a Cast
// back to float32 (so the page reads Float32Array logits). Inputs that are float32 stay so, with a Cast to float16
// after them. Cos, Sin and Trilu keep float32 between two Casts (below). Node types the converted graph contains are returned for the report; an op onnxruntime-web has no
// float16 kernel for fails at session creation, with ORT's message.
//
// Models past protobuf's 2 GB (the Llama-3.2-1B shape: 4.9 GB of float32) keep their tensors as ONNX external data:
// TensorProto.data_location EXTERNAL, external_data { location (a file beside the model), offset, length }. torch.onnx
// (1.13) writes one file per tensor; the converted model gets one file (`data`) holding every external tensor,
// float16 or not, at 4,096-byte aligned offsets, so onnxruntime-web's `externalData` option lists a single file.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';

import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const FLOAT16 = onnx.TensorProto.DataType.FLOAT16;
const EXTERNAL = onnx.TensorProto.DataLocation.EXTERNAL;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 → IEEE binary16 bits, round to nearest even (subnormals, ±inf, NaN kept). */
export function halfBits(x) {
  f32[0] = x;
  const u = u32[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let man = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);  // inf / NaN
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;                              // overflow → inf
  if (e <= 0) {                                                  // subnormal half (or zero)
    if (e < -10) return sign;
    man |= 0x800000;
    const shift = 14 - e;
    const half = man >>> shift;
    const rest = man & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && (half & 1)) ? 1 : 0));
  }
  const half = (e << 10) | (man >>> 13);
  const rest = man & 0x1fff;
  // a carry out of the mantissa rounds into the exponent (up to inf), as it should
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1)) ? 1 : 0));
}

const entries = (t) => Object.fromEntries((t.externalData ?? []).map(({ key, value }) => [key, value]));

/** The bytes of external tensor t, read from `dir` (its location, offset and length). */
function readExternal(t, dir) {
  const { location, offset = '0', length } = entries(t);
  if (!location) throw new Error(`onnx_fp16: tensor ${t.name}: external data without a location`);
  const fd = openSync(join(dir, location), 'r');
  try {
    const at = Number(offset);
    const n = length != null ? Number(length) : fstatSync(fd).size - at;
    const out = new Uint8Array(n);
    for (let done = 0; done < n;) {
      const got = readSync(fd, out, done, n - done, at + done);
      if (!got) throw new Error(`onnx_fp16: tensor ${t.name}: ${location} ends before offset ${at} + ${n}`);
      done += got;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** Tensor t's float32 values to float16 (in place); external tensors, of any type, move to ext's file. */
function tensorToHalf(t, ext) {
  const external = t.dataLocation === EXTERNAL;
  if (t.dataType !== FLOAT && !external) return;
  if (external && !ext) throw new Error(`onnx_fp16.toFloat16: tensor ${t.name} has external data: pass { dir, data }`);
  let raw = external ? readExternal(t, ext.dir) : t.rawData;
  if (t.dataType === FLOAT) {
    const values = raw?.length ? new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))
      : Float32Array.from(t.floatData ?? []);
    const half = new Uint16Array(values.length);
    for (let i = 0; i < values.length; i++) half[i] = halfBits(values[i]);
    t.dataType = FLOAT16;
    t.floatData = [];
    raw = new Uint8Array(half.buffer);
  }
  if (!external) { t.rawData = raw; return; }
  const offset = Math.ceil(ext.offset / 4096) * 4096;
  for (let done = 0; done < raw.length;) done += writeSync(ext.fd, raw, done, raw.length - done, offset + done);
  ext.offset = offset + raw.length;
  t.rawData = new Uint8Array(0);
  t.externalData = [{ key: 'location', value: basename(ext.path) }, { key: 'offset', value: String(offset) },
    { key: 'length', value: String(raw.length) }];
}

/** The external data files an ONNX model's tensors name (initializers and node attributes), in first-use order. */
export function externalFiles(bytes) {
  const g = onnx.ModelProto.decode(bytes).graph;
  const tensors = [...g.initializer, ...g.node.flatMap((n) => n.attribute.map((a) => a.t).filter(Boolean))];
  return [...new Set(tensors.filter((t) => t.dataLocation === EXTERNAL).map((t) => entries(t).location))];
}

const KEEP_FLOAT32 = new Set(['Cos', 'Sin', 'Trilu']);

function cast(input, output, to) {
  return onnx.NodeProto.create({ opType: 'Cast', input: [input], output: [output], name: output,
    attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: to }] });
}

function infoToHalf(v) {
  if (v.type?.tensorType?.elemType === FLOAT) v.type.tensorType.elemType = FLOAT16;
}

/** Bytes of a float32 ONNX model → { bytes, ops } of its float16 twin (see the header). A model with external data
 *  needs `dir` (the folder its files are in) and `data` (the path of the one external data file written). */
export function toFloat16(bytes, { dir, data } = {}) {
  const model = onnx.ModelProto.decode(bytes);
  const g = model.graph;
  const ext = data ? { dir, path: data, fd: openSync(data, 'w'), offset: 0 } : null;
  try {
    for (const t of g.initializer) tensorToHalf(t, ext);
    for (const n of g.node) for (const a of n.attribute) if (a.t) tensorToHalf(a.t, ext);
  } finally {
    if (ext) closeSync(ext.fd);
  }
  const ops = new Set();
  for (const n of g.node) {
    ops.add(n.opType);
    for (const a of n.attribute) {
      if (n.opType === 'Cast' && a.name === 'to' && Number(a.i?.toNumber?.() ?? a.i) === FLOAT) a.i = FLOAT16;
    }
  }
  for (const v of g.valueInfo) infoToHalf(v);
  const front = [];
  for (const input of g.input) {
    if (input.type?.tensorType?.elemType !== FLOAT) continue;
    const inner = `${input.name}__fp16`;
    for (const n of g.node) n.input = n.input.map((x) => (x === input.name ? inner : x));
    front.push(cast(input.name, inner, FLOAT16));
  }
  const back = [];
  for (const output of g.output) {
    if (output.type?.tensorType?.elemType !== FLOAT) continue;
    const inner = `${output.name}__fp16`;
    for (const n of g.node) n.output = n.output.map((x) => (x === output.name ? inner : x));
    for (const n of g.node) n.input = n.input.map((x) => (x === output.name ? inner : x));
    back.push(cast(inner, output.name, FLOAT));
  }
  // Ops without a float16 kernel in onnxruntime's CPU EP keep float32: their first input is cast up and their
  // first output back down (onnxconverter-common's op_block_list does the same). Here: the RoPE angles' Cos/Sin and
  // the causal mask's Trilu, which ORT folds into constants at session creation anyway.
  const body = [];
  for (const n of g.node) {
    if (!KEEP_FLOAT32.has(n.opType)) { body.push(n); continue; }
    const up = `${n.name || n.output[0]}__in32`, out32 = `${n.output[0]}__out32`;
    body.push(cast(n.input[0], up, FLOAT));
    const down = cast(out32, n.output[0], FLOAT16);
    n.input = [up, ...n.input.slice(1)];
    n.output = [out32, ...n.output.slice(1)];
    body.push(n, down);
  }
  g.node = [...front, ...body, ...back];
  return { bytes: onnx.ModelProto.encode(model).finish(), ops: [...ops].sort() };
}
