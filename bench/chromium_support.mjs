// chromium_support.mjs: what the Chromium benches share (bench/gpt2_bench.mjs, bench/llm_engines.mjs): Debian's
// chromium binary and flags for playwright-core, the content types of the loopback servers, and the resident memory
// of a browser's processes read from /proc. Layer: bench.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--no-first-run', '--disable-sync', '--disable-quic', '--enable-precise-memory-info'];
export const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm' };

// Peak and current resident memory (VmHWM, VmRSS from /proc) of the Chromium processes under the browser
// whose command line names `profile`: { browser, renderers: [...] } in bytes.
export function chromiumMemory(profile) {
  const procs = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      // (Chromium's child processes rewrite their title: the arguments may arrive as one space-joined string)
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
      const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (k) => Number((status.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm')) ?? [0, 0])[1]) * 1024;
      procs.push({ pid: Number(pid), ppid, cmd, hwm: kb('VmHWM'), rss: kb('VmRSS') });
    } catch { /* exited */ }
  }
  const root = procs.find((p) => p.cmd.some((a) => a === `--user-data-dir=${profile}`) && !p.cmd.some((a) => a.startsWith('--type=')));
  if (!root) return null;
  const under = new Set([root.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) if (!under.has(p.pid) && under.has(p.ppid)) { under.add(p.pid); grew = true; }
  }
  const renderers = procs.filter((p) => under.has(p.pid) && p.cmd.some((a) => a === '--type=renderer'));
  return { browser: { hwm: root.hwm, rss: root.rss }, renderers: renderers.map((p) => ({ hwm: p.hwm, rss: p.rss })) };
}

/**
 * Runs `fn(page, profile, errors)` in a fresh headless Chromium (its own profile folder under the temporary
 * directory, named with `prefix`) on `base`; `errors` collects the page's uncaught errors. The browser and its
 * profile are removed afterwards.
 */
export async function inChromium(prefix, base, fn) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), prefix));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(base);
    return await fn(page, profile, errors);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
