// ort_node.mjs: onnxruntime-web (its wasm backend) loaded in Node for the benchmarks, with 1 or 2 threads in one
// process (attention_bench.mjs's MHA contestants, gpt2_bench.mjs's GPT-2 small). Layer: bench; no attnscope code.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { gemmModel } from './onnx_models.mjs';

const require = createRequire(import.meta.url);

/** The folder of an installed npm package. */
export const pkgDir = (name) => {
  let dir = dirname(require.resolve(name));
  while (!dir.endsWith(join('node_modules', name))) dir = dirname(dir);
  return dir;
};

// To run 1 and 2 threads in one process, import the bundled ESM build twice under different URLs.
// The 2-thread init fetches its own .mjs to make a blob: worker URL (it is "cross-origin" without a
// `location`); Node can neither fetch file: URLs nor import blob: URLs, so during init fetch() reads
// file: URLs from disk and createObjectURL hands the file URL back: the workers then load the real file.
async function withFileUrls(fn) {
  const { fetch: realFetch } = globalThis;
  const realCreate = URL.createObjectURL;
  let lastFile;
  globalThis.fetch = async (url, opts) => {
    const s = String(url);
    if (!s.startsWith('file:')) return realFetch(url, opts);
    lastFile = s;
    return new Response(await readFile(new URL(s)));
  };
  URL.createObjectURL = (blob) => lastFile ?? realCreate(blob);
  try {
    return await fn();
  } finally {
    globalThis.fetch = realFetch;
    URL.createObjectURL = realCreate;
  }
}

/** onnxruntime-web's wasm backend (SIMD, `threads` threads), initialised: its `ort` namespace. */
export async function loadOrt(threads) {
  const dist = join(pkgDir('onnxruntime-web'), 'dist');
  const ort = await import(`${pathToFileURL(join(dist, 'ort.wasm.min.mjs')).href}?threads=${threads}`);
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = `${pathToFileURL(dist).href}/`;
  ort.env.wasm.wasmBinary = await readFile(join(dist, 'ort-wasm-simd-threaded.wasm'));
  ort.env.logLevel = 'error';
  // The first session initialises the wasm module (and the thread pool).
  await withFileUrls(() => ort.InferenceSession.create(gemmModel(4, 4, 4), { executionProviders: ['wasm'] }));
  return ort;
}
