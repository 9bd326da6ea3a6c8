// The serving matrix (issue 31, "reliability on any host"): the page (build/site/web/) and the single file
// (build/site/attnscope.html), each served by a small configurable static server in this file — with and without
// COOP/COEP, with .cjs/.mjs/.wasm sent as application/octet-stream, with a strict Content Security Policy lacking
// 'wasm-unsafe-eval' — and opened from file://. Each combination must either compute the default view correctly
// (a heatmap's values equal the module's, computed here in Node for the page's own state) or show a message naming
// the cause. Then the compute worker is made to crash (window.__attnscope.crashWorker, a test hook): the page must
// restart it, say so, keep the text, settings and views, and compute the next input.
// One Chromium (tests/browser/harness.js), one page at a time, each closed after its combination.
// Run: node --test --test-concurrency=1 tests/browser/serving.test.js
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { useBrowser, settled, after1, root, errorText } from './harness.js';
import { createAttnScope } from '../../bindings/js/index.js';

const open = useBrowser();
const site = path.join(root, 'build', 'site');

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.cjs': 'text/javascript',
  '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
};
const ISOLATED = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
// strict: only the site's own scripts (the single file: its one hashed inline script), no 'wasm-unsafe-eval'
const STRICT_PAGE = "default-src 'self'; script-src 'self'; worker-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' data: blob:";
let strictSingle; // the single file's own CSP without 'wasm-unsafe-eval' (set in before())

/**
 * The host each first path segment stands for: { isolated (COOP + COEP), octet (the extensions sent as
 * application/octet-stream), csp }. /iso/web/ is the page as scripts/serve.mjs serves it. /cjs/: a host that knows
 * .mjs but not .cjs (only the pool worker script is refused; loader.js starts those workers itself, early).
 */
const HOSTS = {
  iso: { isolated: true },
  plain: { isolated: false },
  octet: { isolated: true, octet: ['.cjs', '.mjs', '.wasm'] },
  cjs: { isolated: true, octet: ['.cjs'] },
  csp: { isolated: true, csp: true },
};

