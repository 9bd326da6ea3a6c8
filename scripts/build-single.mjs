// Single-file pages (issue 14, "a page that opens from disk"): turns an entry HTML of the static site
// (build/site, made by scripts/build-site.mjs) into one self-contained HTML file that works opened straight
// from the file system (file://, no server) — build/site/attnscope.html from web/index.html and, when the
// guided path exists, build/site/attnscope-learn.html from web/learn/index.html.
//
// What goes in, for any entry (nothing here knows the page):
//   - its <script type="module" src> bundled by esbuild (ESM, inline, allowed by its CSP hash);
//   - every worker it starts (`new Worker(new URL('./x.js', import.meta.url), …)`, found in the bundled
//     sources) bundled as a classic script (Chromium refuses module workers from blob: URLs on file://) and
//     started from a Blob URL;
//   - its stylesheets bundled by esbuild (fonts and images as data: URLs), inline, allowed by their hash;
//   - every other file of the site that code may fetch (both .wasm builds, models/*, GPT-2's encoder.json and
//     vocab.bpe) base64 in non-executed <script type="application/x-attnscope-file"> blocks, each decoded
//     only when first read (the BPE files only when BPE is chosen); the icon becomes a data: URL.
// How the code finds those files without changing it: each bundled module's `import.meta.url` becomes the
// module's site path under a private `attnscope:/` scheme (e.g. attnscope:/bindings/js/loader.js), so the
// URLs the code builds (`new URL('../../dist/attnscope.simd.wasm', import.meta.url)`, './assets/gpt2/…'
// inside the worker) name site paths; a small runtime (pageRuntime / workerRuntime below) answers `fetch`
// of attnscope:/ URLs from the embedded files (404 for a missing one, as a server would) and maps
// `new Worker(attnscope:/web/worker.js)` to the worker's Blob URL. The worker asks the page for files over
// a MessageChannel, so each file is decoded once and held once. The loader (bindings/js/loader.js) still
// picks the SIMD or the scalar .wasm itself (never the threaded build, which is not embedded). Nothing ever
// leaves the file: the CSP is
// default-src 'none' with hashes for the inline script and style, worker-src blob:, connect-src 'none'.
//
// Run: node scripts/build-single.mjs [siteDir] (scripts/build-site.mjs calls it; prints each file's size).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VFS = 'attnscope:/';
const FILE_TYPE = 'application/x-attnscope-file';
const INIT = '__attnscopeSingleFile'; // the page → worker message that hands over the file port

/** The single files made from a site: entry HTML (site path) → output name (next to the site's index.html). */
export const ENTRIES = [
  { entry: 'web/index.html', out: 'attnscope.html' },
  // optional: a failure (e.g. the guided path half-written) is reported and the other files still built
  { entry: 'web/learn/index.html', out: 'attnscope-learn.html', optional: true },
];

// not embedded as files: code (bundled or inlined) and fonts (only stylesheets use them, inlined as data: URLs)
const NOT_FETCHED = /\.(m?js|css|html|map|d\.ts|woff2?|ttf|otf)$/;
const MIME = {
  '.wasm': 'application/wasm', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.bpe': 'text/plain', '.txt': 'text/plain', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf',
};
const mimeOf = (file) => MIME[path.extname(file)] ?? 'application/octet-stream';
const sitePath = (site, file) => path.relative(site, file).split(path.sep).join('/');

// ---- runtimes: plain functions, injected as source text (`(${fn})(…)`) ahead of the bundles

/**
 * Runs in the page before its bundle: the embedded files, `fetch` of attnscope:/ URLs answered from them,
 * and `new Worker(attnscope:/…)` started from the embedded worker bundles, each given a port to ask for files.
 */
