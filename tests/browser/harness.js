// The browser tests' shared harness: playwright-core driving Debian's chromium (shared/TOOLCHAIN.md 13)
// on build/site, served by scripts/serve.mjs on a free loopback port (one server and one Chromium per test file). `useBrowser()` registers the launch
// and teardown hooks of a test file; `open()` opens the page and records everything that must not happen
// (console errors, page errors, dialogs, failed responses, requests that leave the origin); `clean()`
// asserts none did. Not a test file itself (node --test runs only *.test.js).
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const shots = path.join(root, 'build', 'screenshots');
const CHROMIUM = '/usr/bin/chromium';

/**
 * Registers before/after hooks that build the site, serve it and launch chromium, and returns
 * `open(hash, viewport, ready)`: a new page at web/<hash> and its record, once `ready(page)` resolved.
 */
export function useBrowser() {
  let server;
  let base; // http://127.0.0.1:PORT/
  let context;
  let profile;

  before(async () => {
    const missing = ['attnscope.mjs', 'attnscope.wasm', 'attnscope.simd.wasm'].filter((f) => !existsSync(path.join(root, 'dist', f)));
    if (missing.length) {
      throw new Error(`dist/ is missing ${missing.join(', ')}: build the module first (scripts/build.sh), then rerun the browser tests`);
    }
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: the browser tests need Debian's chromium package`);
    // scripts/test.sh builds the site once for the whole run (its files run side by side and share it); a file run
    // on its own builds it here
    if (process.env.ATTNSCOPE_SITE_BUILT !== '1') {
      const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-site.mjs')], { cwd: root, encoding: 'utf8' });
      if (built.status !== 0) throw new Error(`scripts/build-site.mjs failed:\n${built.stdout}${built.stderr}`);
    }
    ({ server, url: base } = await startServer({ root: path.join(root, 'build', 'site'), port: 0 }));
    profile = mkdtempSync(path.join(tmpdir(), 'attnscope-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--no-first-run', '--disable-sync', '--disable-quic'],
    });
    mkdirSync(shots, { recursive: true });
  });

  after(async () => {
    await context?.close();
    await new Promise((r) => (server ? server.close(r) : r()));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  // A new page whose failures are recorded; `own(url)` says which requests stay on the page's origin.
  async function watched(viewport, own) {
    const page = await context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    const rec = { errors: [], offOrigin: [], requests: [], dialogs: [], failed: [] };
    page.on('console', (m) => { if (m.type() === 'error') rec.errors.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => rec.errors.push(`pageerror: ${e.message}`));
    page.on('dialog', async (d) => { rec.dialogs.push(d.message()); await d.dismiss(); });
    page.on('request', (r) => {
      const u = r.url();
      rec.requests.push(u);
      if (!u.startsWith('blob:') && !u.startsWith('data:') && !own(u)) rec.offOrigin.push(u);
    });
    page.on('response', (r) => { if (r.status() >= 400) rec.failed.push(`${r.status()} ${r.url()}`); });
    return { page, rec };
  }

  // `setup(page)`, when given, runs before the page is opened (e.g. to route requests)
  async function open(hash = '', viewport = undefined, ready = (page) => settled(page, 0), setup = undefined) {
    const origin = new URL(base).origin;
    const { page, rec } = await watched(viewport, (u) => new URL(u).origin === origin);
    await setup?.(page);
    await page.goto(`${base}web/${hash}`);
    await ready(page);
    return { page, rec };
  }

  /**
   * `open.file(url, { viewport, ready, setup })`: a new page at a file:// URL (the single-file page, issue 14),
   * recorded as open() does; every request other than that file itself (and blob:/data: URLs) counts as
   * off-origin. `setup(page)` runs before the page is opened (e.g. to route requests).
   */
  open.file = async (url, { viewport, ready = (page) => settled(page, 0), setup } = {}) => {
    const own = url.replace(/#.*$/, '');
    const { page, rec } = await watched(viewport, (u) => u.replace(/#.*$/, '') === own);
    await setup?.(page);
    await page.goto(url);
    await ready(page);
    return { page, rec };
  };
  return open;
}

/** Waits until more than `runs` model results arrived and no request is pending; returns the run count. */
export async function settled(page, runs) {
  await page.waitForFunction((n) => {
    const a = window.__attnscope;
    const d = document.documentElement.dataset;
    return a && a.runs > n && !d.busy && !d.drawing && !d.redraw;
  }, runs, { timeout: 30000 });
  return page.evaluate(() => window.__attnscope.runs);
}

/** Runs `action` (which changes the input) and waits for the page to recompute and redraw. */
export async function after1(page, action) {
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await action();
  await settled(page, runs);
}

/**
 * Runs `action` (a view change, no recompute) and waits until every view has been redrawn: a render newer than
 * the last one finished (html[data-drawn]), none still drawing (html[data-drawing]: views off screen are drawn
 * when the page is idle) and no redraw due (html[data-redraw]: a resize, e.g. an element screenshot's, redraws
 * 150 ms later).
 */
export async function afterDraw(page, action) {
  const drawn = await page.evaluate(() => Number(document.documentElement.dataset.drawn ?? 0));
  await action();
  await page.waitForFunction((n) => {
    const d = document.documentElement.dataset;
    return Number(d.drawn ?? 0) > n && !d.drawing && !d.redraw;
  }, drawn, { timeout: 30000 });
}

/** Asserts that nothing `open()` records as a failure happened. */
export function clean(rec) {
  assert.deepEqual(rec.errors, [], 'no console errors or page errors');
  assert.deepEqual(rec.offOrigin, [], 'no request leaves the page origin');
  assert.deepEqual(rec.failed, [], 'no failed responses (the favicon is shipped)');
  assert.deepEqual(rec.dialogs, [], 'no dialog opened');
}

/** The page's error banner text, or null when hidden. */
export const errorText = (page) => page.evaluate(() => {
  const el = document.getElementById('error');
  return el.hidden ? null : el.textContent;
});

const AXE = readFileSync(path.join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page, as "rule: target (summary)" lines. */
export async function axeProblems(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id, impact: v.impact, nodes: v.nodes.map((n) => `${n.target.join(' ')} (${n.failureSummary.split('\n').slice(1, 2).join('').trim()})`),
    }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.slice(0, 4).map((n) => `${v.id} [${v.impact}]: ${n}`));
}
