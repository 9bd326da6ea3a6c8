// Attention files (issue 29; API.md "Attention files"): files written by python/attnscope.save from torch softmax
// tensors (tests/fixtures/attention_file/generate.py: F32, F16, BF16, cross-attention, 2/3/1 heads per layer) read
// back by `as.readAttentionFile` and by the CLI (CSV), against the float values torch computed for each stored dtype
// (expected.json): F32 within 1e-6, F16 and BF16 widened exactly. Then the lazy reader (only the header and the
// asked-for head are read: counted, and a sparse 4 GiB file), the JS type errors and the core's file errors, and the
// Python helper's unit tests.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import {
  closeSync, ftruncateSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadAs, root, SIMD } from './helpers.js';
import { headerBytes } from './support/safetensors.mjs';
import { openAttentionFile } from '../../bindings/js/attention_file.js';
import { loadModule } from '../../bindings/js/loader.js';

const DIR = path.join(root, 'tests', 'fixtures', 'attention_file');
const EXPECTED = JSON.parse(readFileSync(path.join(DIR, 'expected.json'), 'utf8'));
const BIN = path.join(root, 'bin', 'attnscope.mjs');
const bytesOf = (name) => new Uint8Array(readFileSync(path.join(DIR, EXPECTED[name].file)));
const tolerance = (e) => (e.dtype === 'float32' ? 1e-6 : 0);

function maxError(got, want) {
  assert.equal(got.length, want.length, 'length');
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  return worst;
}

test('readAttentionFile reads back what attnscope.save wrote from torch tensors', async (t) => {
  const as = await loadAs();
  for (const [name, e] of Object.entries(EXPECTED)) {
    const f = as.readAttentionFile(name === 'f16' ? bytesOf(name).buffer : bytesOf(name));  // ArrayBuffer too
    assert.deepEqual(f.tokens, e.tokens, `${name} tokens`);
    assert.equal(f.n, e.tokens.length);
    assert.equal(f.model, e.model);
    assert.equal(f.numHeads, Math.max(...e.layers.map((l) => l.heads)));
    if (e.sourceTokens) assert.deepEqual(f.sourceTokens, e.sourceTokens);
    else assert.equal('sourceTokens' in f, false);
    assert.equal(f.layers.length, e.layers.length);
    let worst = 0;
    f.layers.forEach((ly, l) => {
      assert.ok(ly.attention.weights instanceof Float32Array);
      assert.equal(ly.attention.numHeads, e.layers[l].heads);
      worst = Math.max(worst, maxError(ly.attention.weights, e.layers[l].weights));
      if (e.layers[l].cross) {
        assert.equal(ly.cross.numHeads, e.layers[l].crossHeads);
        worst = Math.max(worst, maxError(ly.cross.weights, e.layers[l].cross));
      } else assert.equal(ly.cross, undefined);
    });
    t.diagnostic(`${name} (${e.dtype}): max |module - torch| = ${worst}`);
    assert.ok(worst <= tolerance(e), `${name}: max error ${worst} > ${tolerance(e)}`);
  }
});

test('readAttentionFile: JS type errors, the core\'s file errors, and the module keeps working', async () => {
  const as = await loadAs();
  for (const v of [undefined, null, 'file.safetensors', [1, 2], new Float32Array(4)]) {
    assert.throws(() => as.readAttentionFile(v), (e) => e instanceof TypeError
      && /^readAttentionFile: bytes must be a Uint8Array or an ArrayBuffer \(the attention file\), got /.test(e.message));
  }
  const good = bytesOf('f32');
  assert.throws(() => as.readAttentionFile(good.subarray(0, good.length - 3)),
    { name: 'Error', message: /^readAttentionFile: safetensors tensor "attentions.2" data_offsets \[\d+, \d+\] exceed the data section/ });
  // attentions.0 head 1 [row 2, column 3] set to -0.5
  const bad = good.slice();
  const headerLength = Number(new DataView(bad.buffer).getBigUint64(0, true));
  new DataView(bad.buffer).setFloat32(8 + headerLength + 4 * (36 + 2 * 6 + 3), -0.5, true);
  assert.throws(() => as.readAttentionFile(bad), {
    name: 'Error',
    message: 'readAttentionFile: attention file tensor "attentions.0" head 1 [row 2, column 3] is -0.5: attention weights must be finite and >= 0',
  });
  const absurd = new Uint8Array(16);
  new DataView(absurd.buffer).setBigUint64(0, 10n ** 10n, true);
  assert.throws(() => as.readAttentionFile(absurd), { message: /header length \(10000000000 bytes\) exceeds the 100000000-byte limit/ });
  assert.equal(as.readAttentionFile(good).layers.length, 3);  // still working
});

