// Page latency benchmark (issue 13's "512 tokens that stay smooth"; not a test: nothing here passes or fails).
// Headless Debian Chromium through playwright-core on build/site, as tests/browser/harness.js does; prints the
// medians (over --runs, default 5) of the three targets as a Markdown table:
//   1. keystroke → drawn: from a key's keydown in the text box to the frame that shows the new text's trace in
//      every view on screen (html[data-shown], then the next frame: its style, layout and paint), at 128 tokens
//      × 4 layers × 8 heads × dModel 256 and 512 × 6 × 12 × 384 (seeded random encoder, word tokenizer: one token
//      per word); also, not a target, to every view drawn (html[data-drawn]: the ones off screen are drawn when
//      the page is idle, or when scrolled to);
//   2. the longest main-thread task (PerformanceObserver 'longtask': tasks of 50 ms and more; "< 50" when
//      there was none) on hovering a heatmap cell, hovering a token of the lines view, clicking a token and
//      toggling a head, at 512 tokens × 12 layers × 12 heads (dModel 384), each with its target already scrolled
//      into view (the jump-scroll from the heatmaps to the lines view, which draws a screenful not drawn yet, has a
//      row of its own);
//   3. cold load → first heatmap: a fresh browser context opens the default page; time from navigation start
//      to the first attention heatmap canvas in the DOM.
//   4. (not a target) one draw of the model view's 12 × 12 head thumbnails.
//   5. warm load → first heatmap: the default page opened a second time in the same browser profile (its HTTP cache
//      and the compiled code cached beside it on the first visit).
// Usage: npm run bench:page [-- --runs 7] [-- --only keystroke,interact,modelview,cold,warm] [-- --root DIR]
//   [-- --ab SITE]
// --root: another checkout of the project (e.g. an older commit unpacked with git archive, with dist/ and
// node_modules/ linked in) to measure instead of this one; its scripts/build-site.mjs builds its site.
// --ab SITE: an A/B of the loads (cold, warm): SITE, a built site (e.g. a copy of an older build/site), is served
// beside this one and the two are measured alternately, run by run, in the same minutes (a shared machine's load
// changes faster than a whole bench); rows "A" are SITE, "B" this checkout.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../scripts/serve.mjs';

const arg = (name, def) => {
  const k = process.argv.indexOf(`--${name}`);
  return k >= 0 ? process.argv[k + 1] : def;
};
const root = path.resolve(arg('root', path.join(path.dirname(fileURLToPath(import.meta.url)), '..')));
const RUNS = Math.max(1, Number(arg('runs', 5)));
const ONLY = new Set(arg('only', 'keystroke,interact,modelview,cold,warm,long').split(','));

const WORDS = 'the quick brown fox jumps over a lazy dog while seven tired cats watch from an old red barn'.split(' ');
const words = (n) => Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join(' ');
const hashOf = (n, L, H, d) => `#text=${encodeURIComponent(words(n))}&numLayers=${L}&numHeads=${H}&dModel=${d}&dFF=${4 * d}`;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-site.mjs')], { cwd: root, encoding: 'utf8' });
if (built.status !== 0) {
  console.error(`scripts/build-site.mjs failed:\n${built.stdout}${built.stderr}`);
  process.exit(1);
}
const { server, url: ownBase } = await startServer({ root: path.join(root, 'build', 'site'), port: 0 });
const AB = arg('ab', null);
const other = AB ? await startServer({ root: path.resolve(AB), port: 0 }) : null;
let base = ownBase;
// the load sites: [label, base URL]; one unlabelled entry without --ab
const SITES = other ? [['A', other.url], ['B', ownBase]] : [['', ownBase]];
const label = (l, name) => (l ? `${l}: ${name}` : name);
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--no-first-run', '--disable-sync', '--disable-quic'];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });

