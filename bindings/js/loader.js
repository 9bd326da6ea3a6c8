// Loads the Emscripten module: picks the SIMD128 or the scalar .wasm (ORT's `isSimdSupported` shape,
// STYLE 4.4), compiles it here — in the browser while it downloads (`WebAssembly.compileStreaming`, so that the
// engine keeps the machine code beside the HTTP cache entry and a second visit skips the compile), in Node from the
// bytes read with fs — and hands the compiled module to the one shipped glue through its `instantiateWasm` hook.
// Compiling here sidesteps the 3.1.6 glue's fetch-on-file-path bug under Node 20 (TOOLCHAIN.md 3) and lets one
// glue serve both .wasm files (they differ only in name, 9).
// Threads (TOOLCHAIN.md 16): with threads > 1 the threaded SIMD128 module (dist/attnscope.simd.mt.*) is
// imported instead, with a pool of threads - 1 pre-loaded workers whose Node handles are unref'd so the
// process still exits by itself. Fused multiply-add (TOOLCHAIN.md 15): in the SIMD128 modules,
// dist/attnscope.relaxed.wasm (a leaf module holding the relaxed-SIMD GEMM micro-kernel, kernels-relaxed/; its
// shared-memory twin .relaxed.mt.wasm for the threaded module) is instantiated on the module's own memory where
// the engine validates it, and its export put in the module's function table (and each pool thread's) for the
// GEMMs to call. This is the only file that imports the glues.
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

/** Running in Node (not a browser page or worker): files are read from disk, not fetched. */
export const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null
  && typeof window === 'undefined';

/** The URL of dist/`file`, relative to this module (the package folder in Node, the site in browsers). */
const distUrl = (file) => new URL(`../../dist/${file}`, import.meta.url);

async function fetchWasm(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`createAttnScope: could not load ${url.pathname} (HTTP ${response.status})`);
  return response;
}

async function readWasm(file) {
  const url = distUrl(file);
  if (isNode) {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  return new Uint8Array(await (await fetchWasm(url)).arrayBuffer());
}

/**
 * The compiled module of dist/`file`. In the browser it compiles while it downloads; a server that sends another
 * type than application/wasm (which compileStreaming refuses) gets its bytes compiled once they are in.
 */
async function compileWasm(file) {
  if (isNode || typeof WebAssembly.compileStreaming !== 'function') return WebAssembly.compile(await readWasm(file));
  const response = await fetchWasm(distUrl(file));
  const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/wasm' ? WebAssembly.compileStreaming(response) : WebAssembly.compile(await response.arrayBuffer());
}

/**
 * Runs the glue `create` on the compiled `wasm`: the glue's imports are bound to it in `instantiateWasm` (the
 * threaded glue posts the same compiled module to its pool threads). A failed instantiation rejects the result
 * instead of leaving the glue's promise pending.
 */
function instantiate(create, wasm, options, beforeReceive = null) {
  let failed;
  const failure = new Promise((_, reject) => { failed = reject; });
  // the object the glue makes its Module (MODULARIZE uses the one passed): beforeReceive gets it, glue set up
  const moduleObject = { ...options };
  moduleObject.instantiateWasm = (imports, receive) => {
    WebAssembly.instantiate(wasm, imports).then((instance) => {
      beforeReceive?.(moduleObject);
      receive(instance, wasm);
    }).catch(failed);
    return {}; // the exports arrive through receive()
  };
  return Promise.race([create(moduleObject), failure]);
}

/** At most this many threads for threads: 'auto' (API.md: "up to 4 of the machine's cores"). */
const AUTO_THREADS_MAX = 4;

/** Shared memory is there: Node, or a cross-origin-isolated page or worker (COOP + COEP). */
export function threadsSupported() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return false;
  return isNode || globalThis.crossOriginIsolated === true;
}

async function coreCount() {
  if (isNode) {
    const os = await import('node:os');
    return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  }
  return globalThis.navigator?.hardwareConcurrency ?? 1;
}