// A reader of byte ranges over a file in memory that records what it was asked for.
function countingReader(bytes) {
  const reads = [];
  return { reads, size: bytes.length, read: async (a, b) => { reads.push([a, b]); return bytes.subarray(a, b); } };
}

test('openAttentionFile reads the header, then only the head asked for', async () => {
  const { module } = await loadModule(SIMD, 1, false);
  const bytes = bytesOf('f32');
  const src = countingReader(bytes);
  const f = await openAttentionFile(module, src);
  const headerEnd = 8 + Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.deepEqual(src.reads, [[0, 8], [0, headerEnd]]);
  assert.deepEqual(f.layers, [{ numHeads: 2 }, { numHeads: 3 }, { numHeads: 1 }]);
  const w = await f.head(1, 2);
  const n = f.n;
  assert.deepEqual(src.reads.at(-1), [headerEnd + 4 * (2 * n * n) + 4 * 2 * n * n, headerEnd + 4 * (2 * n * n) + 4 * 3 * n * n]);
  assert.ok(maxError(w, EXPECTED.f32.layers[1].weights.slice(2 * n * n)) <= 1e-6);
  await assert.rejects(f.head(1, 3), { name: 'RangeError', message: 'readAttentionFile: head (3) must be from 0 to 2 (layer 1 has 3 heads)' });
  await assert.rejects(f.head(0, 0, 'cross'), { name: 'RangeError', message: 'readAttentionFile: layer 0 has no cross-attention in this file' });
  f.close();
  await assert.rejects(f.head(0, 0), { message: 'readAttentionFile: the file is closed' });
});

// A sparse file of 32 layers x 32 heads x 1024 x 1024 F32 zeros (4 GiB on paper, a few KB on disk): zero rows are
// valid (a fully masked query). The header is written by hand here, as the format says.
function sparseBigFile(dir) {
  const n = 1024;
  const L = 32;
  const H = 32;
  const per = 4 * H * n * n;
  const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  const header = { __metadata__: { tokens: JSON.stringify(tokens), model: 'sparse' } };
  for (let l = 0; l < L; l++) header[`attentions.${l}`] = { dtype: 'F32', shape: [1, H, n, n], data_offsets: [l * per, (l + 1) * per] };
  const head = headerBytes(header);
  const file = path.join(dir, 'big.safetensors');
  const fd = openSync(file, 'w');
  writeSync(fd, head);
  ftruncateSync(fd, head.length + L * per);
  closeSync(fd);
  return { file, size: head.length + L * per, n };
}

test('a 4 GiB attention file opens from a file handle, reading its header and one head', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-big-'));
  try {
    const { file, size, n } = sparseBigFile(dir);
    const { module } = await loadModule(SIMD, 1, false);
    const { open } = await import('node:fs/promises');
    const fh = await open(file, 'r');
    let read = 0;
    const src = {
      size,
      read: async (a, b) => {
        const buf = new Uint8Array(b - a);
        const { bytesRead } = await fh.read(buf, 0, b - a, a);
        read += bytesRead;
        return buf.subarray(0, bytesRead);
      },
    };
    try {
      const f = await openAttentionFile(module, src);
      assert.equal(f.layers.length, 32);
      assert.equal(f.numHeads, 32);
      const w = await f.head(31, 31);
      assert.equal(w.length, n * n);
      assert.equal(w.every((x) => x === 0), true);
      t.diagnostic(`file ${size} bytes; read ${read} bytes (header + one head of ${4 * n * n})`);
      assert.ok(read < 8 * 1024 * 1024, `read ${read} bytes`);
      f.close();
    } finally {
      await fh.close();
    }
    // the CLI the same way: one head of the last layer as CSV (its layer read, 128 MiB, not the file)
    const r = await cli(['heatmap', '--attention-file', file, '--layer', '-1', '--head', '5', '--format', 'csv']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.toString().split('\r\n').length, n + 2);  // header, n rows, final CRLF
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- the CLI

function cli(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: root, encoding: 'buffer', maxBuffer: 64 << 20, env: process.env },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr: stderr.toString('utf8') }));
  });
}

// CSV rows → { layer, head, values (row-major) } per panel; numbers are the last `cols` fields of each row
function csvPanels(text, cols) {
  const lines = text.split('\r\n').filter(Boolean).slice(1);
  const panels = new Map();
  for (const line of lines) {
    const fields = line.split(',');
    const key = `${fields[0]}/${fields[1]}`;
    if (!panels.has(key)) panels.set(key, []);
    panels.get(key).push(...fields.slice(-cols).map(Number));
  }
  return panels;
}

