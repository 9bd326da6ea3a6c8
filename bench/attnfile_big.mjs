// Benchmark (issue 29): a 32-layer x 32-head x 1,024-token attention file opened in the page in Chromium. The file
// is written here, at bench time, into a temporary folder (never committed): its header, layer 0 as real softmax
// rows (32 heads x 4 MiB, streamed head by head), every other layer left as a hole (a sparse file: zeros, which are
// valid rows of a fully masked query), so 4 GiB as F32 (or 2 GiB as BF16) takes ~128 MiB of disk. The page reads
// it with Blob.slice, one head at a time (web/attnfile.js). Reported: time from choosing the file to the first
// heatmap drawn (html[data-shown]), time to layer 32's heatmap, and the renderer processes' peak memory (VmHWM of
// Chromium's renderer processes, where the page and its worker run); then rollout to the last layer and the model view,
// each streamed head by head through the whole file (web/attnfile-stream.js), their times and the peak after each.
// Run: npm run bench:attnfile [-- --dtype bf16]   (needs dist/ built and Debian's chromium)
import { openSync, writeSync, ftruncateSync, closeSync, mkdtempSync, rmSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dtype = process.argv.includes('--dtype') ? process.argv[process.argv.indexOf('--dtype') + 1].toUpperCase() : 'F32';
const L = 32;
const H = 32;
const N = 1024;
const elem = dtype === 'F32' ? 4 : 2;

/** Writes the file: header, layer 0's rows (seeded softmax rows; a local window so the heatmap has structure), holes. */
function writeFile(file) {
  const tokens = Array.from({ length: N }, (_, i) => `t${i}`);
  const header = { __metadata__: { tokens: JSON.stringify(tokens), model: `bench-${L}x${H}x${N}` } };
  const per = H * N * N * elem;
  for (let l = 0; l < L; l++) header[`attentions.${l}`] = { dtype, shape: [H, N, N], data_offsets: [l * per, (l + 1) * per] };
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const fd = openSync(file, 'w');
  writeSync(fd, len);
  writeSync(fd, json);
  const base = 8 + json.length;
  const head = new Float32Array(N * N);
  for (let h = 0; h < H; h++) {
    head.fill(0);
    const width = 1 + (h % 16); // head h attends to the previous `width` tokens (and itself), evenly
    for (let i = 0; i < N; i++) {
      const lo = Math.max(0, i - width + 1);
      for (let j = lo; j <= i; j++) head[i * N + j] = 1 / (i - lo + 1);
    }
    let bytes;
    if (dtype === 'F32') bytes = Buffer.from(head.buffer);
    else { // BF16: the top 16 bits, rounded to nearest even
      const u = new Uint32Array(head.buffer);
      const b = new Uint16Array(u.length);
      for (let k = 0; k < u.length; k++) b[k] = (u[k] + 0x7fff + ((u[k] >>> 16) & 1)) >>> 16;
      bytes = Buffer.from(b.buffer);
    }
    writeSync(fd, bytes, 0, bytes.length, base + h * N * N * elem);
  }
  ftruncateSync(fd, base + L * per); // the other layers: a hole
  closeSync(fd);
  return base + L * per;
}

/** Peak resident memory (VmHWM, kB) of Chromium's renderer processes. */
function rendererPeakKb() {
  let peak = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('chromium') || !cmd.includes('--type=renderer')) continue;
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]));
    } catch { /* gone */ }
  }
  return peak;
}