// installed before the page's scripts: long tasks, and the time the first attention heatmap appears
const FIRST_HEATMAP = 'attnscope-bench: first heatmap';
const PROBE = (FIRST_HEATMAP) => {
  window.__bench = { long: [], firstHeatmap: null };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__bench.long.push(e.duration);
  }).observe({ type: 'longtask', buffered: true });
  new MutationObserver((_, obs) => {
    if (document.querySelector('#attention-view canvas[data-kind="attention"]')) {
      window.__bench.firstHeatmap = performance.now();
      obs.disconnect();
      console.debug(FIRST_HEATMAP); // the cold-load measure waits for this rather than polling the page
    }
  }).observe(document, { childList: true, subtree: true });
};

async function openPage(context, hash) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.addInitScript(PROBE, FIRST_HEATMAP);
  await page.goto(`${base}web/${hash}`);
  await idle(page, 0);
  return { page, errors };
}

// how long a run may take (ms); the long-input rows (./page_long.mjs) raise it: 2,048 tokens through a 1B shape take minutes
const limits = { run: 120000 };

/** Waits until more than `runs` results arrived, nothing is pending, every view is drawn and two frames passed. */
async function idle(page, runs) {
  await page.waitForFunction((n) => {
    const a = window.__attnscope;
    return a && a.runs > n && !document.documentElement.dataset.busy && document.documentElement.dataset.drawn;
  }, runs, { timeout: limits.run });
  await page.evaluate(() => new Promise((r) => { requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 50))); }));
}

/**
 * keystroke → drawn, ms: from keydown in #text to the frame that shows the new text's trace in every view on
 * screen (html[data-shown], set once the panels in and near the viewport are drawn), and to every view drawn
 * (html[data-drawn]: the panels below the fold too, drawn when the page is idle).
 */
async function keystroke(page, key) {
  const runs = await page.evaluate(() => window.__attnscope.runs);
  await page.evaluate(() => {
    const b = window.__bench;
    b.key = null;
    b.shown = null;
    b.drawn = null;
    document.getElementById('text').addEventListener('keydown', (e) => { b.key = e.timeStamp; }, { once: true });
    const trace0 = window.__attnscope.trace;
    const html = document.documentElement;
    const shown0 = html.dataset.shown;
    const drawn0 = html.dataset.drawn;
    // the frame that shows it: rAF runs before its style and layout, a task queued there runs after
    const frame = (k) => requestAnimationFrame(() => setTimeout(() => { b[k] = performance.now(); }, 0));
    const obs = new MutationObserver(() => {
      if (b.key == null || window.__attnscope.trace === trace0) return;
      if (b.shown == null && html.dataset.shown !== shown0) { b.shown = -1; frame('shown'); }
      if (html.dataset.drawn !== drawn0) { obs.disconnect(); frame('drawn'); }
    });
    obs.observe(html, { attributes: true, attributeFilter: ['data-shown', 'data-drawn'] });
  });
  await page.keyboard.press(key);
  await idle(page, runs);
  await page.waitForFunction(() => window.__bench.drawn != null && window.__bench.shown > 0, null, { timeout: limits.run });
  return page.evaluate(() => [window.__bench.shown - window.__bench.key, window.__bench.drawn - window.__bench.key]);
}

/** The longest task (ms, ≥ 50 or 0) while `action` runs and the page settles. */
async function longest(page, action) {
  await page.evaluate(() => { window.__bench.long = []; });
  await action();
  await page.evaluate(() => new Promise((r) => { requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 300))); }));
  return page.evaluate(() => Math.max(0, ...window.__bench.long));
}

const rows = [];
const fmtMs = (v) => (v < 50 && v === 0 ? '< 50' : `${Math.round(v)}`);

