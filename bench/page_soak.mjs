// Page soak (issue 31; not a test: it measures and prints, nothing passes or fails; `npm run soak:page`).
// Headless Debian Chromium through playwright-core on build/site, as tests/browser/harness.js does. After a warm-up
// (100 keystrokes, 10 model switches, 5 attention-file opens) the page is driven through 1,000 keystrokes, 100 model
// switches (the seeded random model, every bundled model, and a checkpoint chosen again in the picker each time: a
// Llama-shaped fixture in shards, so each choice loads and replaces the last) and 50 attention-file opens, in an
// order drawn from a fixed seed, each step waited for until the page has recomputed and drawn. Measured before and
// after: the page's JS heap after a forced garbage collection (CDP Runtime.getHeapUsage), the compute worker's wasm
// heap (its module's memoryStats: heapSize and allocated bytes, window.__attnscope.memory()), and every console
// error or uncaught exception on the way. Printed as a Markdown table.
// The warm-up visits every model once first: the page keeps each bundled model it loaded, and the module's memory
// grows to its high-water mark (it never shrinks), so flat means no growth after that; a sample at each quarter shows it.
// Usage: npm run soak:page [-- --keys 1000 --switches 100 --files 50 --seed 31]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium_support.mjs';

const arg = (name, def) => {
  const k = process.argv.indexOf(`--${name}`);
  return k >= 0 ? Number(process.argv[k + 1]) : def;
};
const KEYS = arg('keys', 1000);
const SWITCHES = arg('switches', 100);
const FILES = arg('files', 50);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FIX = path.join(root, 'tests', 'fixtures');

// the project's one seeded generator (web/rng.js)
const { mulberry32 } = await import('../web/rng.js');
const rnd = mulberry32(arg('seed', 31));
const int = (n) => Math.floor(rnd() * n);

const file = (dir, name, as = name) => ({ name: as, mimeType: 'application/octet-stream', buffer: readFileSync(path.join(dir, name)) });
const LLAMA = path.join(FIX, 'modern', 'llama-f32-untied-gqa-llama3');
const llamaFiles = () => [file(LLAMA, 'config.json'), file(LLAMA, 'tokenizer.json'),
  file(LLAMA, 'sharded/model-00002-of-00002.safetensors', 'model-00002-of-00002.safetensors'),
  file(LLAMA, 'sharded/model-00001-of-00002.safetensors', 'model-00001-of-00002.safetensors'),
  file(LLAMA, 'sharded/model.safetensors.index.json', 'model.safetensors.index.json')];
const ATTN = path.join(FIX, 'attention_file');
const attnFiles = ['f32.safetensors', 'bf16.safetensors', 'f16.safetensors', 'cross-bf16.safetensors', 'uniform-f32.safetensors'];

const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-site.mjs')], { cwd: root, encoding: 'utf8' });
if (built.status !== 0) {
  console.error(`scripts/build-site.mjs failed:\n${built.stdout}${built.stderr}`);
  process.exit(1);
}
const { server, url: base } = await startServer({ root: path.join(root, 'build', 'site'), port: 0 });
const profile = mkdtempSync(path.join(tmpdir(), 'attnscope-soak-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 800 }, args: CHROMIUM_ARGS,
});
const page = await context.newPage();
const errors = [];
page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
const cdp = await context.newCDPSession(page);

const runs = () => page.evaluate(() => window.__attnscope?.runs ?? 0);
async function settled(after) {
  await page.waitForFunction((n) => {
    const a = window.__attnscope;
    const d = document.documentElement.dataset;
    return a && a.runs > n && !d.busy && !d.drawing && !d.redraw && !d.loading;
  }, after, { timeout: 120000 });
}
/** Waits for the page to be quiet without asking for a new run (a step that may not recompute). */
const quiet = () => page.waitForFunction(() => {
  const d = document.documentElement.dataset;
  return !d.busy && !d.drawing && !d.redraw && !d.loading;
}, null, { timeout: 120000 });

await page.goto(`${base}web/`);
await settled(0);
const bundled = await page.$$eval('#model-bundled option:not([disabled])', (os) => os.map((o) => o.value));
const targets = ['random', ...bundled, 'checkpoint'];

