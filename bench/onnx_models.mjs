// onnx_models.mjs: builds the ONNX graphs the benchmark feeds to onnxruntime-web, in memory, at run
// time (no committed binaries). Layer: bench. Uses onnx-proto (protobufjs) only; no attnscope code.
//   mhaModel:       multi-head self-attention from plain opset-17 ops (MatMul/Add/Reshape/Transpose/
//                   Mul/Softmax), weights as initializers in attnscope's [in, out] layout.
//   mhaContribModel: the same maths with ORT's fused com.microsoft Attention contrib op for the
//                   projections + attention, then MatMul/Add for W_O.
//   gemmModel:      C = A·B with both operands as graph inputs.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const A = onnx.AttributeProto.AttributeType;

const bytes = (typed) => new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);

function f32Init(name, dims, data) {
  return onnx.TensorProto.create({ name, dims, dataType: FLOAT, rawData: bytes(Float32Array.from(data)) });
}

function i64Init(name, values) {
  return onnx.TensorProto.create({
    name, dims: [values.length], dataType: INT64, rawData: bytes(BigInt64Array.from(values.map(BigInt))),
  });
}

function valueInfo(name, dims) {
  return onnx.ValueInfoProto.create({
    name,
    type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => ({ dimValue: d })) } } },
  });
}

function node(opType, input, output, attrs = {}, domain = '') {
  const attribute = Object.entries(attrs).map(([name, v]) => {
    if (Array.isArray(v)) return { name, type: A.INTS, ints: v };
    if (Number.isInteger(v)) return { name, type: A.INT, i: v };
    return { name, type: A.FLOAT, f: v };
  });
  return onnx.NodeProto.create({ opType, input, output, attribute, domain, name: output[0] });
}

function model(graph, contrib = false) {
  const opsetImport = [{ domain: '', version: 17 }];
  if (contrib) opsetImport.push({ domain: 'com.microsoft', version: 1 });
  return onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8, producerName: 'attnscope-bench', opsetImport, graph: onnx.GraphProto.create(graph),
  })).finish();
}

/**
 * Multi-head self-attention, input X [n, dModel] → Y [n, dModel]:
 * Q = X·Wq + bq (same for K, V) → [n, h, dh] → [h, n, dh]; S = (Q·Kᵀ)·(1/√dh); P = softmax(S);
 * C = P·V → [n, h, dh] → [n, dModel]; Y = C·Wo + bo. `w` = { wq, wk, wv, wo, bq, bk, bv, bo }.
 */
export function mhaModel(n, dModel, numHeads, w) {
  const dh = dModel / numHeads;
  const d = dModel;
  const nodes = [];
  for (const p of ['q', 'k', 'v']) {
    nodes.push(node('MatMul', ['X', `W${p}`], [`${p}0`]));
    nodes.push(node('Add', [`${p}0`, `B${p}`], [`${p}1`]));
    nodes.push(node('Reshape', [`${p}1`, 'split'], [`${p}2`]));
    // K goes to [h, dh, n] so that Q·Kᵀ is a plain batched MatMul.
    nodes.push(node('Transpose', [`${p}2`], [`${p}h`], { perm: p === 'k' ? [1, 2, 0] : [1, 0, 2] }));
  }
  nodes.push(node('MatMul', ['qh', 'kh'], ['s0']));
  nodes.push(node('Mul', ['s0', 'scale'], ['s1']));
  nodes.push(node('Softmax', ['s1'], ['p'], { axis: -1 }));
  nodes.push(node('MatMul', ['p', 'vh'], ['c0']));
  nodes.push(node('Transpose', ['c0'], ['c1'], { perm: [1, 0, 2] }));
  nodes.push(node('Reshape', ['c1', 'merge'], ['c2']));
  nodes.push(node('MatMul', ['c2', 'Wo'], ['y0']));
  nodes.push(node('Add', ['y0', 'Bo'], ['Y']));
  return model({
    name: 'mha',
    node: nodes,
    initializer: [
      f32Init('Wq', [d, d], w.wq), f32Init('Wk', [d, d], w.wk), f32Init('Wv', [d, d], w.wv),
      f32Init('Wo', [d, d], w.wo), f32Init('Bq', [d], w.bq), f32Init('Bk', [d], w.bk),
      f32Init('Bv', [d], w.bv), f32Init('Bo', [d], w.bo),
      f32Init('scale', [], [1 / Math.sqrt(dh)]),
      i64Init('split', [n, numHeads, dh]), i64Init('merge', [n, d]),
    ],
    input: [valueInfo('X', [n, d])],
    output: [valueInfo('Y', [n, d])],
  });
}

/**
 * The same function with com.microsoft Attention (input [1, n, d], weights [d, 3d] = [Wq | Wk | Wv],
 * bias [3d]), then Y = C·Wo + bo. Input X is [1, n, dModel].
 */
export function mhaContribModel(n, dModel, numHeads, w) {
  const d = dModel;
  const wqkv = new Float32Array(d * 3 * d);
  for (let r = 0; r < d; r++) {
    wqkv.set(w.wq.subarray(r * d, r * d + d), r * 3 * d);
    wqkv.set(w.wk.subarray(r * d, r * d + d), r * 3 * d + d);
    wqkv.set(w.wv.subarray(r * d, r * d + d), r * 3 * d + 2 * d);
  }
  const bqkv = new Float32Array(3 * d);
  bqkv.set(w.bq, 0);
  bqkv.set(w.bk, d);
  bqkv.set(w.bv, 2 * d);
  return model({
    name: 'mha_contrib',
    node: [
      node('Attention', ['X', 'Wqkv', 'Bqkv'], ['c'], { num_heads: numHeads }, 'com.microsoft'),
      node('MatMul', ['c', 'Wo'], ['y0']),
      node('Add', ['y0', 'Bo'], ['Y']),
    ],
    initializer: [
      f32Init('Wqkv', [d, 3 * d], wqkv), f32Init('Bqkv', [3 * d], bqkv),
      f32Init('Wo', [d, d], w.wo), f32Init('Bo', [d], w.bo),
    ],
    input: [valueInfo('X', [1, n, d])],
    output: [valueInfo('Y', [1, n, d])],
  }, true);
}

/** C [m, n] = A [m, k] · B [k, n], A and B graph inputs. */
export function gemmModel(m, n, k) {
  return model({
    name: 'gemm',
    node: [node('MatMul', ['A', 'B'], ['C'])],
    input: [valueInfo('A', [m, k]), valueInfo('B', [k, n])],
    output: [valueInfo('C', [m, n])],
  });
}
