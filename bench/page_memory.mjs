// page_memory.mjs: where the renderer's memory goes when the page streams a 1B-shaped BF16 checkpoint at 2,048 tokens
// (issue 28; a diagnosis tool, not a test: nothing passes or fails). Loads the checkpoint of
// bench/llama1b_checkpoint.mjs (--layers L, written once into --keep DIR) in the page's "Your own checkpoint…",
// sets a text of --tokens n bytes, and at each moment (loaded; n tokens drawn; a second run; after a forced
// garbage collection of the worker and the page) prints the renderer's resident memory from /proc/<pid>/smaps
// grouped by mapping (the wasm memory's reservation, V8's pointer cage, other anonymous mappings by size), the
// canvases the page holds and the JS heaps (CDP). Chromium runs with --js-flags=--expose-gc so that gc() can be
// called in the worker. Usage: node bench/page_memory.mjs --keep /tmp/1b --layers 4 [--tokens 2048] (--tokens 512: the
// step where the page's usual path held every layer's [32, 512, 512] maps; it says which path the page took)
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../scripts/serve.mjs';
import { CFG, writeCheckpoint } from './llama1b_checkpoint.mjs';
import { rendererPids as renderers } from './page_long.mjs';

const arg = (name, def) => {
  const k = process.argv.indexOf(`--${name}`);
  return k >= 0 ? process.argv[k + 1] : def;
};
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const layers = Number(arg('layers', '4'));
const n = Number(arg('tokens', '2048'));
const keep = arg('keep', null);
if (!keep) throw new Error('--keep DIR is required (the checkpoint is written there once)');
const sub = path.join(keep, `layers-${layers}`);
mkdirSync(sub, { recursive: true });
const cfg = { ...CFG, num_hidden_layers: layers };
if (!existsSync(path.join(sub, 'model.safetensors'))) writeCheckpoint(sub, cfg);
writeFileSync(path.join(sub, 'config.json'), JSON.stringify(cfg));
copyFileSync(path.join(root, 'tests', 'fixtures', 'modern', 'llama-bf16-tied-mqa-headdim-linear-v5', 'tokenizer.json'), path.join(sub, 'tokenizer.json'));

const MB = (b) => (b / 2 ** 20).toFixed(0);

/** One renderer's smaps: every mapping with its size and resident bytes. */
function smaps(pid) {
  const out = [];
  let cur = null;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) {
      cur = { start: m[1], size: Number(BigInt(`0x${m[2]}`) - BigInt(`0x${m[1]}`)), perms: m[3], name: m[4] || '[anon]', rss: 0 };
      out.push(cur);
    } else if (cur && line.startsWith('Rss:')) cur.rss = Number(/(\d+)/.exec(line)[1]) * 1024;
  }
  return out;
}

function report(label) {
  for (const pid of renderers()) {
    const maps = smaps(pid);
    const total = maps.reduce((s, m) => s + m.rss, 0);
    if (total < 200 * 2 ** 20) continue; // the bench's other renderers (about:blank)
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)[1]) * 1024;
    console.log(`\n== ${label}: renderer ${pid}: Rss ${MB(total)} MiB (VmHWM ${MB(hwm)})`);
    const groups = new Map();
    const add = (k, m) => {
      const g = groups.get(k) ?? { rss: 0, size: 0, count: 0 };
      g.rss += m.rss; g.size += m.size; g.count += 1;
      groups.set(k, g);
    };
    for (const m of maps) {
      let k;
      if (m.name !== '[anon]') k = m.name.startsWith('/') ? 'files' : m.name;
      else if (m.size >= 2 ** 32) k = `anon reservation ≥ 4 GiB (${MB(m.size)} MiB)`;
      else if (m.size >= 64 * 2 ** 20) k = 'anon 64 MiB–4 GiB';
      else if (m.size >= 4 * 2 ** 20) k = 'anon 4–64 MiB';
      else if (m.size >= 2 ** 20) k = 'anon 1–4 MiB';
      else k = 'anon < 1 MiB';
      add(k, m);
    }
    for (const [k, g] of [...groups].sort((a, b) => b[1].rss - a[1].rss)) {
      if (g.rss > 4 * 2 ** 20) console.log(`  ${k.padEnd(44)} rss ${MB(g.rss).padStart(6)} MiB in ${g.count} mappings (${MB(g.size)} MiB mapped)`);
    }
    const big = maps.filter((m) => m.rss > 4 * 2 ** 20).sort((a, b) => b.rss - a.rss).slice(0, 25);
    console.log('  largest resident mappings: ' + big.map((m) => `${m.start.slice(-9)} ${MB(m.rss)}/${MB(m.size)} ${m.perms}`).join('; '));
  }
}

