// A warm load's critical path, from a Chromium trace (issue 24 §4; not a test). Opens the default page twice in one
// on-disk profile (as bench/page_latency.mjs's warm row does), traces the second visit through CDP and prints, per
// thread of the page's renderer (its main thread, the compute worker, the pool's workers), the tasks of ≥ --min ms
// and the marks that make up the path to the first heatmap, in ms from the navigation's start.
// Usage: node bench/page_trace.mjs [--site DIR (default build/site, served as is)] [--runs 1] [--min 2]
//   [--cold] (trace a first visit instead) [--json FILE] (the raw trace of the last run)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../scripts/serve.mjs';

const arg = (name, def) => {
  const k = process.argv.indexOf(`--${name}`);
  return k >= 0 ? process.argv[k + 1] : def;
};
const here = path.dirname(fileURLToPath(import.meta.url));
const site = path.resolve(arg('site', path.join(here, '..', 'build', 'site')));
const RUNS = Number(arg('runs', 1));
const MIN = Number(arg('min', 2));
const COLD = process.argv.includes('--cold');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--no-first-run', '--disable-sync', '--disable-quic'];
const CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'v8.wasm', 'blink', 'loading',
  'blink.user_timing', 'toplevel', 'v8.execute', 'disabled-by-default-v8.compile', 'navigation', 'blink.worker',
  'ServiceWorker', 'disabled-by-default-devtools.timeline.frame'].join(',');

const PROBE = () => {
  new MutationObserver((_, obs) => {
    if (document.querySelector('#attention-view canvas[data-kind="attention"]')) {
      performance.mark('first-heatmap');
      obs.disconnect();
      console.debug('attnscope-trace: first heatmap');
    }
  }).observe(document, { childList: true, subtree: true });
};

const { server, url } = await startServer({ root: site, port: 0 });

async function visit(context, cdp) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.addInitScript(PROBE);
  const seen = page.waitForEvent('console', { predicate: (m) => m.text() === 'attnscope-trace: first heatmap', timeout: 60000 });
  let events = null;
  if (cdp) {
    const s = await context.newCDPSession(page);
    // returned as a stream once traced: events sent while tracing would load this process (the server's) meanwhile
    const done = new Promise((r) => s.once('Tracing.tracingComplete', r));
    await s.send('Tracing.start', { categories: CATEGORIES, transferMode: 'ReturnAsStream' });
    await page.goto(`${url}web/`, { waitUntil: 'commit' });
    await seen;
    await page.waitForTimeout(200);
    await s.send('Tracing.end');
    const { stream } = await done;
    let text = '';
    for (;;) {
      const { data, eof } = await s.send('IO.read', { handle: stream, size: 1 << 22 });
      text += data;
      if (eof) break;
    }
    await s.send('IO.close', { handle: stream });
    const parsed = JSON.parse(text);
    events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
  } else {
    await page.goto(`${url}web/`, { waitUntil: 'commit' });
    await seen;
  }
  return { page, events };
}

