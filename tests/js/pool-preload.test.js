// pool-preload.test.js: the pool worker script's epilogue (bindings/threads/worker-preload.js, appended to
// dist/attnscope.simd.mt.worker.cjs by bindings/threads/finish-worker.cmake). loader.js starts a browser's pool
// workers early with #glue=<the glue's URL> in their URL; the epilogue then imports that URL at once, so that the
// glue's 'load' command finds it in the worker's module map. Checked here: the built worker script ends with the
// epilogue, and the epilogue imports exactly the URL its fragment names, and nothing without one (no fragment, or
// Node's shim `location`, which has no hash) — run as the script's own code under stand-in `location`s.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './helpers.js';

const epilogue = readFileSync(path.join(root, 'bindings', 'threads', 'worker-preload.js'), 'utf8');

test('the built pool worker script ends with the glue-preload epilogue', () => {
  const worker = readFileSync(path.join(root, 'dist', 'attnscope.simd.mt.worker.cjs'), 'utf8');
  assert.ok(worker.endsWith(`\n${epilogue}`), 'dist/attnscope.simd.mt.worker.cjs ends with bindings/threads/worker-preload.js (rebuild: the post-link step appends it)');
  // the generated part is still there before it: the pool worker's command handler
  assert.match(worker.slice(0, -epilogue.length), /e\.data\.cmd==="load"/);
});

test('the epilogue imports the URL its #glue= fragment names, once, and nothing without one', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-preload-'));
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'location');
  try {
    // a stand-in glue that counts its evaluations; a space and a '#' in its name check the fragment's decoding
    const glue = path.join(dir, 'the glue #1.mjs');
    writeFileSync(glue, 'globalThis.__preloads = (globalThis.__preloads ?? 0) + 1;\nexport default 1;\n');
    const href = pathToFileURL(glue).href;
    const run = (location) => {
      Object.defineProperty(globalThis, 'location', { value: location, configurable: true, writable: true });
      new Function(epilogue)(); // eslint-disable-line no-new-func
    };
    globalThis.__preloads = 0;
    run({ href: '/pool/worker.cjs' }); // Node's shim: no hash
    run({ href: 'https://x/w.cjs', hash: '' });
    run({ href: 'https://x/w.cjs', hash: '#other=1' });
    run(null);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(globalThis.__preloads, 0, 'nothing imported without a #glue= fragment');
    run({ href: `https://x/w.cjs#glue=${encodeURIComponent(href)}`, hash: `#glue=${encodeURIComponent(href)}` });
    const deadline = Date.now() + 5000;
    while (globalThis.__preloads === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(globalThis.__preloads, 1, 'the named glue was imported');
    // the glue's own import of the same URL then finds the same module
    assert.equal((await import(href)).default, 1);
    assert.equal(globalThis.__preloads, 1, 'evaluated once');
    // a URL that does not load: the epilogue swallows it (the 'load' command reports it)
    let unhandled = null;
    const onUnhandled = (e) => { unhandled = e; };
    process.on('unhandledRejection', onUnhandled);
    run({ hash: `#glue=${encodeURIComponent(pathToFileURL(path.join(dir, 'missing.mjs')).href)}` });
    await new Promise((r) => setTimeout(r, 100));
    process.off('unhandledRejection', onUnhandled);
    assert.equal(unhandled, null, 'a failed preload is not an unhandled rejection');
  } finally {
    if (saved) Object.defineProperty(globalThis, 'location', saved);
    else delete globalThis.location;
    delete globalThis.__preloads;
    rmSync(dir, { recursive: true, force: true });
  }
});
