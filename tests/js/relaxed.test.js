// relaxed.test.js: createAttnScope({ relaxedSimd }) (API.md extension, issue 16) — the fused multiply-add GEMM
// micro-kernel (kernels-relaxed/, dist/attnscope.relaxed.wasm and its shared-memory twin .relaxed.mt.wasm for the
// threaded module). Checks: both kernel modules are true leaves (the only import the memory — shared in the
// twin —, the only export the kernel, no table, global, data or start; they hold f32x4.relaxed_madd); the
// option's errors with exact messages where it cannot run (plain Node 20 does not validate relaxed SIMD, the
// scalar build); and, in a child `node --experimental-wasm-relaxed-simd`, that it is installed ('auto' and true,
// one thread and two: every pool thread puts it in its own table, so two threads equal one bit for bit), that
// its results differ from the SIMD128 mul + add kernel in the last bits only, agree with a float64 reference and
// PyTorch's GPT-2 fixture, and that a bundled model generates the same text.
// With ATTNSCOPE_SIMD=false the same file checks the scalar build's refusal.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { assertClose, mhaReference, randomF32, runRelaxedChild } from './helpers.js';

const scalarOnly = process.env.ATTNSCOPE_SIMD === 'false';
const KERNEL = 'f32_gemm_ukernel_4x8__wasmrelaxedsimd';
const kernelBytes = readFileSync(new URL('../../dist/attnscope.relaxed.wasm', import.meta.url));
const sharedKernelBytes = readFileSync(new URL('../../dist/attnscope.relaxed.mt.wasm', import.meta.url));

function rejectsExactly(promise, Kind, message) {
  return assert.rejects(promise, (e) => {
    assert.equal(e.constructor, Kind, `${e.constructor.name}: ${e.message}`);
    assert.equal(e.message, message);
    return true;
  });
}

// ---- a minimal reader of the binary format (sections, names), enough to audit a leaf module

function reader(bytes) {
  let at = 0;
  const u32 = () => {
    let v = 0, shift = 0, b;
    do { b = bytes[at++]; v |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80);
    return v >>> 0;
  };
  const name = () => { const n = u32(); const s = Buffer.from(bytes.subarray(at, at + n)).toString('utf8'); at += n; return s; };
  return { u32, name, byte: () => bytes[at++], get at() { return at; }, set at(v) { at = v; } };
}

function sections(bytes) {
  assert.deepEqual(Array.from(bytes.subarray(0, 8)), [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0], 'wasm magic and version 1');
  const r = reader(bytes);
  r.at = 8;
  const out = [];
  while (r.at < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    out.push({ id, start: r.at, end: r.at + size });
    r.at += size;
  }
  return out;
}

function auditLeaf(bytes, shared) {
  const secs = sections(bytes);
  // 1 type, 2 import, 3 function, 7 export, 10 code: no table (4), memory (5), global (6), start (8),
  // element (9), data (11, 12) and no custom sections
  assert.deepEqual(secs.map((s) => s.id), [1, 2, 3, 7, 10], 'section ids');
  const bodyOf = (id) => {
    const s = secs.find((x) => x.id === id);
    const r = reader(bytes);
    r.at = s.start;
    return r;
  };
  const imp = bodyOf(2);
  assert.equal(imp.u32(), 1, 'one import');
  assert.deepEqual([imp.name(), imp.name(), imp.byte()], ['env', 'memory', 2], 'the import is env.memory (kind 2)');
  // limits flags: 0 = min only, 3 = min and max, shared (threads proposal)
  const flags = imp.byte();
  const min = imp.u32();
  assert.equal(flags, shared ? 3 : 0, shared ? 'a shared memory with a maximum' : 'an unshared memory without a maximum');
  assert.ok(min <= 256, `asks for at most 16 MiB of the main module's memory (${min} pages)`);
  if (shared) assert.equal(imp.u32(), 65536, 'maximum 4 GiB, the main module\'s');
  const exp = bodyOf(7);
  assert.equal(exp.u32(), 1, 'one export');
  assert.deepEqual([exp.name(), exp.byte()], [KERNEL, 0], 'the export is the kernel function');
  const code = bytes.subarray(secs.at(-1).start, secs.at(-1).end);
  const madd = code.findIndex((b, i) => b === 0xfd && code[i + 1] === 0x85 && code[i + 2] === 0x02);
  assert.ok(madd >= 0, 'the code holds f32x4.relaxed_madd (fd 85 02)');
}

test('dist/attnscope.relaxed.wasm and .relaxed.mt.wasm are leaves: import only the memory, export only the kernel, hold relaxed_madd', () => {
  auditLeaf(kernelBytes, false);
  auditLeaf(sharedKernelBytes, true);
  // the two differ only in the memory import
  assert.equal(sharedKernelBytes.length, kernelBytes.length + 3);
});

