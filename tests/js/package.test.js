// The package as a consumer gets it: `npm pack`, install the tarball into an empty folder, import it by
// name from there (Node, no server, no flags), compute, and check the types and files shipped.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root } from './helpers.js';

test('package: npm pack installs into a clean folder and imports by name', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-pack-'));
  try {
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' });
    const [{ filename, files }] = JSON.parse(out);
    const names = files.map((f) => f.path);
    for (const f of ['dist/attnscope.mjs', 'dist/attnscope.wasm', 'dist/attnscope.simd.wasm', 'dist/attnscope.simd.mt.mjs',
      'dist/attnscope.simd.mt.wasm', 'dist/attnscope.simd.mt.worker.cjs', 'dist/attnscope.relaxed.wasm', 'dist/attnscope.relaxed.mt.wasm',
      'bindings/js/index.js',
      'bindings/js/index.d.ts', 'package.json']) {
      assert.ok(names.includes(f), `tarball lacks ${f}`);
    }
    assert.ok(!names.some((f) => f.startsWith('src/') || f.startsWith('tests/')), 'tarball must not ship sources/tests');
    const app = path.join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', path.join(dir, filename)], { cwd: app, encoding: 'utf8' });
    writeFileSync(path.join(app, 'main.js'), `
      import { createAttnScope } from 'attnscope';
      for (const simd of [true, false]) {
        const as = await createAttnScope({ simd });
        const y = as.softmax({ x: new Float32Array([0, Math.log(3)]), rows: 1, cols: 2 });
        console.log(JSON.stringify({ simd: as.simd, version: as.version, y: Array.from(y) }));
      }
    `);
    const lines = execFileSync('node', ['main.js'], { cwd: app, encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    assert.deepEqual(lines.map((l) => l.simd), [true, false]);
    for (const l of lines) {
      assert.equal(l.version, pkg.version);
      assert.ok(Math.abs(l.y[0] - 0.25) < 1e-6 && Math.abs(l.y[1] - 0.75) < 1e-6);
    }
    assert.ok(existsSync(path.join(app, 'node_modules', 'attnscope', 'bindings', 'js', 'index.d.ts')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('package: exports map points at files that exist and carries types', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(pkg.type, 'module');
  const entry = pkg.exports['.'];
  assert.ok(existsSync(path.join(root, entry.types)));
  assert.ok(existsSync(path.join(root, entry.default)));
});

test('index.d.ts: declares every method the module exposes', async () => {
  const { createAttnScope } = await import('attnscope');
  const as = await createAttnScope();
  const dts = readFileSync(path.join(root, 'bindings/js/index.d.ts'), 'utf8');
  const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(as)).filter((m) => m !== 'constructor');
  assert.ok(methods.length >= 12);
  for (const m of methods) assert.match(dts, new RegExp(`\\b${m}\\(`), `index.d.ts lacks ${m}`);
});