function report(events) {
  const threads = new Map(); // pid:tid → name
  const procs = new Map();
  for (const e of events) {
    if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args.name);
    if (e.ph === 'M' && e.name === 'process_name') procs.set(e.pid, e.args.name);
  }
  // navigation start: from the first-heatmap mark (its startTime is ms from the page's time origin), else the
  // renderer's navigationStart (not always recorded when the page's renderer starts during the trace)
  const mark = events.find((e) => e.name === 'first-heatmap' && e.args?.data?.startTime != null);
  const nav = mark ? { ts: mark.ts - mark.args.data.startTime * 1000, pid: mark.pid }
    : events.find((e) => e.name === 'navigationStart' && e.args?.data?.documentLoaderURL?.includes('/web/'));
  const t0 = nav.ts;
  const rpid = nav.pid;
  const ms = (ts) => ((ts - t0) / 1000).toFixed(1);
  const name = (e) => {
    const n = threads.get(`${e.pid}:${e.tid}`) ?? `${e.pid}`;
    return n.startsWith('DedicatedWorker') ? `Worker ${e.tid}` : n;
  };
  const detail = (e) => {
    const d = e.args?.data ?? e.args ?? {};
    const u = d.url ?? d.fileName ?? d.stackTrace?.[0]?.url ?? d.functionName ?? d.type ?? d.name ?? '';
    return typeof u === 'string' ? u.replace(/^.*\/(?=[^/]+$)/, '') : '';
  };
  const lines = [];
  const KEEP = new Set(['ParseHTML', 'EvaluateScript', 'v8.compile', 'v8.compileModule', 'v8.evaluateModule', 'UpdateLayoutTree', 'Layout',
    'Paint', 'PrePaint', 'FunctionCall', 'EventDispatch', 'TimerFire', 'v8.wasm.compileConsume', 'v8.wasm.streamFromResponseCallback',
    'FireAnimationFrame', 'ResourceSendRequest', 'ResourceReceiveResponse', 'ResourceFinish', 'v8.run', 'RunMicrotasks',
    'v8.wasm.compiledModule', 'v8.wasm.cachedModule', 'v8.wasm.moduleCacheHit', 'ScheduleStyleRecalculation', 'Commit',
    'WorkerThread::Start', 'DedicatedWorkerGlobalScope', 'V8.GCScavenger', 'MajorGC', 'MinorGC', 'v8.produceModuleCache',
    'v8.produceCache', 'v8.compile.lazy', 'ParseAuthorStyleSheet', 'MarkDOMContent', 'MarkLoad', 'HandlePostMessage',
    'ThreadControllerImpl::RunTask', 'RunTask']);
  for (const e of events) {
    if (e.pid !== rpid && !['ResourceSendRequest'].includes(e.name)) continue;
    if (e.ts < t0) continue;
    const dur = (e.dur ?? 0) / 1000;
    const mark = e.ph === 'R' || e.ph === 'I' || e.ph === 'n' || e.ph === 'b' || e.ph === 'e';
    if (e.cat?.includes('user_timing') && e.name === 'first-heatmap') lines.push([e.ts, `*** first-heatmap (${name(e)})`]);
    else if (KEEP.has(e.name) && (dur >= MIN || mark || e.name.startsWith('Resource') || e.name.includes('wasm') || e.name === 'EvaluateScript')) {
      if (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask') { if (dur < MIN) continue; }
      lines.push([e.ts, `${name(e).padEnd(24)} ${e.name}${dur ? ` ${dur.toFixed(1)} ms` : ''} ${detail(e)}`]);
    }
  }
  lines.sort((a, b) => a[0] - b[0]);
  for (const [ts, s] of lines) console.log(`${ms(ts).padStart(7)}  ${s}`);
  // CPU per thread of the renderer, from navigation to the first heatmap
  const end = lines.find((l) => l[1].includes('first-heatmap'))?.[0] ?? Infinity;
  const busy = new Map();
  for (const e of events) {
    if (e.pid !== rpid || e.ph !== 'X' || e.ts < t0 || e.ts > end) continue;
    if (e.name !== 'ThreadControllerImpl::RunTask' && e.name !== 'RunTask') continue;
    busy.set(name(e), (busy.get(name(e)) ?? 0) + (e.dur ?? 0) / 1000);
  }
  console.log(`first heatmap at ${ms(end)} ms; top-level task time per renderer thread until then:`);
  for (const [k, v] of busy) console.log(`  ${k}: ${v.toFixed(1)} ms`);
}

for (let r = 0; r < RUNS; r++) {
  const profile = mkdtempSync(path.join(tmpdir(), 'attnscope-trace-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  if (!COLD) {
    const first = await visit(context, false);
    await first.page.waitForTimeout(4000);
    await first.page.close();
  }
  const { events } = await visit(context, true);
  console.log(`\n=== run ${r + 1} (${COLD ? 'cold' : 'warm'}), ${site}`);
  report(events);
  if (arg('json') && r === RUNS - 1) writeFileSync(arg('json'), JSON.stringify(events));
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
server.close();