/**
 * The thread count to load, and why it is 1 when it is: 'auto' -> min(4, cores) where threads work (and SIMD128
 * runs: the threaded module is SIMD128 only), else 1; an integer is checked against the same conditions.
 * Resolves to { threads, why } with why one of null (threads chosen), 'requested' (threads: 1), 'no-simd',
 * 'not-embedded' (the single-file page), 'not-isolated' (no SharedArrayBuffer: no COOP + COEP), 'one-core'.
 */
async function chooseThreads(threads, useSimd) {
  if (threads === 'auto') {
    if (!useSimd) return { threads: 1, why: 'no-simd' };
    if (!THREADED_BUILD) return { threads: 1, why: 'not-embedded' };
    if (!threadsSupported()) return { threads: 1, why: 'not-isolated' };
    const n = Math.max(1, Math.min(AUTO_THREADS_MAX, await coreCount()));
    return { threads: n, why: n > 1 ? null : 'one-core' };
  }
  if (threads > 1 && !threadsSupported()) {
    throw new Error(`createAttnScope: threads (${threads}) needs SharedArrayBuffer: Node or a cross-origin-isolated page (COOP same-origin + COEP require-corp); use threads: 'auto' or 1`);
  }
  if (threads > 1 && !useSimd) {
    throw new Error(`createAttnScope: threads (${threads}) needs the SIMD128 build (the threaded module is SIMD128 only); use threads: 1 with simd: false`);
  }
  if (threads > 1 && !THREADED_BUILD) {
    throw new Error(`createAttnScope: threads (${threads}) needs the threaded build, which this single-file page does not embed; use threads: 'auto' or 1`);
  }
  return { threads, why: threads > 1 ? null : 'requested' };
}

const QUIET = {
  // The module never prints in normal use; route stray output away from the user's console.
  print: () => {},
  printErr: () => {},
};

/**
 * The threaded build is there to load: false in the single-file page, whose bundler (scripts/build-single.mjs)
 * defines ATTNSCOPE_THREADED_BUILD as false because it embeds neither the threaded glue nor its worker script.
 */
// eslint-disable-next-line no-undef
const THREADED_BUILD = typeof ATTNSCOPE_THREADED_BUILD === 'undefined' || ATTNSCOPE_THREADED_BUILD !== false;

/** The pool threads get this long to come up; a pool that is not up by then counts as failed (a worker that never starts). */
const THREAD_START_MS = 15000;

/**
 * In a browser, checks that dist/`file` is served as JavaScript: a host sending another type (e.g.
 * application/octet-stream) gets the script refused, which the browser reports without a reason (a bare error
 * Event or "Failed to fetch dynamically imported module"). Resolves, or throws naming the file and what the host
 * sent. Asked only once a script has failed (explained() below), so a working start-up makes no extra request.
 */
async function checkScript(file) {
  if (isNode) return;
  const response = await fetch(distUrl(file), { method: 'HEAD' });
  if (!response.ok) throw new Error(`dist/${file} could not be loaded (HTTP ${response.status})`);
  const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!/^(text|application)\/(x-)?(java|ecma)script$/.test(type)) {
    throw new Error(`dist/${file} is served as ${type || 'no type'}, not JavaScript (the host must send text/javascript for .mjs and .cjs)`);
  }
}

/** `promise`, whose failure, when the host serves `file` as another type than JavaScript, is said in those words. */
const explained = (promise, file) => promise.catch(async (e) => {
  await checkScript(file);
  throw e;
});

/** The error a pool worker's error event (its script refused, not found or failing) becomes. */
function poolThreadFailed(event) {
  const where = event.filename ? ` (${event.filename}:${event.lineno})` : '';
  return new Error(`a pool thread failed to start: ${event.message || 'its worker script was refused or not found'}${where}`);
}

/**
 * Rejects when a pool thread fails to start: the 3.1.6 glue rethrows a pool worker's error event from its
 * onerror handler, which lands here (the global 'error' event of the page or worker running the glue) instead
 * of escaping as "Uncaught [object Event]"; and when the pool is not up after THREAD_START_MS.
 * Returns { failed, stop }: the promise and the function that removes the listener and the timer.
 */
