// Builds the notebook viewer (issue 29): web/notebook.js and the page's views it imports, bundled by esbuild into one
// minified script, and the page's CSS, into python/attnscope/viewer/ (viewer.js, viewer.css), where attnscope.show()
// reads them to write a self-contained output cell. Generated, not committed: run it before `pip install ./python`
// (scripts/build.sh runs it). Fails when the script is over its budget (600 KB with the CSS, before the data).
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'python', 'attnscope', 'viewer');
const BUDGET = 600 * 1024;
mkdirSync(out, { recursive: true });
// the colour scales from npm's d3-scale-chromatic, as build-site.mjs vendors them for the page
const vendor = {
  name: 'vendor',
  setup(b) {
    b.onResolve({ filter: /vendor\/d3-scale-chromatic\.js$/ }, () => ({ path: 'd3-scale-chromatic', namespace: 'd3' }));
    b.onLoad({ filter: /.*/, namespace: 'd3' }, () => ({ contents: "export * from 'd3-scale-chromatic';", resolveDir: root }));
  },
};
const r = await build({
  entryPoints: [path.join(root, 'web', 'notebook.js')],
  bundle: true,
  format: 'iife',
  globalName: 'attnscopeNotebook',
  minify: true,
  write: false,
  plugins: [vendor],
  logLevel: 'error',
});
const js = r.outputFiles[0].text;
const css = readFileSync(path.join(root, 'web', 'style.css'), 'utf8');
writeFileSync(path.join(out, 'viewer.js'), js);
writeFileSync(path.join(out, 'viewer.css'), css);
const total = Buffer.byteLength(js) + Buffer.byteLength(css);
console.log(`build-notebook: python/attnscope/viewer: script ${(js.length / 1024).toFixed(0)} KB + CSS ${(css.length / 1024).toFixed(0)} KB = ${(total / 1024).toFixed(0)} KB (budget ${BUDGET / 1024} KB)`);
if (total > BUDGET) {
  console.error(`build-notebook: over budget: ${total} > ${BUDGET} bytes`);
  process.exit(1);
}
