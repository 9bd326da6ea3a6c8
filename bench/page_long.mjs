// The page at 128, 512 and 2,048 tokens through a Llama-3.2-1B-shaped BF16 checkpoint (issue 28; part of
// bench/page_latency.mjs, `--only long`): the checkpoint is written at bench time (bench/llama1b_checkpoint.mjs; never
// committed; --keep DIR reuses one), chosen in "Your own checkpoint…" and the text set to n bytes (one token per byte:
// the byte-level tokenizer of tests/fixtures/modern has no merges). Reports per n the medians of keystroke → on
// screen and click a token → longest task, and at 2,048 tokens the renderer's memory: the JS heap of the page
// (CDP Performance.getMetrics) and the resident memory of every renderer process of this browser (from /proc, the
// page's worker and its wasm heap — the weights held, 2 bytes each — included; above 1 GB of weights the page streams
// the layers from the file: web/stream-weights.js, and logs the model status saying so). --long-layers L: a checkpoint of L layers
// instead of 16 (a loaded machine: one forward of 2,048 tokens through 16 layers is minutes of CPU); --long-sizes
// 128,512,2048: the token counts measured.
import {
  copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CFG, writeCheckpoint } from './llama1b_checkpoint.mjs';

/** The pids of every chromium renderer process below this Node process (the browser it launched). */
export function rendererPids() {
  const procs = new Map();
  for (const pid of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      procs.set(Number(pid), { ppid, renderer: readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer') });
    } catch { /* gone */ }
  }
  const mine = (pid) => {
    for (let p = pid, k = 0; p > 1 && k < 20; p = procs.get(p)?.ppid ?? 0, k++) if (p === process.pid) return true;
    return false;
  };
  return [...procs.entries()].filter(([pid, x]) => x.renderer && mine(pid)).map(([pid]) => pid);
}

/** The resident bytes of every chromium renderer process below this Node process. */
function rendererRss() {
  return rendererPids().map((pid) => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      return 0; // gone
    }
  });
}

/** rows of the Markdown table: [name, target, median, runs]. */
export async function runLong({
  browser, base, runs, arg, root, keystroke, longest, idle, probe,
}) {
  const layers = Number(arg('long-layers', String(CFG.num_hidden_layers)));
  const cfg = { ...CFG, num_hidden_layers: layers };
  const keep = arg('keep', null);
  const dir = keep ?? mkdtempSync(path.join(tmpdir(), 'attnscope-page-1b-'));
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  const rows = [];
  try {
    const sub = path.join(dir, `layers-${layers}`); // config.json, model.safetensors, tokenizer.json: chosen as files
    mkdirSync(sub, { recursive: true });
    const file = path.join(sub, 'model.safetensors');
    if (!existsSync(file)) writeCheckpoint(sub, cfg);
    writeFileSync(path.join(sub, 'config.json'), JSON.stringify(cfg));
    copyFileSync(path.join(root, 'tests', 'fixtures', 'modern', 'llama-bf16-tied-mqa-headdim-linear-v5', 'tokenizer.json'), path.join(sub, 'tokenizer.json'));
    const text = (n) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await probe(page); // window.__bench: long tasks, as the other rows
    await page.goto(`${base}web/#text=${encodeURIComponent('hello')}`); // not text(128): each n below is a new text
    await idle(page, 0);
    await page.selectOption('#model', 'checkpoint');
    const t0 = Date.now();
    await page.locator('#ckpt-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(sub, f)));
    await page.waitForFunction(() => window.__attnscope.traceState?.model === 'checkpoint' && !document.documentElement.dataset.busy,
      null, { timeout: 3600e3 });
    console.error(`page: ${layers}-layer 1B-shaped checkpoint loaded and first run drawn in ${((Date.now() - t0) / 1e3).toFixed(0)} s`);
    // the model status: whether the page streams the layers from the file (web/stream-weights.js: above 1 GB)
    console.error(`page: status "${await page.locator('#ckpt-msg').textContent()}"`);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    for (const n of arg('long-sizes', '128,512,2048').split(',').map(Number)) {
      const runs0 = await page.evaluate(() => window.__attnscope.runs);
      await page.fill('#text', text(n));
      await idle(page, runs0);
      console.error(`page: ${n} tokens drawn`);
      const got = await page.evaluate(() => window.__attnscope.trace.n);
      if (got !== n) throw new Error(`expected ${n} tokens, the page has ${got}`);
      await page.click('#text');
      await page.keyboard.press('End');
      const shown = [];
      const clicks = [];
      for (let r = 0; r < runs; r++) {
        for (const k of ['Backspace', 'x']) shown.push((await keystroke(page, k))[0]); // n − 1, then n: never past 2,048
        console.error(`page: ${n} tokens, keystrokes ${shown.map(Math.round).join(', ')} ms`);
        const chip = page.locator('#tokens .chip').nth(10 + 7 * r);
        await chip.scrollIntoViewIfNeeded();
        clicks.push(await longest(page, async () => {
          await chip.click();
          await page.waitForFunction(() => document.documentElement.dataset.drawn && !document.documentElement.dataset.busy, null, { timeout: 3600e3 });
        }));
        await page.click('#text');
        await page.keyboard.press('End');
      }
      const shape = `${n} tokens, 1B-shaped BF16 (${layers} layers × 32 heads)`;
      rows.push([`keystroke → drawn on screen, ${shape}`, n <= 512 ? '≤ 600' : '—', median(shown), shown]);
      rows.push([`longest task, click a token, ${shape}`, '≤ 50', median(clicks), clicks]);
      console.error(`page: ${n} tokens, click → longest task ${clicks.map(Math.round).join(', ')} ms`);
      if (n === 2048) {
        const { metrics } = await cdp.send('Performance.getMetrics');
        const heap = metrics.find((m) => m.name === 'JSHeapUsedSize').value;
        const rss = rendererRss();
        rows.push([`page JS heap (main thread) at 2,048 tokens, MB`, '< 1,536', heap / 2 ** 20, [heap / 2 ** 20]]);
        console.error(`page: 2,048 tokens, JS heap ${(heap / 2 ** 20).toFixed(0)} MB, renderers' RSS ${rss.map((b) => (b / 2 ** 20).toFixed(0)).join(', ')} MB`);
        rows.push([`renderer processes' resident memory at 2,048 tokens (worker and wasm heap, weights included), MB`, '< 1,536',
          Math.max(...rss) / 2 ** 20, rss.map((b) => b / 2 ** 20)]);
      }
    }
    if (errors.length) console.error(errors);
    await context.close();
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