test('createAttnScope: relaxedSimd where it cannot run (plain Node 20, scalar build, threads) — exact errors, module still loads', async () => {
  assert.equal(WebAssembly.validate(kernelBytes), false, 'Node 20 without --experimental-wasm-relaxed-simd rejects relaxed SIMD');
  await rejectsExactly(createAttnScope({ relaxedSimd: true, simd: false }), Error,
    "createAttnScope: relaxedSimd (true) needs the SIMD128 build; use relaxedSimd: 'auto' or false with simd: false");
  if (!scalarOnly) {
    await rejectsExactly(createAttnScope({ relaxedSimd: true, threads: 1 }), Error,
      'createAttnScope: relaxedSimd (true) is not supported by this engine (it does not validate WebAssembly relaxed SIMD)');
    await rejectsExactly(createAttnScope({ relaxedSimd: true }), Error,
      'createAttnScope: relaxedSimd (true) is not supported by this engine (it does not validate WebAssembly relaxed SIMD)');
    await rejectsExactly(createAttnScope({ relaxedSimd: true, threads: 2 }), Error,
      'createAttnScope: relaxedSimd (true) is not supported by this engine (it does not validate WebAssembly relaxed SIMD)');
  }
  const auto = await createAttnScope({ simd: scalarOnly ? false : 'auto', threads: 1 });
  assert.equal(auto.relaxedSimd, false, "'auto' falls back to the SIMD128 kernel");
  const off = await createAttnScope({ simd: scalarOnly ? false : 'auto', threads: 1, relaxedSimd: false });
  assert.equal(off.relaxedSimd, false);
  assertClose(auto.softmax({ x: new Float32Array([1, 2, 3]), rows: 1, cols: 3 }), [0.09003057, 0.24472847, 0.66524096], { atol: 1e-7, rtol: 1e-6, what: 'softmax after the errors' });
});

// The child: loads the module with and without the kernel where the engine has relaxed SIMD, runs MHA at two
// shapes (row counts that leave 1-3 row tails in the 4x8 tiles), the english bundled model and the GPT-2 fixture,
// and prints the numbers as JSON for the assertions below.
const CHILD = `
import { readFileSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { makeGpt2TokenizerJson } from './tests/fixtures/hf/make_gpt2_tokenizer_json.mjs';
import { randomF32 } from './tests/js/helpers.js';
const fused = await createAttnScope({ threads: 1, relaxedSimd: true });
const auto = await createAttnScope({ threads: 1 });
const plain = await createAttnScope({ threads: 1, relaxedSimd: false });
const fused2 = await createAttnScope({ threads: 2, relaxedSimd: true });
const scalar = await createAttnScope({ simd: false });
const auto2 = await createAttnScope({ threads: 2 });
const out = { fused: fused.relaxedSimd, auto: auto.relaxedSimd, plain: plain.relaxedSimd, mha: [],
  fused2: [fused2.relaxedSimd, fused2.threads], auto2: [auto2.relaxedSimd, auto2.threads] };
for (const [n, d, h, seed] of [[37, 64, 4, 11], [130, 256, 8, 21], [300, 512, 8, 31]]) {
  const query = randomF32(n * d, seed);
  const w = { wq: randomF32(d * d, seed + 1, 0.1), wk: randomF32(d * d, seed + 2, 0.1), wv: randomF32(d * d, seed + 3, 0.1), wo: randomF32(d * d, seed + 4, 0.1) };
  const args = { query, nq: n, dModel: d, numHeads: h, ...w };
  const a = fused.multiHeadAttention(args), b = plain.multiHeadAttention(args), c = fused2.multiHeadAttention(args);
  out.mha.push({ n, d, h, seed, fused: Array.from(a.output), plain: Array.from(b.output), fusedWeights: Array.from(a.weights), plainWeights: Array.from(b.weights),
    fused2: Array.from(c.output), fused2Weights: Array.from(c.weights), scalar: Array.from(scalar.multiHeadAttention(args).output) });
}
const text = 'the quick brown fox jumps over the lazy dog';
const [e1, e2] = [await fused.loadBundled('english'), await plain.loadBundled('english')];
const [r1, r2] = [e1.run(text, { trace: 'weights', logProbs: true }), e2.run(text, { trace: 'weights', logProbs: true })];
out.english = { fused: e1.generate(text, { maxNewTokens: 24 }).text, plain: e2.generate(text, { maxNewTokens: 24 }).text,
  fusedLogProbs: Array.from(r1.logProbs), plainLogProbs: Array.from(r2.logProbs), fusedOutput: Array.from(r1.output), plainOutput: Array.from(r2.output) };
const dir = './tests/fixtures/hf/gpt2-lmhead-f32/';
const want = JSON.parse(readFileSync(dir + 'expected.json', 'utf8'));
const gpt2 = await fused.loadPretrained({ config: readFileSync(dir + 'config.json', 'utf8'), weights: readFileSync(dir + 'model.safetensors'), tokenizer: makeGpt2TokenizerJson({ merges: 'strings' }) });
out.gpt2 = want.texts.map((t) => { const r = gpt2.run(t.text); return { ids: Array.from(r.ids), attentions: r.layers.map((l) => Array.from(l.attention.weights)), hidden: Array.from(r.output) }; });
process.stdout.write(JSON.stringify(out));
`;