function serve() {
  const server = createServer(async (req, res) => {
    const [, mode, ...rest] = new URL(req.url, 'http://x').pathname.split('/');
    const host = HOSTS[mode];
    let file = path.join(site, ...rest.map(decodeURIComponent));
    try {
      if (!host || !file.startsWith(site)) throw new Error('outside');
      if ((await stat(file)).isDirectory()) file = path.join(file, 'index.html');
      const body = await readFile(file);
      const ext = path.extname(file);
      const headers = {
        'Content-Type': host.octet?.includes(ext) ? 'application/octet-stream' : TYPES[ext] ?? 'application/octet-stream',
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-store',
        ...(host.isolated ? ISOLATED : {}),
      };
      if (host.csp) headers['Content-Security-Policy'] = file.endsWith('attnscope.html') ? strictSingle : STRICT_PAGE;
      res.writeHead(200, headers).end(body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let server;
let base;
let dir; // file://: the single file alone in a folder; the page's files as built
let as;

before(async () => {
  server = await serve();
  base = `http://127.0.0.1:${server.address().port}/`;
  const html = readFileSync(path.join(site, 'attnscope.html'), 'utf8');
  strictSingle = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/)[1].replace(" 'wasm-unsafe-eval'", '');
  dir = mkdtempSync(path.join(tmpdir(), 'attnscope-serving-'));
  copyFileSync(path.join(site, 'attnscope.html'), path.join(dir, 'attnscope.html'));
  as = await createAttnScope({ threads: 1 });
});
after(async () => {
  await new Promise((r) => (server ? server.close(r) : r()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Resolves once the page computed a view, showed an error, or showed the no-script note; returns which. */
async function outcome(page) {
  const handle = await page.waitForFunction(() => {
    const a = window.__attnscope;
    const d = document.documentElement.dataset;
    if (a && a.runs > 0 && !d.busy && !d.drawing && !d.redraw) return a.error ? 'error' : 'computed';
    const note = document.getElementById('no-start');
    if (note && getComputedStyle(note).visibility === 'visible') return 'note';
    return false;
  }, null, { timeout: 40000, polling: 100 });
  return handle.jsonValue();
}

/** The heatmaps drawn equal the module's in Node for the page's state (the default random model). */
async function assertDefaultView(page) {
  const shown = await page.evaluate(() => ({
    state: window.__attnscope.traceState,
    maps: [...document.querySelectorAll('canvas[data-kind="attention"]')].map((c) => ({ head: Number(c.dataset.head), values: JSON.parse(c.dataset.values) })),
  }));
  const s = shown.state;
  const m = as.createModel({
    architecture: s.arch, tokenizer: s.tokenizer, dModel: s.dModel, numHeads: s.numHeads, numLayers: s.numLayers,
    dFF: s.dFF, normFirst: s.normFirst, activation: s.activation, positional: s.positional, positionalBase: s.base,
    attention: 'learned', seed: s.seed,
  });
  try {
    const ref = m.run(s.text, { trace: 'weights' });
    const n = ref.tokens.length;
    assert.ok(shown.maps.length > 0, 'heatmaps are drawn');
    let maxDiff = 0;
    for (const map of shown.maps) {
      const w = ref.layers[s.layer].attention.weights.subarray(map.head * n * n, (map.head + 1) * n * n);
      assert.equal(map.values.length, n * n);
      for (let k = 0; k < n * n; k++) maxDiff = Math.max(maxDiff, Math.abs(map.values[k] - w[k]));
    }
    assert.ok(maxDiff <= 1e-5, `heatmap values equal the module's (max diff ${maxDiff})`);
    return maxDiff;
  } finally {
    m.delete();
  }
}

// what each combination must do: 'compute' with the build (threads > 1 or 1) and the status line's reason, or a
// message matching `message`
const MATRIX = [
  { what: 'page', host: 'iso', expect: { threads: 'many', status: /\d threads/ } },
  { what: 'page', host: 'plain', expect: { threads: 1, status: /no COOP\/COEP/ } },
  { what: 'page', host: 'octet', expect: { threads: 1, status: /threaded SIMD128 build failed to start: dist\/attnscope\.simd\.mt\.(mjs|worker\.cjs) is served as application\/octet-stream/ } },
  { what: 'page', host: 'cjs', expect: { threads: 1, status: /threaded SIMD128 build failed to start: dist\/attnscope\.simd\.mt\.worker\.cjs is served as application\/octet-stream/ } },
  { what: 'page', host: 'csp', expect: { message: /Content Security Policy does not allow WebAssembly: its script-src needs 'wasm-unsafe-eval'/ } },
  { what: 'page', host: 'file', expect: { note: /Opened from disk \(file:\/\/\)\? Browsers refuse module scripts there/ } },
  { what: 'single', host: 'iso', expect: { threads: 1, status: /the single file embeds no threaded build/ } },
  { what: 'single', host: 'plain', expect: { threads: 1, status: /the single file embeds no threaded build/ } },
  { what: 'single', host: 'octet', expect: { threads: 1, status: /the single file embeds no threaded build/ } },
  { what: 'single', host: 'csp', expect: { message: /Content Security Policy does not allow WebAssembly: its script-src needs 'wasm-unsafe-eval'/ } },
  { what: 'single', host: 'file', expect: { threads: 1, status: /the single file embeds no threaded build/ } },
];

test('serving matrix: the page and the single file compute the default view on every host, or say why they cannot', async () => {
  const table = [];
  for (const { what, host, expect } of MATRIX) {
    const url = host === 'file'
      ? pathToFileURL(what === 'page' ? path.join(site, 'web', 'index.html') : path.join(dir, 'attnscope.html')).href
      : `${base}${host}/${what === 'page' ? 'web/' : 'attnscope.html'}`;
    const { page } = await open.file(url, { ready: async () => {} });
    const label = `${what} ${host}`;
    try {
      const got = await outcome(page);
      const status = await page.textContent('#status');
      if (expect.note) {
        assert.equal(got, 'note', `${label}: the no-script note shows`);
        assert.match(await page.textContent('#no-start'), expect.note);
        table.push(`${label}: message: ${(await page.textContent('#no-start [lang="en"]')).trim().slice(0, 60)}…`);
        continue;
      }
      if (expect.message) {
        assert.equal(got, 'error', `${label}: a message shows (status: ${status})`);
        assert.match(await errorText(page), expect.message, label);
        table.push(`${label}: message: ${await errorText(page)}`);
        continue;
      }
      assert.equal(got, 'computed', `${label}: computed (error: ${await errorText(page)}; status: ${status})`);
      const info = await page.evaluate(() => window.__attnscope.info);
      assert.equal(info.simd, true, `${label}: SIMD128`);
      const cores = await page.evaluate(() => navigator.hardwareConcurrency);
      if (expect.threads === 'many' && cores > 1) assert.ok(info.threads > 1, `${label}: threads (${info.threads})`);
      if (expect.threads === 1) assert.equal(info.threads, 1, label);
      assert.match(status, expect.status, `${label}: status line`);
      assert.doesNotMatch(status, /\[object /, `${label}: no [object …] in the status`);
      const diff = await assertDefaultView(page);
      table.push(`${label}: computed, ${status.split(' · computed')[0]} (max diff ${diff})`);
    } finally {
      await page.close();
    }
  }
  console.log(`# serving matrix\n${table.map((r) => `#   ${r}`).join('\n')}`);
});

test('worker crash: the page restarts the compute worker, says so, keeps text, settings and views, and computes the next input', async () => {
  const { page } = await open.file(`${base}iso/web/#layer=1`, { ready: (p) => settled(p, 0) });
  try {
    await after1(page, () => page.fill('#text', 'the worker will stop now'));
    const before = await page.evaluate(() => ({
      state: window.__attnscope.state,
      values: [...document.querySelectorAll('canvas[data-kind="attention"]')].map((c) => c.dataset.values),
      runs: window.__attnscope.runs,
    }));
    await page.evaluate(() => window.__attnscope.crashWorker());
    await page.waitForFunction(() => /compute worker stopped/.test(document.getElementById('status').textContent)
      && window.__attnscope.info.ready, null, { timeout: 30000 });
    const status = await page.textContent('#status');
    assert.match(status, /the compute worker stopped \((Uncaught )?(Error: )?the compute worker was made to crash \(test hook\) \(web\/worker\.js:\d+(:\d+)?\)\) and was restarted/);
    const kept = await page.evaluate(() => ({
      state: window.__attnscope.state,
      values: [...document.querySelectorAll('canvas[data-kind="attention"]')].map((c) => c.dataset.values),
      text: document.getElementById('text').value,
    }));
    assert.deepEqual(kept.state, before.state, 'the settings are kept');
    assert.equal(kept.text, 'the worker will stop now', 'the text is kept');
    assert.deepEqual(kept.values, before.values, 'the views drawn are kept');
    assert.equal(await errorText(page), null, 'no error banner: the page recovered');
    await after1(page, () => page.fill('#text', 'and the next one works'));
    assert.equal(await page.evaluate(() => window.__attnscope.traceState.text), 'and the next one works');
    const diff = await assertDefaultView(page);
    console.log(`# crash recovery: restarted; next input computed (max diff ${diff}); status: ${status}`);
  } finally {
    await page.close();
  }
});
