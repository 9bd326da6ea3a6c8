// bin/attnscope.mjs's "looking inside" commands (lens, ablate, patch, heads) end to end, as a user runs them (child
// process): each format's numbers equal the module's own for the same model in process (whose numbers
// tests/js/patching.test.js and inside.test.js check against PyTorch), figures are SVG documents and PNGs with an
// IHDR chunk; bad arguments: one line on stderr, nothing on stdout, exit code 2.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadAs, assertClose } from './helpers.js';
import { cli, ok } from './support/cli.mjs';

const TEXT = 'the cat sat on the mat';
const DEC = ['--architecture', 'decoder', '--tokenizer', 'char', '--d-model', '16', '--heads', '2', '--layers', '2', '--seed', '3'];
const CONFIG = { architecture: 'decoder', tokenizer: 'char', dModel: 16, numHeads: 2, numLayers: 2, seed: 3 };

async function withModel(fn) {
  const as = await loadAs();
  const model = as.createModel(CONFIG);
  try {
    return await fn(as, model);
  } finally {
    model.delete();
  }
}

test('lens: JSON and CSV are run({ lens }), the figure is layers × positions', async () => {
  const json = JSON.parse(await ok(['lens', TEXT, ...DEC, '--k', '2']));
  await withModel(async (as, model) => {
    const r = model.run(TEXT, { lens: 2 });
    assert.deepEqual(json.tokens, r.tokens);
    r.layers.forEach((l, i) => {
      for (let p = 0; p < r.n; p++) {
        for (let j = 0; j < 2; j++) {
          assert.equal(json.layers[i][p][j].id, l.lens.ids[p * 2 + j]);
          assertClose([json.layers[i][p][j].prob], [l.lens.probs[p * 2 + j]], { atol: 1e-7, rtol: 0, what: 'lens prob' });
        }
      }
    });
  });
  const csv = (await ok(['lens', TEXT, ...DEC, '--k', '2', '--format', 'csv'])).toString('utf8').trim().split('\n');
  assert.equal(csv[0], 'layer,position,token,rank,id,prob');
  assert.equal(csv.length, 1 + 2 * json.tokens.length * 2);
  const svg = (await ok(['lens', TEXT, ...DEC, '--format', 'svg'])).toString('utf8');
  assert.match(svg, /<svg[^>]*>/);
  assert.equal((svg.match(/class="cell"/g) ?? []).length, 2 * json.tokens.length);
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-inside-'));
  try {
    await ok(['lens', TEXT, ...DEC, '-o', path.join(dir, 'lens.png')]);
    const png = readFileSync(path.join(dir, 'lens.png'));
    assert.equal(png.toString('latin1', 12, 16), 'IHDR');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ablate: next-token probabilities and the loss before and after equal run({ ablate }) (zero and mean)', async () => {
  const json = JSON.parse(await ok(['ablate', TEXT, ...DEC, '--heads-off', '1.0,0.1']));
  const mean = JSON.parse(await ok(['ablate', TEXT, ...DEC, '--heads-off', '1.0', '--mean-texts', 'a cat|the mat']));
  await withModel(async (as, model) => {
    const loss = (r) => -r.logProbs.reduce((s, x) => s + x, 0) / r.logProbs.length;
    const heads = [{ layer: 1, head: 0 }, { layer: 0, head: 1 }];
    const after = model.run(TEXT, { logProbs: true, topK: 10, ablate: heads });
    const before = model.run(TEXT, { logProbs: true, topK: 10 });
    assertClose([json.loss.before, json.loss.after], [loss(before), loss(after)], { atol: 1e-6, rtol: 0, what: 'loss' });
    assert.notEqual(json.loss.before, json.loss.after);
    const top = json.next.find((x) => x.id === after.next.ids[0]);
    assertClose([top.after], [after.next.probs[0]], { atol: 1e-7, rtol: 0, what: 'top prob after' });
    const m = as.headMeans(model, ['a cat', 'the mat']);
    const meanRun = model.run(TEXT, { logProbs: true, ablate: [{ layer: 1, head: 0, mean: m.means.subarray(2 * m.headDim, 3 * m.headDim) }] });
    assertClose([mean.loss.after], [loss(meanRun)], { atol: 1e-6, rtol: 0, what: 'mean-ablated loss' });
  });
});

test('patch and heads: the heatmap numbers are as.patch and as.headScores / as.ablationSweep', async () => {
  const clean = 'the cat sat on the mat';
  const corrupted = 'the mat sat on the cat';
  const json = JSON.parse(await ok(['patch', ...DEC, '--clean', clean, '--corrupted', corrupted, '--token', 'c', '--vs', 'm']));
  const heads = JSON.parse(await ok(['heads', TEXT, ...DEC, '--sweep', 'loss']));
  await withModel(async (as, model) => {
    const p = await as.patch(model, { clean, corrupted, tokens: ['c', 'm'] });
    assertClose(json.values, Array.from(p.values), { atol: 1e-6, rtol: 0, what: 'patch values' });
    assertClose([json.cleanLogitDiff, json.corruptedLogitDiff], [p.clean, p.corrupted], { atol: 1e-6, rtol: 0, what: 'patch ends' });
    const r = model.run(TEXT, { trace: 'weights' });
    const s = as.headScores({ weights: r.layers.map((l) => l.attention.weights), numHeads: 2, n: r.n, ids: r.ids });
    const sweep = await as.ablationSweep(model, TEXT);
    heads.heads.forEach((h, i) => {
      assertClose([h.previous, h.duplicate, h.sink, h.deltaLoss], [s.previousToken[i], s.duplicateToken[i], s.sinkShare[i], sweep.delta[i]], { atol: 1e-6, rtol: 0, what: 'heads' });
    });
  });
  const svg = (await ok(['patch', ...DEC, '--clean', clean, '--corrupted', corrupted, '--token', 'c', '--vs', 'm', '--granularity', 'residual', '--format', 'svg'])).toString('utf8');
  assert.equal((svg.match(/class="cell"/g) ?? []).length, 2 * json.tokens.length);
});

test('heads: induction is the stripe at offset 1 - T over the second copy of the probe it names', async () => {
  const json = JSON.parse(await ok(['heads', TEXT, ...DEC]));
  const csv = (await ok(['heads', TEXT, ...DEC, '--format', 'csv'])).toString('utf8').trim().split('\n');
  assert.equal(csv[0], 'layer,head,previous,duplicate,sink,induction');
  const T = json.inductionPeriod;
  // the text's distinct letters (the character tokenizer skips spaces): t h e c a s o n m
  assert.equal(T, 9);
  assert.deepEqual([...new Set(json.inductionProbe)].sort().join(''), 'acehmnost');
  assert.equal(json.inductionProbe.slice(0, T), json.inductionProbe.slice(T));
  await withModel(async (as, model) => {
    const r = model.run(json.inductionProbe, { trace: 'weights' });
    assert.equal(r.n, 2 * T);
    json.heads.forEach((h, i) => {
      const w = r.layers[h.layer].attention.weights;
      let sum = 0;
      for (let q = T; q < 2 * T; q++) sum += w[(h.head * r.n + q) * r.n + q - T + 1];
      assertClose([h.induction], [sum / T], { atol: 1e-6, rtol: 0, what: `induction ${i}` });
      assert.equal(Number(csv[i + 1].split(',')[5]), h.induction);
    });
  });
  const svg = (await ok(['heads', TEXT, ...DEC, '--score', 'induction', '--format', 'svg'])).toString('utf8');
  assert.match(svg, /induction/);
});

test('inside commands: bad arguments are one line on stderr and exit code 2', async () => {
  const cases = [
    [['ablate', TEXT, ...DEC], 'attnscope: ablate: --heads-off is required, e.g. --heads-off 0.1,3.2 (layer.head)\n'],
    [['ablate', TEXT, ...DEC, '--heads-off', '9.0'], 'attnscope: run: ablate[0].layer (9) must be an integer from 0 to 1\n'],
    [['patch', 'x', ...DEC], 'attnscope: patch: no text argument (give --clean and --corrupted), got "x"\n'],
    [['patch', ...DEC, '--clean', 'ab', '--corrupted', 'abc', '--token', 'a', '--vs', 'b'],
      'attnscope: patch: corrupted has 3 tokens and clean 2 (patching needs prompts of the same length)\n'],
    [['patch', ...DEC, '--clean', 'ab', '--corrupted', 'ba', '--token', 'a'], 'attnscope: --vs is required (a token text such as " Mary", or an id written #123)\n'],
    [['ablate', TEXT, ...DEC, '--heads-off', '0.0', '--format', 'svg'], 'attnscope: ablate has no figure: use --format json or csv\n'],
    [['lens', TEXT, '--k', '2'], 'attnscope: lens needs a language model (this model is an encoder)\n'],
    [['heatmap', TEXT, '--k', '2'], 'attnscope: --k applies only to lens, ablate, patch, heads\n'],
    [['heads', TEXT, ...DEC, '--score', 'copying'], 'attnscope: --score (copying) must be one of previous, duplicate, sink, induction\n'],
    [['heads', 'aaa', ...DEC, '--score', 'induction'], 'attnscope: induction: the text needs at least 2 different tokens\n'],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args);
    assert.equal(r.stderr, message, args.join(' '));
    assert.equal(r.code, 2);
    assert.equal(r.stdout.length, 0);
  }
});