if (ONLY.has('keystroke')) {
  for (const [n, L, H, d, target] of [[128, 4, 8, 256, 150], [512, 6, 12, 384, 600]]) {
    const context = await browser.newContext();
    const { page, errors } = await openPage(context, hashOf(n, L, H, d));
    const got = await page.evaluate(() => window.__attnscope.trace.n);
    if (got !== n) throw new Error(`expected ${n} tokens, the page has ${got}`);
    await page.click('#text');
    await page.keyboard.press('End');
    await keystroke(page, 'x'); // warm-up (JIT, caches)
    await keystroke(page, 'Backspace');
    const shown = [];
    const drawn = [];
    for (let r = 0; r < RUNS; r++) {
      for (const k of ['x', 'Backspace']) {
        const [a, b] = await keystroke(page, k);
        shown.push(a);
        drawn.push(b);
      }
    }
    rows.push([`keystroke → drawn on screen, ${n} × ${L} × ${H} × ${d}`, `≤ ${target}`, median(shown), shown]);
    rows.push([`keystroke → every view drawn (off-screen ones when idle), ${n} × ${L} × ${H} × ${d}`, '—', median(drawn), drawn]);
    if (errors.length) console.error(errors);
    await context.close();
  }
}

if (ONLY.has('interact')) {
  const context = await browser.newContext();
  const { page, errors } = await openPage(context, hashOf(512, 12, 12, 384));
  const canvas = page.locator('#attention-view canvas[data-kind="attention"]').first();
  const hover = [];
  const hoverLines = [];
  const click = [];
  const toggle = [];
  const jump = [];
  // each target is scrolled into view first, outside the measure: a hover, click or toggle is measured alone
  // (a jump-scroll to a part of the page not drawn yet is measured on its own row)
  const inView = async (loc) => {
    await loc.scrollIntoViewIfNeeded();
    await page.evaluate(() => new Promise((r) => { requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 300))); }));
  };
  for (let r = 0; r < RUNS; r++) {
    await inView(canvas);
    const box = await canvas.boundingBox();
    hover.push(await longest(page, async () => {
      for (let k = 0; k < 10; k++) await page.mouse.move(box.x + box.width * (0.1 + 0.08 * k), box.y + box.height * (0.9 - 0.08 * k));
    }));
    const tok = page.locator('#attention-view .lines-tokens.left .lines-token').nth(40 + r);
    jump.push(await longest(page, () => tok.scrollIntoViewIfNeeded()));
    await inView(tok);
    hoverLines.push(await longest(page, async () => {
      await tok.hover();
      await page.mouse.move(0, 0);
    }));
    const chip = page.locator('#tokens .chip').nth(10 + 7 * r);
    await inView(chip);
    click.push(await longest(page, async () => {
      await chip.click();
      await page.waitForFunction(() => document.documentElement.dataset.drawn && !document.documentElement.dataset.busy);
    }));
    const head = page.locator('.head-chip').nth(3);
    await inView(head);
    toggle.push(await longest(page, async () => {
      await head.click();
    }));
  }
  rows.push(['longest task, hover a heatmap cell (10 moves), 512 × 12 × 12', '≤ 50', median(hover), hover]);
  rows.push(['longest task, hover a lines token, 512 × 12 × 12', '≤ 50', median(hoverLines), hoverLines]);
  rows.push(['longest task, click a token, 512 × 12 × 12', '≤ 50', median(click), click]);
  rows.push(['longest task, toggle a head, 512 × 12 × 12', '≤ 50', median(toggle), toggle]);
  rows.push(['longest task, jump-scroll from the heatmaps to the lines view, 512 × 12 × 12', '—', median(jump), jump]);
  if (errors.length) console.error(errors);
  await context.close();
}