test('relaxedSimd in an engine that has it (node --experimental-wasm-relaxed-simd): installed on 1 and 2 threads, last-bit differences only, float64 and PyTorch agree',
  { skip: scalarOnly && 'the fused multiply-add kernel is for the SIMD128 build' }, () => {
    const out = runRelaxedChild(CHILD, { maxBuffer: 256 << 20 });
    assert.equal(out.fused, true, 'relaxedSimd: true runs the kernel');
    assert.equal(out.auto, true, "relaxedSimd: 'auto' picks the kernel where the engine validates it");
    assert.equal(out.plain, false);
    assert.deepEqual(out.fused2, [true, 2], 'the threaded module runs the kernel too');
    assert.deepEqual(out.auto2, [true, 2]);
    for (const m of out.mha) {
      const what = `MHA n ${m.n} d ${m.d} h ${m.h}`;
      // one rounding per multiply-add instead of two: differences of a few ulps of the partial sums
      assertClose(m.fused, m.plain, { atol: 2e-6, rtol: 2e-6, what: `${what}: fused vs mul + add` });
      assertClose(m.fusedWeights, m.plainWeights, { atol: 1e-6, rtol: 1e-5, what: `${what}: weights fused vs mul + add` });
      const w = { wq: randomF32(m.d * m.d, m.seed + 1, 0.1), wk: randomF32(m.d * m.d, m.seed + 2, 0.1), wv: randomF32(m.d * m.d, m.seed + 3, 0.1), wo: randomF32(m.d * m.d, m.seed + 4, 0.1) };
      const ref = mhaReference(randomF32(m.n * m.d, m.seed), m.n, m.d, m.h, w);
      const errFused = assertClose(m.fused, ref, { atol: 1e-5, rtol: 1e-4, what: `${what}: fused vs float64` });
      const errPlain = assertClose(m.plain, ref, { atol: 1e-5, rtol: 1e-4, what: `${what}: mul + add vs float64` });
      // the kernel really ran: a fused multiply-add rounds differently somewhere in thousands of outputs
      assert.ok(m.fused.some((x, i) => x !== m.plain[i]), `${what}: fused results differ from mul + add in some last bit`);
      assert.ok(errFused < 4 * errPlain + 1e-7, `${what}: fused error ${errFused} is of the order of mul + add's ${errPlain}`);
      // the scalar twin (the portable build, its own summation order)
      assertClose(m.fused, m.scalar, { atol: 1e-5, rtol: 1e-5, what: `${what}: fused vs the scalar build` });
      // every pool thread put the kernel in its own table: a piece run by the built-in kernel would round differently
      assertClose(m.fused2, m.fused, { atol: 0, rtol: 0, what: `${what}: fused, 2 threads vs 1` });
      assertClose(m.fused2Weights, m.fusedWeights, { atol: 0, rtol: 0, what: `${what}: fused weights, 2 threads vs 1` });
    }
    assert.equal(out.english.fused, out.english.plain, 'english: greedy text identical');
    assert.equal(out.english.fusedLogProbs.length, 42, 'english: one log-probability per next character');
    assertClose(out.english.fusedLogProbs, out.english.plainLogProbs, { atol: 1e-5, rtol: 1e-5, what: 'english log-probabilities' });
    assertClose(out.english.fusedOutput, out.english.plainOutput, { atol: 1e-5, rtol: 1e-5, what: 'english final hidden states' });
    const want = JSON.parse(readFileSync(new URL('../fixtures/hf/gpt2-lmhead-f32/expected.json', import.meta.url), 'utf8'));
    want.texts.forEach((t, k) => {
      const got = out.gpt2[k];
      assert.deepEqual(got.ids, t.ids);
      got.attentions.forEach((a, i) => assertClose(a, t.attentions[i], { ...want.tolerance.attentions, what: `GPT-2 attentions[${i}] vs PyTorch` }));
      assertClose(got.hidden, t.last_hidden_state, { ...want.tolerance.hidden_states, what: 'GPT-2 last_hidden_state vs PyTorch' });
    });
  });