const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-bench-'));
const file = path.join(dir, `big-${dtype.toLowerCase()}.safetensors`);
const profile = mkdtempSync(path.join(tmpdir(), 'attnscope-bench-chromium-'));
let server;
let context;
try {
  const t0 = Date.now();
  const size = writeFile(file);
  console.log(`wrote ${file}: ${(size / 2 ** 30).toFixed(2)} GiB (${L}x${H}x${N} ${dtype}, sparse) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-site.mjs')], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`build-site failed: ${built.stderr}`);
  let url;
  ({ server, url } = await startServer({ root: path.join(root, 'build', 'site'), port: 0 }));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1280, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  const page = await context.newPage();
  await page.goto(`${url}web/#lang=en`);
  await page.waitForFunction(() => window.__attnscope?.runs > 0 && !document.documentElement.dataset.busy, null, { timeout: 60000 });
  console.error('page ready; choosing the file');
  const before = rendererPeakKb();
  await page.selectOption('#model', 'file');
  const shown = await page.evaluate(() => Number(document.documentElement.dataset.shown ?? 0));
  const start = Date.now();
  await page.setInputFiles('#attnfile-input', file);
  await page.waitForFunction((s) => (window.__attnscope.state.model === 'file' && Number(document.documentElement.dataset.shown ?? 0) > s
    && document.querySelector('#attention-view canvas[data-kind="attention"]')) || document.getElementById('attnfile-msg').getAttribute('role') === 'alert',
  shown, { timeout: 600000, polling: 50 });
  const first = Date.now() - start;
  const msg = await page.textContent('#attnfile-msg');
  if (await page.getAttribute('#attnfile-msg', 'role') === 'alert') throw new Error(`the page refused the file: ${msg}`);
  const err = await page.evaluate(() => window.__attnscope.error);
  // the last layer: one more layer read, head by head
  const shown2 = await page.evaluate(() => Number(document.documentElement.dataset.shown ?? 0));
  const t2 = Date.now();
  await page.click(`#attention-view .tab[data-layer="${L - 1}"]`);
  await page.waitForFunction((s) => Number(document.documentElement.dataset.shown ?? 0) > s && window.__attnscope.trace.layers.at(-1).attention.weights, shown2, { timeout: 600000, polling: 50 });
  const last = Date.now() - t2;
  const peak = rendererPeakKb();
  // rollout to layer 32 (the attention panel's aggregate): every layer streamed head by head into one n x n product
  const t3 = Date.now();
  await page.selectOption('#agg', 'rollout');
  await page.waitForFunction((l) => window.__attnscope.streamed('rollout', l) || document.querySelector('#aggregate-view [role="alert"]'), L - 1, { timeout: 1800000, polling: 200 });
  const rolloutMs = Date.now() - t3;
  const rolloutFailed = await page.evaluate(() => document.querySelector('#aggregate-view [role="alert"]')?.textContent);
  const peakRollout = rendererPeakKb();
  // the model view: every head streamed into a block-max thumbnail and its metrics
  const t4 = Date.now();
  await page.evaluate(() => document.getElementById('panel-model').scrollIntoView());
  await page.waitForSelector('#model-view [data-name="stream-start"], #model-view [data-name="file-stream"] progress, #model-view canvas.mv-canvas', { timeout: 600000 });
  if (await page.locator('#model-view [data-name="stream-start"]').count()) await page.click('#model-view [data-name="stream-start"]');
  await page.waitForSelector('#model-view canvas.mv-canvas, #model-view [role="alert"]', { timeout: 1800000 });
  const modelMs = Date.now() - t4;
  const modelFailed = await page.evaluate(() => (document.querySelector('#model-view canvas.mv-canvas') ? null : document.querySelector('#model-view [role="alert"]')?.textContent));
  const peakModel = rendererPeakKb();
  console.log(msg);
  if (err) console.log(`page error: ${err}`);
  console.log(`time to the first heatmap (choose → layer 1 drawn, ${H} heads of ${N}x${N}): ${(first / 1000).toFixed(2)} s`);
  console.log(`time to layer ${L}'s heatmap: ${(last / 1000).toFixed(2)} s`);
  console.log(`renderer peak memory (VmHWM, largest renderer process): ${(peak / 1024).toFixed(0)} MiB (before opening: ${(before / 1024).toFixed(0)} MiB); the file is ${(size / 2 ** 30).toFixed(2)} GiB`);
  console.log(`rollout to layer ${L} (${L * H} heads streamed): ${rolloutFailed ? `refused: ${rolloutFailed}` : `${(rolloutMs / 1000).toFixed(1)} s`}; renderer peak so far ${(peakRollout / 1024).toFixed(0)} MiB`);
  console.log(`model view (${L * H} heads streamed into block-max thumbnails): ${modelFailed ? `refused: ${modelFailed}` : `${(modelMs / 1000).toFixed(1)} s`}; renderer peak so far ${(peakModel / 1024).toFixed(0)} MiB`);
} finally {
  await context?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
  rmSync(dir, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
}