test('CLI: heatmap --attention-file writes the stored numbers as CSV (self and cross, every layer and head)', async (t) => {
  for (const name of ['f32', 'bf16', 'cross-bf16']) {
    const e = EXPECTED[name];
    const n = e.tokens.length;
    const sides = e.sourceTokens ? ['self', 'cross'] : ['self'];
    let worst = 0;
    for (const side of sides) {
      const cols = side === 'cross' ? e.sourceTokens.length : n;
      for (let l = 0; l < e.layers.length; l++) {
        const out = await cli(['heatmap', '--attention-file', path.join(DIR, e.file), '--layer', String(l), '--attention', side, '--format', 'csv']);
        assert.equal(out.code, 0, out.stderr);
        const panels = csvPanels(out.stdout.toString(), cols);
        const heads = side === 'cross' ? e.layers[l].crossHeads : e.layers[l].heads;
        const want = side === 'cross' ? e.layers[l].cross : e.layers[l].weights;
        assert.equal(panels.size, heads);
        for (let h = 0; h < heads; h++) {
          worst = Math.max(worst, maxError(panels.get(`${l}/${h}`), want.slice(h * n * cols, (h + 1) * n * cols)));
        }
      }
    }
    t.diagnostic(`${name}: max |CLI CSV - torch| = ${worst}`);
    assert.ok(worst <= tolerance(e), `${name}: ${worst}`);
  }
});

test('CLI: overview of a file with one head count, rollout, SVG; the usage errors', async () => {
  const e = EXPECTED['uniform-f32'];
  const n = e.tokens.length;
  const out = await cli(['overview', '--attention-file', path.join(DIR, e.file), '--format', 'csv']);
  assert.equal(out.code, 0, out.stderr);
  const panels = csvPanels(out.stdout.toString(), n);
  assert.equal(panels.size, 4);
  for (let l = 0; l < 2; l++) {
    for (let h = 0; h < 2; h++) assert.ok(maxError(panels.get(`${l}/${h}`), e.layers[l].weights.slice(h * n * n, (h + 1) * n * n)) <= 1e-6);
  }
  const svg = await cli(['heatmap', '--attention-file', path.join(DIR, 'f32.safetensors'), '--layer', '2']);
  assert.equal(svg.code, 0, svg.stderr);
  assert.match(svg.stdout.toString(), /^<svg /);
  assert.match(svg.stdout.toString(), /torch-softmax-f32 · layer 2 · self-attention/);
  const roll = await cli(['heatmap', '--attention-file', path.join(DIR, e.file), '--layer', '1', '--head', 'rollout', '--format', 'json']);
  assert.equal(roll.code, 0, roll.stderr);
  assert.equal(JSON.parse(roll.stdout.toString()).panels[0].aggregate, 'rollout');

  const f32 = path.join(DIR, 'f32.safetensors');
  const usage = [
    [['heatmap', 'some text', '--attention-file', f32], /^attnscope: heatmap: no text with --attention-file/],
    [['heatmap', '--attention-file', f32, '--model', 'dates'], /^attnscope: --model does not apply with --attention-file/],
    [['overview', '--attention-file', f32], /^attnscope: overview needs the same head count in every layer it draws; .* has 2, 3, 1 heads/],
    [['heatmap', '--attention-file', f32, '--layer', '3'], /^attnscope: --layer \(3\) must be in \[-3, 2\] \(this file has 3 layers\)/],
    [['heatmap', '--attention-file', f32, '--attention', 'cross'], /^attnscope: --attention cross needs cross_attentions in the file/],
    [['heatmap', '--attention-file', f32, '--attention', 'encoder'], /^attnscope: --attention \(encoder\) must be one of self, cross/],
    [['heatmap', '--attention-file', f32, '--head', '7'], /^attnscope: --head \(7\) must be a head index in \[0, 1\]/],
    [['heatmap', '--attention-file', path.join(DIR, 'missing.safetensors')], /^attnscope: --attention-file .*missing.safetensors: cannot read it \(ENOENT\)/],
    [['heatmap', '--attention-file', DIR], /^attnscope: --attention-file .*attention_file: cannot read it \(EISDIR\)/],
    [['heatmap', '--attention-file', path.join(DIR, 'expected.json')], /^attnscope: --attention-file .*expected.json: readAttentionFile: attention file header length/],
  ];
  for (const [args, message] of usage) {
    const r = await cli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout.length, 0);
  }
});

// ---- the Python helper's own unit tests (python/tests), with Debian's python3 (NumPy and torch) when present
const PYTHON = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['--version']).status === 0);
test('python/attnscope unit tests', { skip: PYTHON === undefined && 'no python3' }, () => {
  const r = spawnSync(PYTHON, ['-m', 'unittest', 'discover', '-s', path.join(root, 'python', 'tests')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /\nOK/);
});