function watchThreads() {
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  const onError = (e) => {
    const thrown = e.error;
    if (!(typeof Event === 'function' && thrown instanceof Event)) return;
    e.preventDefault(); // handled here: it must not reach the page as an uncaught error
    fail(poolThreadFailed(thrown));
  };
  const timer = setTimeout(() => fail(new Error(`the pool threads did not start within ${THREAD_START_MS / 1000} s`)), THREAD_START_MS);
  if (!isNode) globalThis.addEventListener?.('error', onError);
  return {
    failed,
    stop() {
      clearTimeout(timer);
      if (!isNode) globalThis.removeEventListener?.('error', onError);
    },
  };
}

/**
 * In a browser, the pool's `count` Web Workers, started now: their threads, their script and the glue (which the
 * script's epilogue, bindings/threads/worker-preload.js, imports at once) then load while this thread still
 * fetches the glue and compiles the wasm, instead of after. The 3.1.6 glue starts its pool only once both are in,
 * and holds the module's readiness until every pool worker has loaded it: ~75 ms of a warm page load, measured
 * (README, "Load time"). The glue, told of no pool (attnscopeWorkers: 0), gets these in its pool
 * (PThread.unusedWorkers) just before it receives the instance (adopt), and loads the wasm into them as into its
 * own; the module is ready, as before, once they all have. Each is started as the glue starts one (a classic
 * Worker on the worker script), its URL's fragment naming the glue for the epilogue. An error event before the
 * glue adopts them (after, the glue rethrows it: watchThreads) rejects `failed`. Node keeps the glue's own pool
 * (worker_threads reading files: nothing to overlap). Returns { adopt(moduleObject), failed, stop() }; stop
 * drops the listeners and terminates the workers when they were not adopted.
 */
function startPoolWorkers(count, workerHref, glueHref) {
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  const onError = (e) => fail(poolThreadFailed(e));
  const workers = Array.from({ length: count }, () => {
    const worker = new Worker(`${workerHref}#glue=${encodeURIComponent(glueHref)}`);
    worker.addEventListener('error', onError);
    return worker;
  });
  let adopted = false;
  return {
    failed,
    adopt(moduleObject) {
      const pool = moduleObject.PThread?.unusedWorkers;
      if (!Array.isArray(pool)) throw new Error('the threaded glue exports no PThread.unusedWorkers to hand its pool to');
      pool.push(...workers);
      adopted = true;
    },
    stop() {
      for (const worker of workers) {
        worker.removeEventListener('error', onError);
        if (!adopted) worker.terminate();
      }
    },
  };
}

async function loadThreaded(threads) {
  // A computed specifier: bundlers (scripts/build-single.mjs's esbuild) leave the threaded glue out of the
  // single-file page, which is never cross-origin isolated.
  const glueUrl = new URL('../../dist/attnscope.simd.mt.mjs', import.meta.url);
  const workerFile = 'attnscope.simd.mt.worker.cjs';
  const workerUrl = distUrl(workerFile);
  // A bundler may inline the small worker script as a data: URL (Vite does below 4 KB): a worker started from one has
  // an opaque origin and cannot import the glue, so it starts from a blob: URL of the same text, which keeps ours.
  const workerHref = workerUrl.protocol === 'data:'
    ? URL.createObjectURL(new Blob([await (await fetch(workerUrl)).arrayBuffer()], { type: 'text/javascript' }))
    : workerUrl.href;
  const watch = watchThreads();
  const early = isNode ? null : startPoolWorkers(threads - 1, workerHref, glueUrl.href);
  const earlyFailed = early ? [explained(early.failed, workerFile)] : [];
  let module;
  try {
    // the glue and the wasm fetched side by side (one round trip less on a page's cold load); a script that fails
    // to load is then checked, so a host sending it as another type gets named instead of a bare error
    const [{ default: createThreaded }, wasm] = await Promise.race([Promise.all([
      explained(import(glueUrl.href), 'attnscope.simd.mt.mjs'),
      compileWasm('attnscope.simd.mt.wasm'),
    ]), ...earlyFailed]);
    module = await Promise.race([instantiate(createThreaded, wasm, {
      attnscopeWorkers: early ? 0 : threads - 1,
      // The pool threads import the glue from the URL it was imported from, not by its plain name beside the worker
      // script: a bundler that renames the files (Vite's hashed assets) breaks the plain name.
      mainScriptUrlOrBlob: glueUrl.href,
      // The glue asks for '<name>.worker.js'; it ships as .cjs (a .js would be read as ESM in Node).
      locateFile: (file, dir) => {
        if (!file.endsWith('.worker.js')) return dir + file;
        return isNode ? decodeURIComponent(workerUrl.pathname) : workerHref;
      },
      ...QUIET,
    }, early?.adopt), explained(watch.failed, workerFile), ...earlyFailed]);
  } finally {
    watch.stop();
    early?.stop();
    // The blob: URL is needed only to construct the pool's workers, which are all started by now (above, or by the
    // glue while instantiating: PThread.initMainThread; its getNewWorker never adds one later) and have run the
    // script by the time instantiate resolves (each worker's load is a run dependency): freed here, on success or failure.
    if (workerHref !== workerUrl.href) URL.revokeObjectURL(workerHref);
  }
  const inUse = module.setThreads(threads);
  module.unrefThreads();
  return { module, threads: inUse };
}