function pageRuntime(VFS, TYPE, INIT, entry, workerPaths) {
  const blocks = new Map([...document.querySelectorAll(`script[type="${TYPE}"]`)].map((el) => [el.dataset.path, el]));
  const decoded = new Map(); // site path → Blob
  const bytesOf = (b64) => {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  };
  const file = (p) => {
    if (!decoded.has(p)) {
      const el = blocks.get(p);
      if (!el) return null;
      decoded.set(p, new Blob([bytesOf(el.textContent.trim())], { type: el.dataset.type }));
      el.remove(); // the Blob holds the bytes now; drop the base64 text
    }
    return decoded.get(p);
  };
  const base = `${VFS}${entry}`;
  const toPath = (input) => {
    const u = new URL(typeof input === 'string' ? input : input.url ?? String(input), base);
    return u.href.startsWith(VFS) ? decodeURIComponent(u.pathname.slice(1)) : null;
  };
  const answer = (blob) => (blob
    ? new Response(blob, { status: 200, headers: { 'Content-Type': blob.type } })
    : new Response('not found', { status: 404, statusText: 'Not Found' }));
  const realFetch = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input, init) => {
    const p = toPath(input);
    return p === null ? realFetch(input, init) : answer(file(p));
  };
  const scripts = new Map();
  const RealWorker = globalThis.Worker;
  globalThis.Worker = class extends RealWorker {
    constructor(url, options = {}) {
      const p = toPath(url);
      if (p === null || !workerPaths.includes(p)) {
        super(url, options);
        return;
      }
      if (!scripts.has(p)) scripts.set(p, URL.createObjectURL(file(p)));
      super(scripts.get(p), { ...options, type: 'classic' });
      const channel = new MessageChannel();
      channel.port1.onmessage = (e) => channel.port1.postMessage({ id: e.data.id, blob: file(e.data.path) });
      this.postMessage({ [INIT]: true }, [channel.port2]);
    }
  };
}

/** Runs in a worker before its bundle: `fetch` of attnscope:/ URLs asks the page for the file. */
function workerRuntime(VFS, INIT, workerPath) {
  let port = null;
  let seq = 0;
  const waiting = new Map(); // request id → resolve
  const queued = [];
  const ask = (path) => new Promise((resolve) => {
    const id = ++seq;
    waiting.set(id, resolve);
    if (port) port.postMessage({ id, path });
    else queued.push({ id, path });
  });
  self.addEventListener('message', (e) => {
    if (!e.data || e.data[INIT] !== true) return;
    e.stopImmediatePropagation(); // the worker's own handler never sees the hand-over
    [port] = e.ports;
    port.onmessage = (m) => {
      waiting.get(m.data.id)(m.data.blob);
      waiting.delete(m.data.id);
    };
    for (const q of queued.splice(0)) port.postMessage(q);
  });
  const base = `${VFS}${workerPath}`;
  const realFetch = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input, init) => {
    const u = new URL(typeof input === 'string' ? input : input.url ?? String(input), base);
    if (!u.href.startsWith(VFS)) return realFetch(input, init);
    const blob = await ask(decodeURIComponent(u.pathname.slice(1)));
    return blob
      ? new Response(blob, { status: 200, headers: { 'Content-Type': blob.type } })
      : new Response('not found', { status: 404, statusText: 'Not Found' });
  };
}

// ---- bundling

