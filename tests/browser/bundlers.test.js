// The package inside other people's apps (issue 31; h31b): a minimal app that imports `attnscope` as an installed
// package (node_modules/attnscope, a link to this folder), bundled with esbuild and with Vite (devDependencies), run
// in Chromium: single-thread served plainly, threaded served with COOP/COEP. The configuration is README's
// "In your own app": the package's dist/ and models/ are served beside the app (esbuild: copied into its output;
// Vite: into public/), where the module finds its .wasm, its worker and the bundled models; without them the error
// names the missing file. The app computes a softmax and the bundled 'dates' model's answer, both checked.
// Run: node --test tests/browser/bundlers.test.js
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const APP = path.join(root, 'build', 'bundler-app');
const THREADED = existsSync(path.join(root, 'dist', 'attnscope.simd.mt.wasm'));

const MAIN = `import { createAttnScope } from 'attnscope';
const out = document.getElementById('out');
const threads = Number(new URLSearchParams(location.search).get('threads') ?? 1);
try {
  const as = await createAttnScope({ threads, relaxedSimd: false });
  const y = as.softmax({ x: new Float32Array([0, Math.log(3)]), rows: 1, cols: 2 });
  const dates = await as.loadBundled('dates');
  out.textContent = JSON.stringify({ ok: true, threads: as.threads, y: Array.from(y), date: dates.generate('November 22, 2026').text });
} catch (e) {
  out.textContent = JSON.stringify({ ok: false, message: String(e?.message ?? e) });
}
`;
const HTML = (script) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>app</title></head>
<body><pre id="out"></pre><script type="module" src="${script}"></script></body></html>\n`;

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.cjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

/** A static server of `dir`; `isolated`: COOP/COEP on every response (threads). */
function serve(dir, isolated) {
  const server = createServer((req, res) => {
    const file = path.join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const target = file.endsWith('/') ? path.join(file, 'index.html') : file;
    if (!target.startsWith(dir) || !existsSync(target)) {
      res.writeHead(404).end();
      return;
    }
    const headers = { 'Content-Type': TYPES[path.extname(target)] ?? 'application/octet-stream' };
    if (isolated) Object.assign(headers, { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
    res.writeHead(200, headers).end(readFileSync(target));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` })));
}

/** The package's files an app serves beside itself (README "In your own app"). */
function copyPackageFiles(to) {
  cpSync(path.join(root, 'dist'), path.join(to, 'dist'), { recursive: true, filter: (f) => !f.endsWith('.simd.mjs') });
  cpSync(path.join(root, 'models'), path.join(to, 'models'), { recursive: true, filter: (f) => !/\.(py|md)$/.test(f) });
}

let browser;
let profile;
before(async () => {
  rmSync(APP, { recursive: true, force: true });
  mkdirSync(path.join(APP, 'src'), { recursive: true });
  mkdirSync(path.join(APP, 'node_modules'), { recursive: true });
  symlinkSync(root, path.join(APP, 'node_modules', 'attnscope'), 'dir'); // as `npm install attnscope` leaves it
  writeFileSync(path.join(APP, 'src', 'main.js'), MAIN);
  writeFileSync(path.join(APP, 'index.html'), HTML('/src/main.js'));
  profile = mkdtempSync(path.join(tmpdir(), 'attnscope-bundlers-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
  });
});
after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Opens the app at `url` and returns what it wrote. */
async function runApp(url) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('out').textContent !== '', null, { timeout: 60000 });
  const result = JSON.parse(await page.textContent('#out'));
  await page.close();
  assert.deepEqual(errors, []);
  return result;
}

function checkWorks(r, threads) {
  assert.equal(r.ok, true, r.message);
  assert.deepEqual(r.y.map((v) => Math.round(v * 1e6) / 1e6), [0.25, 0.75]);
  assert.equal(r.date, '2026-11-22', 'the bundled dates model, found beside the app');
  assert.equal(r.threads, threads);
}

test('esbuild: the app finds its .wasm and bundled models beside it (single thread; threads with COOP/COEP); without them the error names the file', async () => {
  const out = path.join(APP, 'out-esbuild');
  // node:* are the Node-only paths (reading files instead of fetching them), never reached in a browser
  await esbuild.build({ entryPoints: [path.join(APP, 'src', 'main.js')], bundle: true, format: 'esm', outfile: path.join(out, 'app.js'), logLevel: 'silent', absWorkingDir: APP, external: ['node:*'] });
  writeFileSync(path.join(out, 'index.html'), HTML('/app.js'));
  // 1. without the package's files: a clear message naming the one it looked for
  let { server, url } = await serve(out, false);
  const missing = await runApp(`${url}?threads=1`);
  server.close();
  assert.equal(missing.ok, false);
  assert.match(missing.message, /dist\/attnscope(\.simd)?\.wasm \(HTTP 404\)/);
  // 2. with them: single thread, served plainly
  copyPackageFiles(out);
  ({ server, url } = await serve(out, false));
  checkWorks(await runApp(`${url}?threads=1`), 1);
  server.close();
  // 3. threaded, served with COOP/COEP
  if (THREADED) {
    ({ server, url } = await serve(out, true));
    checkWorks(await runApp(`${url}?threads=2`), 2);
    server.close();
  }
});

// Vite emits the threaded glue and the worker script as hashed assets: the pool threads must import the glue by the
// URL the module imported it from (loader.js passes it), not by its plain name beside the worker, which is not there.
test('Vite: the built app finds its .wasm and bundled models (single thread; threaded with COOP/COEP)', async () => {
  const { build } = await import('vite');
  cpSync(path.join(APP, 'index.html'), path.join(APP, 'vite-index.html'));
  const publicDir = path.join(APP, 'public');
  copyPackageFiles(publicDir);
  const outDir = path.join(APP, 'out-vite');
  await build({
    root: APP, publicDir, logLevel: 'silent', configFile: false,
    build: { outDir, emptyOutDir: true, target: 'es2022' },
  });
  let { server, url } = await serve(outDir, false);
  checkWorks(await runApp(`${url}?threads=1`), 1);
  server.close();
  if (THREADED) {
    ({ server, url } = await serve(outDir, true));
    checkWorks(await runApp(`${url}?threads=2`), 2);
    server.close();
  }
});