/** The builds, by name: what `fallbacks` in loadModule's answer names. */
const BUILD = { threaded: 'simd-threads', simd: 'simd', scalar: 'scalar' };

/** The browser refused to compile WebAssembly at all: its Content Security Policy lacks 'wasm-unsafe-eval'. */
const cspRefused = (e) => /Content Security Policy|wasm-unsafe-eval|unsafe-eval/.test(String(e?.message ?? e));

async function loadSingle(useSimd) {
  const module = await instantiate(createAttnscope, await compileWasm(useSimd ? 'attnscope.simd.wasm' : 'attnscope.wasm'), QUIET);
  return { module, simd: useSimd, threads: 1 };
}

/** The relaxed-SIMD kernel module's one export (kernels-relaxed/f32-gemm-4x8-wasmrelaxedsimd.c). */
const RELAXED_KERNEL = 'f32_gemm_ukernel_4x8__wasmrelaxedsimd';

/** The bytes of the kernel module `file` when this engine validates them, else a reason it cannot run. */
async function relaxedKernelBytes(file) {
  let bytes;
  try {
    bytes = await readWasm(file);
  } catch {
    return { reason: `is not available: dist/${file} is missing (it is built where clang-16 is installed)` };
  }
  let valid = false;
  try {
    valid = WebAssembly.validate(bytes);
  } catch {
    valid = false;
  }
  return valid ? { bytes } : { reason: 'is not supported by this engine (it does not validate WebAssembly relaxed SIMD)' };
}

/**
 * Puts the relaxed-SIMD micro-kernel into the SIMD128 `module`: instantiated on the module's memory, appended to
 * its function table, handed to setGemmMicroKernel — with its bytes in the threaded module, whose pool threads
 * each put it into their own table (the shared-memory variant, dist/attnscope.relaxed.mt.wasm). Resolves true
 * when it runs; with relaxedSimd 'auto' any obstacle means false, with true it throws naming the obstacle.
 */
