// The page's structure rules (issue 24), made mechanical: every file of web/ under 400 lines; no panel or view
// talks to a worker (only web/compute.js and web/family.js post to one, web/start.js or web/boot.js starts the compute worker);
// the marks the browser tests wait on (html[data-busy|drawing|drawn|shown|redraw]) written only by
// web/scheduler.js; the panel adapters all have the { id, needs, draw } shape.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const web = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
const files = [];
(function walk(dir) {
  for (const f of readdirSync(dir)) {
    const p = path.join(dir, f);
    if (statSync(p).isDirectory()) { if (f !== 'vendor') walk(p); } else if (/\.(js|html|css)$/.test(f)) files.push(p);
  }
}(web));
const rel = (p) => path.relative(web, p).split(path.sep).join('/');
const text = (p) => readFileSync(p, 'utf8');

test('web/: no file over 400 lines', () => {
  const long = files.map((p) => [rel(p), text(p).split('\n').length - 1]).filter(([, n]) => n > 400);
  assert.deepEqual(long, []);
});

test('web/: only the compute and family clients post to a worker; only start.js, boot.js and family.js start one', () => {
  const js = files.filter((p) => p.endsWith('.js') && !rel(p).startsWith('learn/'));
  const posting = js.filter((p) => /\.postMessage\(/.test(text(p)) && !/^self\.postMessage|\bself\.postMessage/.test(text(p))).map(rel);
  assert.deepEqual(posting.sort(), ['compute.js', 'family.js']);
  const starting = js.filter((p) => /new Worker\(/.test(text(p))).map(rel);
  assert.deepEqual(starting.sort(), ['boot.js', 'family.js', 'start.js']);
});

test('web/: the main page\'s html[data-busy|drawing|drawn|shown|redraw] written only by scheduler.js', () => {
  const writes = /(?:documentElement\.dataset|marks)\.(busy|drawing|drawn|shown|redraw)\b\s*=|delete\s+(?:document\.documentElement\.dataset|marks)\.(busy|drawing|drawn|shown|redraw)\b/;
  const writers = files.filter((p) => p.endsWith('.js') && !rel(p).startsWith('learn/') && writes.test(text(p))).map(rel); // learn/: its own page
  assert.deepEqual(writers, ['scheduler.js']);
});

test('web/panels/: each adapter is { id, needs, draw } and imports no worker client', async () => {
  const dir = path.join(web, 'panels');
  for (const f of readdirSync(dir)) {
    const src = text(path.join(dir, f));
    assert.doesNotMatch(src, /^import .*from '\.\.\/(compute|family|boot|worker|protocol)\.js'/m, `${f} talks to no worker`);
    assert.doesNotMatch(src, /postMessage|new Worker/, `${f} talks to no worker`);
    for (const m of src.matchAll(/export const (\w+) = \{\n([\s\S]*?)\n\};/g)) {
      for (const key of ['id', 'needs', 'draw']) assert.match(m[2], new RegExp(`^\\s+${key}[:(]`, 'm'), `${f} ${m[1]}.${key}`);
    }
  }
});