const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-site.mjs')], { cwd: root, encoding: 'utf8' });
if (built.status !== 0) throw new Error(built.stderr);
const { server, url: base } = await startServer({ root: path.join(root, 'build', 'site'), port: 0 });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run',
    '--disable-sync', '--disable-quic', '--js-flags=--expose-gc'],
});
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  page.on('pageerror', (e) => console.error('pageerror', e.message));
  page.on('console', (m) => { if (/streamWeights/.test(m.text())) console.log(`console: ${m.text()}`); }); // blob-reader's warning
  await page.goto(`${base}web/#text=hello`);
  await page.waitForFunction(() => window.__attnscope?.runs > 0 && !document.documentElement.dataset.busy, null, { timeout: 120e3 });
  const t0 = Date.now();
  await page.selectOption('#model', 'checkpoint');
  await page.locator('#ckpt-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(sub, f)));
  await page.waitForFunction(() => window.__attnscope.traceState?.model === 'checkpoint' && !document.documentElement.dataset.busy, null, { timeout: 3600e3 });
  console.log(`loaded in ${((Date.now() - t0) / 1e3).toFixed(0)} s: ${await page.locator('#ckpt-msg').textContent()}`);
  const cdp = await context.newCDPSession(page);
  const worker = page.workers().find((w) => /worker\.js/.test(w.url()));
  const heaps = async () => {
    const { usedSize, totalSize } = await cdp.send('Runtime.getHeapUsage');
    const w = worker ? await worker.evaluate(() => (typeof gc === 'function' ? 'gc available' : 'no gc')) : 'no worker';
    const canvases = await page.evaluate(() => [...document.querySelectorAll('canvas')].map((c) => c.width * c.height * 4));
    console.log(`  page JS heap ${MB(usedSize)}/${MB(totalSize)} MiB; worker: ${w}; ${canvases.length} canvases in the DOM, ${MB(canvases.reduce((a, b) => a + b, 0))} MiB of pixels (largest ${MB(Math.max(0, ...canvases))})`);
  };
  report('checkpoint loaded, 5 tokens');
  await heaps();
  const text = (k) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(k / 45)).slice(0, k);
  for (const [label, t] of [[`${n} tokens drawn`, text(n)], [`${n} tokens again (one byte changed)`, `${text(n - 1)}x`]]) {
    const runs0 = await page.evaluate(() => window.__attnscope.runs);
    const t1 = Date.now();
    await page.fill('#text', t);
    await page.waitForFunction((r) => window.__attnscope.runs > r && !document.documentElement.dataset.busy && document.documentElement.dataset.drawn, runs0, { timeout: 3600e3 });
    const shown = await page.evaluate(() => ({
      n: window.__attnscope.trace?.n, long: window.__attnscope.trace?.long ?? null, error: document.getElementById('error')?.textContent?.trim() || '',
    }));
    // which path the page took (web/long.js usualMax): at 512 tokens and below, the long one once every map would pass its budget
    const path = shown.long ? `the long path (summaries + the maps on screen; the usual one up to ${shown.long.limit ?? 512} tokens)` : 'the usual path (every layer\'s maps)';
    console.log(`\n${label} in ${((Date.now() - t1) / 1e3).toFixed(0)} s: the page shows ${shown.n} tokens by ${path}${shown.error ? `; error: ${shown.error}` : ''}`);
    report(label);
    await heaps();
  }
  if (worker) {
    await worker.evaluate(() => { gc(); gc(); });
    await page.evaluate(() => { if (typeof gc === 'function') { gc(); gc(); } });
    await new Promise((r) => { setTimeout(r, 3000); });
    report('after gc() in the worker and the page');
    await heaps();
  }
} finally {
  await browser.close();
  server.close();
}