async function installRelaxedKernel(module, relaxedSimd, threaded) {
  const unavailable = (reason) => {
    if (relaxedSimd === true) throw new Error(`createAttnScope: relaxedSimd (true) ${reason}`);
    return false;
  };
  const file = threaded ? 'attnscope.relaxed.mt.wasm' : 'attnscope.relaxed.wasm';
  const { bytes, reason } = await relaxedKernelBytes(file);
  if (!bytes) return unavailable(reason);
  // The glue's exports are minified: find the memory (the threaded module's is created by its glue) and the
  // table by kind.
  const exported = Object.values(module.asm ?? {});
  const memory = module.wasmMemory ?? exported.find((v) => v instanceof WebAssembly.Memory);
  const table = exported.find((v) => v instanceof WebAssembly.Table);
  if (!memory || !table) return unavailable('cannot be installed: the module exports no memory or function table');
  let instance;
  try {
    ({ instance } = await WebAssembly.instantiate(bytes, { env: { memory } }));
  } catch (e) {
    return unavailable(`cannot be installed: ${e?.message ?? e}`); // 'auto' keeps the module working without it
  }
  const kernel = instance.exports[RELAXED_KERNEL];
  if (typeof kernel !== 'function') return unavailable(`cannot be installed: dist/${file} has no ${RELAXED_KERNEL}`);
  const index = table.grow(1);
  table.set(index, kernel);
  if (!module.setGemmMicroKernel(index, threaded ? bytes : '')) {
    return unavailable('cannot be installed: this build has no 4x8 GEMM micro-kernel');
  }
  return true;
}

/**
 * Instantiates the module. `simd`: 'auto' (detect), true (require SIMD128, error if the engine lacks
 * it) or false (scalar build); `threads`: 'auto' or a positive integer; `relaxedSimd`: 'auto', true (require
 * the fused multiply-add kernel, error where it cannot run) or false (all validated by the caller).
 * What 'auto' chose degrades, never dies: threaded SIMD128, then single-threaded SIMD128, then scalar — a build
 * that fails to start (a script refused for its MIME type or missing, a failed compile or instantiation, pool
 * threads that never come up) moves to the next one an option left open. A build asked for explicitly fails
 * with its own error; a Content Security Policy without 'wasm-unsafe-eval' fails at once (no build can run).
 * Resolves to { module, simd, threads, relaxedSimd, fallbacks: [{ build, reason }], singleThread } where
 * `fallbacks` lists the builds that failed, in order, and `singleThread` says why one thread runs (see
 * chooseThreads; null when several do).
 */
export async function loadModule(simd = 'auto', threads = 'auto', relaxedSimd = 'auto') {
  const supported = simdSupported();
  if (simd === true && !supported) {
    throw new Error('createAttnScope: simd (true) requires WebAssembly SIMD128, which this engine does not support');
  }
  const useSimd = simd === 'auto' ? supported : simd;
  if (relaxedSimd === true && !useSimd) {
    throw new Error('createAttnScope: relaxedSimd (true) needs the SIMD128 build; use relaxedSimd: \'auto\' or false with simd: false');
  }
  const chosen = await chooseThreads(threads, useSimd);
  // the builds to try, in order: [name, load]; the later ones only where the options leave them open
  const plan = [];
  if (chosen.threads > 1) plan.push([BUILD.threaded, async () => ({ ...(await loadThreaded(chosen.threads)), simd: true })]);
  if (chosen.threads === 1 || threads === 'auto') {
    if (useSimd) plan.push([BUILD.simd, () => loadSingle(true)]);
    if (!useSimd || simd === 'auto') plan.push([BUILD.scalar, () => loadSingle(false)]);
  }
  const fallbacks = [];
  for (const [build, load] of plan) {
    let loaded;
    try {
      loaded = await load();
    } catch (e) {
      const reason = String(e?.message ?? e).replace(/^createAttnScope: /, '');
      if (cspRefused(e)) {
        throw new Error(`createAttnScope: the page's Content Security Policy does not allow WebAssembly: its script-src needs 'wasm-unsafe-eval' (${reason})`);
      }
      fallbacks.push({ build, reason });
      continue;
    }
    const threaded = loaded.threads > 1;
    const useRelaxed = loaded.simd && relaxedSimd !== false ? await installRelaxedKernel(loaded.module, relaxedSimd, threaded) : false;
    const singleThread = threaded ? null : (fallbacks.length ? 'failed' : chosen.why);
    return { ...loaded, relaxedSimd: useRelaxed, fallbacks, singleThread };
  }
  if (plan.length === 1) throw new Error(`createAttnScope: ${fallbacks[0].reason}`);
  throw new Error(`createAttnScope: no build could start: ${fallbacks.map((f) => `${f.build}: ${f.reason}`).join('; ')}`);
}