const WORKER_REF = /new\s+Worker\s*\(\s*new\s+URL\s*\(\s*(['"])([^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g;

/**
 * esbuild plugin: every JS module's `import.meta.url` becomes its attnscope:/ site path; worker entries met
 * on the way are added to `workers` (site paths).
 */
function vfsPlugin(site, workers) {
  return {
    name: 'attnscope-single-file',
    setup(b) {
      b.onLoad({ filter: /\.m?js$/ }, async (args) => {
        let text = await readFile(args.path, 'utf8');
        for (const m of text.matchAll(WORKER_REF)) workers.add(sitePath(site, path.resolve(path.dirname(args.path), m[2])));
        text = text.replaceAll('import.meta.url', JSON.stringify(`${VFS}${sitePath(site, args.path)}`));
        return { contents: text, loader: 'js' };
      });
    },
  };
}

async function bundle(site, file, format, workers) {
  const r = await build({
    entryPoints: [file],
    bundle: true,
    format,
    platform: 'browser',
    target: 'chrome100',
    minify: true,
    write: false,
    external: ['node:*'], // the Node branches (fs reads of .wasm / models) are never taken in a page
    // the threaded glue and its worker script are not embedded: the loader picks only the builds that are
    define: { ATTNSCOPE_THREADED_BUILD: 'false' },
    plugins: [vfsPlugin(site, workers)],
    logLevel: 'error',
  });
  return r.outputFiles[0].text;
}

async function bundleCss(file) {
  const r = await build({
    entryPoints: [file],
    bundle: true,
    minify: true,
    write: false,
    loader: {
      '.woff2': 'dataurl', '.woff': 'dataurl', '.ttf': 'dataurl', '.svg': 'dataurl', '.png': 'dataurl',
    },
    logLevel: 'error',
  });
  return r.outputFiles[0].text;
}

/**
 * The page's module scripts as one module's text, in document order. Two bundles in one module scope could
 * clash (esbuild's minified top-level names, e.g. two `var o`), so with more than one each runs in a scope of
 * its own, awaited in turn (a bundle may use top-level await).
 */
function scopedScripts(scripts) {
  if (scripts.length <= 1) return scripts.join('');
  return scripts.map((code) => `await (async () => {\n${code}\n})();`).join('\n');
}

// Inline script / style text must not close its element or open an HTML comment inside it.
function inlineSafe(text, tag) {
  return text.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1').replace(/<!--/g, '<\\!--');
}

const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

async function filesOf(dir) {
  const out = [];
  for (const d of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...await filesOf(p));
    else out.push(p);
  }
  return out.sort();
}

const attr = (tag, name) => tag.match(new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'i'))?.slice(1).find((x) => x !== undefined);

/**
 * Builds one single file: `entry` (site path of an HTML page) → `out` (file name in `site`). `links` maps
 * other entries' site paths to their single files, so links between the pages keep working from disk.
 * Returns { out, bytes, gzip, embedded: { path: base64 bytes } }.
 */
export async function buildSingle(site, entry, out, links = {}) {
  const entryFile = path.join(site, entry);
  const dir = path.dirname(entryFile);
  let html = await readFile(entryFile, 'utf8');
  const workers = new Set();
  const scripts = [];
  const styles = [];
  const inlined = new Set(); // site paths written into the HTML itself (the icon)

  // the page's early scripts, inline or not (web/start.js, the parser's hold on the stylesheet): the bundle's
  // web/boot.js starts the worker itself, and the styles are inline here
  html = html.replace(/<script\b[^>]*\bdata-early\s*=[^>]*>[^<]*<\/script>\n?/gi, '');
  // scripts and stylesheets, in document order; the tags are dropped here and inlined below
  for (const m of [...html.matchAll(/<script\b[^>]*\bsrc\s*=[^>]*>\s*<\/script>/gi)]) {
    const src = attr(m[0], 'src');
    if (attr(m[0], 'type') !== 'module') throw new Error(`build-single: ${entry}: <script src="${src}"> must be type="module"`);
    scripts.push(await bundle(site, path.resolve(dir, src), 'esm', workers));
    html = html.replace(m[0], '');
  }
  for (const m of [...html.matchAll(/<link\b[^>]*>/gi)]) {
    const rel = attr(m[0], 'rel');
    const href = attr(m[0], 'href');
    if (rel === 'stylesheet') {
      styles.push(await bundleCss(path.resolve(dir, href)));
      html = html.replace(m[0], '');
    } else if (rel === 'modulepreload') { // (the page's early request for its module, inlined here)
      html = html.replace(m[0], '');
    } else if (rel === 'icon' && href) {
      const file = path.resolve(dir, href);
      inlined.add(sitePath(site, file));
      const data = `data:${mimeOf(file)};base64,${(await readFile(file)).toString('base64')}`;
      html = html.replace(m[0], () => m[0].replace(href, () => data));
    }
  }
  // links to the other single pages (e.g. the guided path ⇄ the page)
  html = html.replace(/\shref\s*=\s*"([^"#:]*)(#[^"]*)?"/gi, (all, ref, hash = '') => {
    if (!ref) return all;
    let target = sitePath(site, path.resolve(dir, ref));
    if (!target.endsWith('.html')) target = `${target.replace(/\/?$/, '/')}index.html`;
    return links[target] ? ` href="${links[target]}${hash}"` : all;
  });

  // the workers: each bundled (classic) behind its runtime; nested workers' sources are scanned as well
  const workerCode = new Map();
  for (let added = true; added;) {
    added = false;
    for (const w of [...workers]) {
      if (workerCode.has(w)) continue;
      const code = await bundle(site, path.join(site, w), 'iife', workers);
      workerCode.set(w, `(${workerRuntime})(${JSON.stringify(VFS)}, ${JSON.stringify(INIT)}, ${JSON.stringify(w)});\n${code}`);
      added = true;
    }
  }

  // the embedded files: the worker bundles and every non-code file of the site
  const embedded = new Map();
  for (const [w, code] of workerCode) embedded.set(w, { type: 'text/javascript', bytes: Buffer.from(code, 'utf8') });
  for (const file of await filesOf(site)) {
    const p = sitePath(site, file);
    if (NOT_FETCHED.test(p) || inlined.has(p) || embedded.has(p) || !p.includes('/')) continue; // site-root files are the single pages and the redirect
    embedded.set(p, { type: mimeOf(file), bytes: await readFile(file) });
  }

  const script = inlineSafe(`(${pageRuntime})(${[VFS, FILE_TYPE, INIT, entry, [...workerCode.keys()]].map((x) => JSON.stringify(x)).join(', ')});\n${scopedScripts(scripts)}`, 'script');
  const style = inlineSafe(styles.join('\n'), 'style');
  const csp = [
    "default-src 'none'", `script-src ${sha256(script)} 'wasm-unsafe-eval'`, 'worker-src blob:', "connect-src 'none'",
    `style-src ${sha256(style)}`, 'img-src data: blob:', /url\(["']?data:font\//.test(style) ? 'font-src data:' : null,
    "object-src 'none'", "base-uri 'none'", "form-action 'none'",
  ].filter(Boolean).join('; ');
  const cspMeta = `<meta http-equiv="Content-Security-Policy" content="${csp}">`;
  if (/<meta\s+http-equiv="Content-Security-Policy"[^>]*>/i.test(html)) {
    html = html.replace(/<meta\s+http-equiv="Content-Security-Policy"[^>]*>/i, () => cspMeta);
  } else {
    html = html.replace(/<meta\s+charset="utf-8">/i, (m) => `${m}\n${cspMeta}`);
  }
  const blocks = [...embedded].map(([p, { type, bytes }]) => `<script type="${FILE_TYPE}" data-path="${p}" data-type="${type}">${bytes.toString('base64')}</script>`);
  // (replacer functions: the code holds `$&`-like sequences that a replacement string would expand)
  html = html.replace(/<\/head>/i, () => `<style>${style}</style>\n<script type="module">${script}</script>\n</head>`);
  html = html.replace(/<\/body>/i, () => `${blocks.join('\n')}\n</body>`);
  const outFile = path.join(site, out);
  await writeFile(outFile, html);
  const raw = Buffer.byteLength(html);
  return {
    out: outFile, bytes: raw, gzip: gzipSync(html, { level: 9 }).length,
    files: Object.fromEntries([...embedded].map(([p, { bytes }]) => [p, bytes.length])),
  };
}

const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;

/** Builds every entry of ENTRIES present in `site`, prints each file's size; returns their reports. */
export async function buildSingles(site = path.join(root, 'build', 'site')) {
  const present = ENTRIES.filter((e) => existsSync(path.join(site, e.entry)));
  const links = Object.fromEntries(present.map((e) => [e.entry, e.out]));
  const reports = [];
  for (const e of present) {
    let r;
    try {
      r = await buildSingle(site, e.entry, e.out, links);
    } catch (err) {
      if (!e.optional) throw err;
      console.error(`build-single: ${e.out} not built: ${e.entry}: ${String(err.message).split('\n').slice(0, 3).join(' ')}`);
      continue;
    }
    const models = Object.entries(r.files).filter(([p]) => p.startsWith('models/')).reduce((s, [, n]) => s + n, 0);
    console.log(`build-single: ${path.relative(root, r.out)} ${mb(r.bytes)} (gzip ${mb(r.gzip)}; the bundled models are ${mb(models)} of it before base64)`);
    reports.push(r);
  }
  return reports;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildSingles(path.resolve(process.argv[2] ?? path.join(root, 'build', 'site')));
}
