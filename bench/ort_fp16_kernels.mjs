// ort_fp16_kernels.mjs: which of the LLM export's op types onnxruntime-web's wasm CPU execution provider runs in
// float16, and which it wraps in Casts to float32 (its InsertCastTransformer, logged as "CastFloat16Transformer":
// a node without a float16 kernel gets its inputs cast up and its outputs cast down). Layer: bench (onnx-proto and
// onnxruntime-web only). Why it matters: llm_engines.mjs's FP16 contestant stores the weights in float16, and where
// MatMul has no float16 kernel, session creation folds the Casts of the weights into float32 copies of them (the
// Llama-3.2-1B shape's 3.0 GB of float16 initializers become 6 GB, past wasm32's 4 GiB).
//
// Run: `node bench/ort_fp16_kernels.mjs` — per op: the node count after session creation (1 = a float16 kernel ran
// the node as it is; more = Casts inserted) and ORT's own log line.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import onnxProto from 'onnx-proto';

import { pkgDir } from './ort_node.mjs';

const { onnx } = onnxProto;
const F16 = onnx.TensorProto.DataType.FLOAT16;
const A = onnx.AttributeProto.AttributeType;
// [op, inputs, attributes, output shape] — the float-typed ops of bench/llm_ref.py's export (onnx_fp16.mjs lists them)
const OPS = [
  ['MatMul', 2], ['Add', 2], ['Mul', 2], ['Div', 2], ['Pow', 2], ['Sqrt', 1], ['Sigmoid', 1], ['Neg', 1],
  ['Softmax', 1, [{ name: 'axis', type: A.INT, i: -1 }]],
  ['ReduceMean', 1, [{ name: 'axes', type: A.INTS, ints: [-1] }], [4, 1]],
  ['Transpose', 1, [{ name: 'perm', type: A.INTS, ints: [1, 0] }]], ['Gather', 2],
];

function model(op, inputs, attribute = [], outDims = [4, 4]) {
  const info = (name, dims, type = F16) => ({ name, type: { tensorType: { elemType: type, shape: { dim: dims.map((d) => ({ dimValue: d })) } } } });
  const names = ['a', 'b'].slice(0, inputs);
  const ins = names.map((n, i) => (op === 'Gather' && i === 1 ? info(n, [2], onnx.TensorProto.DataType.INT64) : info(n, [4, 4])));
  const outs = [info('y', op === 'Gather' ? [2, 4] : outDims)];
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 14 }],
    graph: { name: op, node: [{ opType: op, input: names, output: ['y'], attribute }], input: ins, output: outs } })).finish();
}

if (process.argv[2] === '--child') {
  // ORT's verbose log goes to stderr; the markers too, so the parent reads them in order
  const ort = await import(`${pkgDir('onnxruntime-web')}/dist/ort.wasm.bundle.min.mjs`);
  ort.env.wasm.numThreads = 1;
  for (const [op, inputs, attrs, dims] of OPS) {
    console.error(`@@op ${op}`);
    try {
      await ort.InferenceSession.create(model(op, inputs, attrs, dims), { executionProviders: ['wasm'], logSeverityLevel: 0,
        logVerbosityLevel: 0, graphOptimizationLevel: 'disabled' });
    } catch (e) {
      console.error(`@@error ${e.message}`);
    }
  }
  process.exit(0);
}

const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child'], { encoding: 'utf8', maxBuffer: 64 << 20 });
const version = JSON.parse((await import('node:fs')).readFileSync(`${pkgDir('onnxruntime-web')}/package.json`, 'utf8')).version;
console.log(`onnxruntime-web ${version}, wasm execution provider, one float16 node per model, graph optimizations disabled:`);
console.log('| op | nodes after session creation | float16 kernel | ORT log |\n|---|---:|---|---|');
for (const part of r.stderr.split('@@op ').slice(1)) {
  const op = part.split('\n')[0].trim();
  const nodes = part.match(/Number of nodes: (\d+)/)?.[1];
  const cast = part.match(/CastFloat16Transformer modified: \d/)?.[0];
  const err = part.match(/@@error (.*)/)?.[1];
  console.log(`| ${op} | ${nodes ?? '—'} | ${err ? `error: ${err}` : nodes === '1' ? 'yes' : 'no (Casts to float32)'} | ${cast ?? ''} |`);
}