async function stats() {
  await quiet();
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  const wasm = await page.evaluate(() => window.__attnscope.memory());
  return { js: usedSize, heap: wasm.heapSize, allocated: wasm.allocated };
}

const count = { keys: 0, switches: 0, files: 0 };
async function keystrokes(k) {
  if (await page.locator('#text').isHidden()) return;
  await page.focus('#text');
  for (let i = 0; i < k; i++) {
    const before = await runs();
    if (int(4) === 0) await page.keyboard.press('Backspace');
    else await page.keyboard.type('abcdefghij klmnopqrstuvwxyz'[int(27)]);
    count.keys++;
    if (i % 10 === 9) await settled(before).catch(() => quiet());
  }
  await quiet();
}
async function switchModel(pick = null) {
  const to = pick ?? targets[int(targets.length)];
  const before = await runs();
  if (to === 'checkpoint') {
    if (await page.inputValue('#model') !== 'checkpoint') await page.selectOption('#model', 'checkpoint');
    await page.locator('#ckpt-files').setInputFiles(llamaFiles());
    await page.waitForFunction(() => window.__attnscope.info.checkpoint && !document.documentElement.dataset.loading, null, { timeout: 120000 });
  } else {
    if (await page.inputValue('#model') === to) return pick ? undefined : switchModel(); // a switch changes the model
    await page.selectOption('#model', to);
  }
  await settled(before);
  count.switches++;
}
async function openFile() {
  const before = await runs();
  if (await page.locator('#attnfile-box').isHidden()) await page.selectOption('#model', 'file');
  await page.setInputFiles('#attnfile-input', file(ATTN, attnFiles[int(attnFiles.length)]));
  await settled(before);
  count.files++;
}

/** Switches spread evenly, a burst of keystrokes after each, file opens among them; `sample` every quarter. */
async function drive(keys, switches, files, samples = null) {
  for (let s = 0; s < switches; s++) {
    await switchModel();
    await keystrokes(Math.round(((s + 1) * keys) / switches) - Math.round((s * keys) / switches));
    if (Math.floor(((s + 1) * files) / switches) > Math.floor((s * files) / switches)) await openFile();
    if (samples && (s + 1) % Math.max(1, Math.round(switches / 4)) === 0) samples.push(await stats());
  }
}

const t0 = Date.now();
// warm-up: every model once (the page keeps each bundled model it has loaded), then a short random drive
for (const to of targets) await switchModel(to);
await drive(100, 10, 5);
const warm = await stats();
const warmCount = { ...count };
const samples = [];
await drive(KEYS, SWITCHES, FILES, samples);
const end = await stats();
const minutes = ((Date.now() - t0) / 60000).toFixed(1);
const MB = (b) => (b / 2 ** 20).toFixed(1);
console.log(`Page soak: ${count.keys - warmCount.keys} keystrokes, ${count.switches - warmCount.switches} model switches, ${count.files - warmCount.files} file opens after a warm-up of ${warmCount.keys} / ${warmCount.switches} / ${warmCount.files} (${minutes} min, seed ${arg('seed', 31)}; models: ${targets.join(', ')})\n`);
console.log('| measure | after warm-up | after the soak | change |');
console.log('|---|---|---|---|');
console.log(`| page JS heap (after GC), MB | ${MB(warm.js)} | ${MB(end.js)} | ${MB(end.js - warm.js)} |`);
console.log(`| worker wasm memory, MB | ${MB(warm.heap)} | ${MB(end.heap)} | ${MB(end.heap - warm.heap)} |`);
console.log(`| worker wasm allocated, MB | ${MB(warm.allocated)} | ${MB(end.allocated)} | ${MB(end.allocated - warm.allocated)} |`);
console.log(`\nAt each quarter of the soak (JS heap / wasm memory / allocated, MB): ${samples.map((x) => `${MB(x.js)} / ${MB(x.heap)} / ${MB(x.allocated)}`).join(' · ')}`);
console.log(`\nconsole errors and uncaught exceptions: ${errors.length}`);
for (const e of errors.slice(0, 20)) console.log(`- ${e}`);
await context.close();
server.close();
rmSync(profile, { recursive: true, force: true });
