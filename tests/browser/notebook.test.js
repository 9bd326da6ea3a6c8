// The notebook helper end to end (issue 29): a notebook that builds attentions with PyTorch (softmax rows, as
// Hugging Face's eager attention) and calls attnscope.show() is executed by Debian's Jupyter (`jupyter nbconvert
// --execute --to html`, installed by scripts/setup.sh); the HTML it writes is opened in Chromium from disk, where
// the output cell's script (attnscope's own views, bundled by scripts/build-notebook.mjs) draws the heatmaps. Their
// values equal torch's (the float32 values the notebook wrote next to it), the model view is drawn, and no request
// leaves the file. A second cell shows an encoder-decoder's cross-attention (source tokens): its target × source maps
// hold torch's weights and the model view has a cross-attention grid. Run: node --test tests/browser/notebook.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { useBrowser, clean, root } from './harness.js';

const open = useBrowser();
const SHOTS = process.env.ATTNSCOPE_SHOTS ?? path.join(root, 'build', 'screenshots');

const cells = (dir) => [
  `import sys, json\nsys.path.insert(0, ${JSON.stringify(path.join(root, 'python'))})\nimport torch, attnscope`,
  `g = torch.Generator().manual_seed(7)
tokens = ["The", "Ġcat", "Ġsat", "Ġon", "Ġthe", "Ġmat"]
n = len(tokens)
mask = torch.ones(n, n, dtype=torch.bool).triu(1)
# outputs.attentions of a 2-layer, 3-head causal model, batch 1: softmax(q k^T * scale + mask) as eager attention
attentions = tuple(torch.softmax((torch.randn(1, 3, n, n, generator=g) * 2).masked_fill(mask, float("-inf")), dim=-1) for _ in range(2))
json.dump({"tokens": tokens, "layers": [a[0].reshape(-1).tolist() for a in attentions]}, open(${JSON.stringify(path.join(dir, 'expected.json'))}, "w"))`,
  'out = attnscope.show(attentions, tokens, layer=1, head=0)\nprint(len(out.html))\nout',
  // an encoder-decoder's outputs.cross_attentions [batch, heads, n, m] with the source's tokens: 2 layers, 2 heads
  `source = ["Le", "▁chat", "▁dort", "</s>"]
cross = tuple(torch.softmax(torch.randn(1, 2, n, len(source), generator=g) * 2, dim=-1) for _ in range(2))
json.dump({"source": source, "cross": [c[0].reshape(-1).tolist() for c in cross]}, open(${JSON.stringify(path.join(dir, 'cross.json'))}, "w"))
attnscope.show(attentions, tokens, layer=0, head=1, source_tokens=source, cross_attentions=cross)`,
];

test('a notebook calling attnscope.show() runs in Jupyter; the HTML draws torch\'s weights offline', async () => {
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-notebook.mjs')], { encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  const dir = mkdtempSync(path.join(tmpdir(), 'attnscope-nb-'));
  try {
    const nb = {
      nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
      cells: cells(dir).map((source, i) => ({ cell_type: 'code', id: `c${i}`, metadata: {}, execution_count: null, outputs: [], source })),
    };
    writeFileSync(path.join(dir, 'show.ipynb'), JSON.stringify(nb));
    const run = spawnSync('jupyter', ['nbconvert', '--execute', '--to', 'html', '--template', 'basic', 'show.ipynb'], { cwd: dir, encoding: 'utf8', timeout: 300000 });
    assert.equal(run.status, 0, `jupyter nbconvert failed (scripts/setup.sh installs it):\n${run.stdout}${run.stderr}`);
    const html = path.join(dir, 'show.html');
    console.log(`# notebook HTML: ${(statSync(html).size / 1024).toFixed(0)} KB`);
    const expected = JSON.parse(readFileSync(path.join(dir, 'expected.json'), 'utf8'));
    const { page, rec } = await open.file(pathToFileURL(html).href, { ready: (p) => p.waitForSelector('.attnscope-show >> canvas[data-kind="attention"]') });
    // layer 2 (layer=1), head 1 (head=0) first: its values are torch's (float32, so equal as float32)
    const got = await page.evaluate(() => {
      const host = document.querySelector('.attnscope-show');
      return [...host.shadowRoot.querySelectorAll('canvas[data-kind="attention"]')].map((c) => ({ head: Number(c.dataset.head), layer: Number(c.dataset.layer), values: JSON.parse(c.dataset.values) }));
    });
    assert.equal(got.length, 1, 'head 0 shown');
    assert.equal(got[0].layer, 1);
    const want = expected.layers[1].slice(0, 36);
    let err = 0;
    want.forEach((v, i) => { err = Math.max(err, Math.abs(got[0].values[i] - Math.fround(v))); });
    assert.equal(err, 0, 'the heatmap shows torch\'s float32 weights');
    const grid = await page.evaluate(() => document.querySelector('.attnscope-show').shadowRoot.querySelectorAll('.mv-grid').length);
    assert.equal(grid, 1, 'the model view of every layer × head');
    // the cross-attention cell: layer 1, head 2's target × source map holds torch's weights; its own model-view grid
    const cross = JSON.parse(readFileSync(path.join(dir, 'cross.json'), 'utf8'));
    const drawn = await page.evaluate(() => {
      const root = [...document.querySelectorAll('.attnscope-show')].filter((e) => e.shadowRoot)[1].shadowRoot; // the second output cell's view
      const c = [...root.querySelectorAll('canvas[data-kind="cross"]')];
      return {
        maps: c.map((x) => ({ layer: Number(x.dataset.layer), head: Number(x.dataset.head), values: JSON.parse(x.dataset.values) })),
        sections: [...root.querySelectorAll('canvas.mv-canvas')].map((x) => [x.dataset.section, x.dataset.n, x.dataset.m]),
        text: root.textContent,
      };
    });
    assert.deepEqual(drawn.maps.map((x) => [x.layer, x.head]), [[0, 1]], 'layer 1, head 2 of the cross-attention');
    const m = cross.source.length;
    const wantCross = cross.cross[0].slice(1 * 6 * m, 2 * 6 * m).map((v) => Math.fround(v));
    assert.deepEqual(drawn.maps[0].values, wantCross, 'the cross-attention map shows torch\'s float32 weights');
    assert.deepEqual(drawn.sections, [['self', '6', '6'], ['cross', '6', '4']], 'self- and cross-attention grids');
    assert.match(drawn.text, /▁chat/);
    console.log(`# notebook cross-attention: ${drawn.maps[0].values.length} weights equal torch's`);
    await page.screenshot({ path: path.join(SHOTS, 'notebook-output.png'), fullPage: true });
    clean(rec);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
