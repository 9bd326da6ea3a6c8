// Loads the Emscripten module: picks the SIMD128 or the scalar .wasm (ORT's `isSimdSupported` shape,
// STYLE 4.4), reads its bytes in Node (fs) or the browser (fetch, same origin) and hands them to the
// one shipped glue as `wasmBinary`. Passing the bytes sidesteps the 3.1.6 glue's fetch-on-file-path bug
// under Node 20 (TOOLCHAIN.md 3) and lets one glue serve both .wasm files (they differ only in name, 9).
// This is the only file that imports the glue.
import createAttnscope from '../../dist/attnscope.mjs';

/*
 * The smallest module using a SIMD128 opcode (29 bytes):
 *   (module (func (result v128) i32.const 0 i8x16.splat))
 * WebAssembly.validate() is false on engines without SIMD128.
 */
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type section: () -> v128
  0x03, 0x02, 0x01, 0x00, // function section
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b, // code: i32.const 0; i8x16.splat; end
]);

/** True when this engine validates WebAssembly SIMD128. */
export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null
  && typeof window === 'undefined';

async function readWasm(file) {
  const url = new URL(`../../dist/${file}`, import.meta.url);
  if (isNode) {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`createAttnScope: could not load ${url.pathname} (HTTP ${response.status})`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Instantiates the module. `simd`: 'auto' (detect), true (require SIMD128, error if the engine lacks
 * it) or false (scalar build). Resolves to { module, simd }.
 */
export async function loadModule(simd = 'auto') {
  const supported = simdSupported();
  if (simd === true && !supported) {
    throw new Error('createAttnScope: simd (true) requires WebAssembly SIMD128, which this engine does not support');
  }
  const useSimd = simd === 'auto' ? supported : simd;
  const wasmBinary = await readWasm(useSimd ? 'attnscope.simd.wasm' : 'attnscope.wasm');
  const module = await createAttnscope({
    wasmBinary,
    // The module never prints in normal use; route stray output away from the user's console.
    print: () => {},
    printErr: () => {},
  });
  return { module, simd: useSimd };
}
