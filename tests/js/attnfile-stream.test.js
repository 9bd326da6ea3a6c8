// The streamed views of an attention file too big to hold (web/attnfile-stream.js; issue 29): read through the
// module's lazy reader (as.openAttentionFile on a { size, read } source), they equal what the page computes from the
// whole trace — rollout bit for bit aggregates.rollout (also when going on from a kept layer), flow's means
// meanOverHeads, each thumbnail the block max of its head, entropy / distance headEntropy / headDistance — a head the
// core refuses is named (and the model view draws the rest), and Cancel stops between heads.
// Run: node --test tests/js/attnfile-stream.test.js
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs } from './helpers.js';
import { layout } from './support/safetensors.mjs';
import { fileStreamWork, THUMB } from '../../web/attnfile-stream.js';
import { rollout, meanOverHeads, headEntropy, headDistance } from '../../web/aggregates.js';

const N = 70; // > THUMB: pooled with stride 3
const HEADS = [2, 2, 2];

/** Seeded softmax rows [H, N, N]; a causal mask on odd heads (their upper triangle 0). */
function weights(seed, H) {
  let s = seed;
  const rnd = () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
  const w = new Float32Array(H * N * N);
  for (let hd = 0; hd < H; hd++) {
    for (let i = 0; i < N; i++) {
      const row = w.subarray((hd * N + i) * N, (hd * N + i + 1) * N);
      let sum = 0;
      for (let j = 0; j < N; j++) { row[j] = hd % 2 && j > i ? 0 : Math.exp(3 * rnd()); sum += row[j]; }
      for (let j = 0; j < N; j++) row[j] /= sum;
    }
  }
  return w;
}

/** The file in memory and a stream context over it: { files, layers }. `bad`: [layer, head] whose row 5 sums to 1.2. */
async function open(bad = null) {
  const as = await loadAs();
  const entries = HEADS.map((H, l) => ({ name: `attentions.${l}`, dtype: 'F32', shape: [H, N, N] }));
  const { bytes, data, offsets } = layout(entries, { tokens: JSON.stringify(Array.from({ length: N }, (_, i) => `t${i}`)) });
  const layers = HEADS.map((H, l) => weights(11 + l, H));
  layers.forEach((w, l) => {
    const [a] = offsets.get(`attentions.${l}`);
    const copy = w.slice();
    if (bad && bad[0] === l) { copy[(bad[1] * N + 5) * N] += 0.2; }
    new Uint8Array(data.buffer, data.byteOffset + a, copy.byteLength).set(new Uint8Array(copy.buffer));
  });
  const f = await as.openAttentionFile({ size: bytes.length, read: async (a, b) => bytes.slice(a, b) });
  const o = { f, cache: new Map() };
  return { files: { current: () => o }, layers, o };
}

test('streamed rollout equals rollout() of the whole trace, bit for bit, also going on from a kept layer', async () => {
  const { files, layers } = await open();
  const whole = rollout(layers, 2, N);
  let progress = 0;
  const r1 = await fileStreamWork(files, { op: 'rollout', layer: 1 }, (f) => { progress = f; });
  assert.equal(progress, 1);
  assert.deepEqual(r1.rollout, whole[1]);
  const reads = [];
  const { f } = files.current();
  const head = f.head;
  f.head = (l, hd, a) => { reads.push(l); return head(l, hd, a); };
  const r2 = await fileStreamWork(files, { op: 'rollout', layer: 2 }, null);
  assert.deepEqual(r2.rollout, whole[2]);
  assert.deepEqual(reads, [2, 2], 'only layer 3 is read: layers 1–2 are kept as their product');
  const r0 = await fileStreamWork(files, { op: 'rollout', layer: 0 }, null);
  assert.deepEqual(r0.rollout, whole[0], 'an earlier layer starts again');
});

test('flow\'s means are meanOverHeads; the model view\'s thumbnails the block max of each head, its metrics the full head\'s', async () => {
  const { files, layers } = await open();
  const { means } = await fileStreamWork(files, { op: 'means' }, null);
  layers.forEach((w, l) => assert.deepEqual(means[l], meanOverHeads(w, 2, N)));
  const v = await fileStreamWork(files, { op: 'model' }, null);
  const s = Math.ceil(N / THUMB);
  assert.equal(v.stride, s);
  const [sec] = v.sections;
  const tn = Math.ceil(N / s);
  assert.deepEqual([sec.key, sec.L, sec.H, sec.tn, sec.tm, sec.refused.length], ['self', 3, 2, tn, tn, 0]);
  layers.forEach((w, l) => {
    for (let hd = 0; hd < 2; hd++) {
      const want = new Float32Array(tn * tn);
      for (let i = 0; i < N; i++) {
        for (let j = 0; j < N; j++) {
          const q = Math.floor(i / s) * tn + Math.floor(j / s);
          want[q] = Math.max(want[q], w[(hd * N + i) * N + j]);
        }
      }
      assert.deepEqual(sec.thumbs[l].subarray(hd * tn * tn, (hd + 1) * tn * tn), want, `layer ${l} head ${hd}`);
    }
    assert.deepEqual(sec.entropy[l], headEntropy(w, 2, N));
    assert.deepEqual(sec.distance[l], headDistance(w, 2, N));
  });
});

test('a refused head: rollout fails naming it; the model view draws the other heads and names it; Cancel stops', async () => {
  const { files } = await open([1, 1]);
  await assert.rejects(fileStreamWork(files, { op: 'rollout', layer: 2 }, null), /attentions\.1.*head 1.*row 5/);
  const v = await fileStreamWork(files, { op: 'model' }, null);
  const [sec] = v.sections;
  assert.deepEqual(sec.refused.map((r) => [r.layer, r.head]), [[1, 1]]);
  assert.match(sec.refused[0].message, /attentions\.1.*row 5/);
  assert.ok(Number.isNaN(sec.entropy[1][1]) && Number.isFinite(sec.entropy[1][0]) && Number.isFinite(sec.entropy[2][1]));
  const ac = new AbortController();
  const p = fileStreamWork(files, { op: 'means' }, () => ac.abort(), ac.signal);
  await assert.rejects(p, { name: 'AbortError' });
  await assert.rejects(fileStreamWork(files, { op: 'nope' }, null), /fileStream: op \(nope\) must be rollout, model or means/);
});