// 4. not a target: one draw of the model view's 12 × 12 thumbnails (12 tokens), the view function alone, median of
// 7 draws per run (family.test.js asserted < 100 ms here until timings left the tests; 11-40 ms measured then)
if (ONLY.has('modelview')) {
  const context = await browser.newContext();
  const text = 'The animal did not cross the street because it was too tired';
  const { page, errors } = await openPage(context, `#numLayers=12&numHeads=12&dModel=48&dFF=96&text=${encodeURIComponent(text)}`);
  const times = [];
  for (let r = 0; r < RUNS; r++) {
    times.push(await page.evaluate(async () => {
      const { modelView } = await import('/web/views/modelview.js');
      const trace = window.__attnscope.trace;
      const z = Array(12).fill(new Float64Array(12));
      const sections = [{
        key: 'self', title: 'Self-attention', weights: trace.layers.map((ly) => ly.attention.weights), H: 12, n: trace.n, m: trace.n,
        entropy: z, distance: z, open: true,
      }];
      const args = { sections, width: 900, layer: 0, heads: [0], onOpen() {} };
      const ms = [];
      for (let k = 0; k < 7; k++) {
        const t0 = performance.now();
        modelView(args);
        ms.push(performance.now() - t0);
      }
      return ms.sort((a, b) => a - b)[3];
    }));
  }
  rows.push(['model view, one draw of 12 × 12 heads (12 tokens)', '—', median(times), times]);
  if (errors.length) console.error(errors);
  await context.close();
}

/** Opens the default page in `context`; resolves to { page, ms }: navigation start → the first attention heatmap. */
async function firstHeatmap(context) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.addInitScript(PROBE, FIRST_HEATMAP);
  // waited for through the console: page.waitForFunction evaluates Playwright's injected script in the page
  // (~50-65 ms of its main thread, a trace shows) in the middle of the load it measures
  const seen = page.waitForEvent('console', { predicate: (m) => m.text() === FIRST_HEATMAP, timeout: 60000 });
  await page.goto(`${base}web/`, { waitUntil: 'commit' });
  await seen;
  return { page, ms: await page.evaluate(() => window.__bench.firstHeatmap) };
}

if (ONLY.has('cold')) {
  const times = SITES.map(() => []);
  for (let r = 0; r < RUNS + 1; r++) {
    for (const [k, [, url]] of SITES.entries()) {
      base = url;
      const context = await browser.newContext(); // no HTTP cache, no compiled-code cache from the last run
      const { ms } = await firstHeatmap(context);
      if (r > 0) times[k].push(ms); // the first run also warms the server's file cache
      await context.close();
    }
  }
  for (const [k, [l]] of SITES.entries()) rows.push([label(l, 'cold load → first heatmap, default page'), '≤ 909 (stop 22)', median(times[k]), times[k]]);
}

// 5. warm load: the default page opened again in the browser profile that loaded it before (a fresh on-disk profile
// per run, as a person's browser has: an incognito-like context keeps no compiled code), after a pause in which the
// first visit's code is written to the cache beside its HTTP cache entries (scripts/serve.mjs answers 304 to an
// unchanged file, so the entries and their code stay)
if (ONLY.has('warm')) {
  const times = SITES.map(() => []);
  for (let r = 0; r < RUNS; r++) for (const [k, [, url]] of SITES.entries()) {
    base = url;
    const profile = mkdtempSync(path.join(tmpdir(), 'attnscope-bench-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
    const first = await firstHeatmap(context);
    await first.page.waitForTimeout(4000);
    await first.page.close();
    times[k].push((await firstHeatmap(context)).ms);
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  for (const [k, [l]] of SITES.entries()) rows.push([label(l, 'warm load (second visit) → first heatmap, default page'), '≤ 400', median(times[k]), times[k]]);
}

if (ONLY.has('long')) {
  const { runLong } = await import('./page_long.mjs');
  limits.run = Number(arg('long-timeout', 1800)) * 1e3; // s
  rows.push(...await runLong({
    browser, base, runs: RUNS, arg, root, keystroke, longest, idle, probe: (page) => page.addInitScript(PROBE, FIRST_HEATMAP),
  }));
}

await browser.close();
server.close();
other?.server.close();
console.log(`Headless Chromium, ${RUNS} runs each (medians; ms)\n`);
console.log('| measure | target | median | runs |');
console.log('|---|---|---|---|');
for (const [name, target, med, all] of rows) console.log(`| ${name} | ${target} | ${fmtMs(med)} | ${all.map((v) => Math.round(v)).join(', ')} |`);
