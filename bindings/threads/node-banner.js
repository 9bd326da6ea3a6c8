// Prepended (--extern-pre-js) to the threaded ES6 glue dist/attnscope.simd.mt.mjs. Its Node branch, which
// pthread workers need, calls require() and reads __dirname, neither of which exists in an ES module
// (TOOLCHAIN.md 16): define both from import.meta.url, under Node only; browsers skip this block.
var require, __dirname, __filename;
if (typeof process === 'object' && process.versions != null && process.versions.node != null
    && typeof window === 'undefined') {
  const { createRequire } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  const { dirname } = await import('node:path');
  require = createRequire(import.meta.url);
  __filename = fileURLToPath(import.meta.url);
  __dirname = dirname(__filename);
}
