// Accessibility of the page (issue 14, "a page for everyone"), in the real browser (tests/browser/harness.js):
// axe-core (npm devDependency) on every view and mode — text and worked example, encoder, decoder with the
// causal view, encoder–decoder, aggregates, a trained model — in light and dark colour schemes and in both
// languages: no serious or critical violation. The keyboard: Tab reaches the controls and the heatmaps with a
// visible focus ring, arrow keys move a heatmap's highlighted cell, and the live region announces that cell's
// row and column tokens and its value — the module's own weight, recomputed here through the public API.
// axe is evaluated as a script through the DevTools protocol (page.evaluate), which the page's CSP (script-src
// 'self', no inline scripts) does not apply to, so the page's policy stays as shipped.
// Run: node --test --test-concurrency=1 tests/browser/a11y.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  useBrowser, afterDraw, clean, axeProblems,
} from './harness.js';

const open = useBrowser();

/** Waits for the model trace and both attention-family views to be drawn. */
async function allDrawn(page) {
  // generous: the machine running the suite may be shared, and the first page compiles the module
  await page.waitForFunction(() => {
    const a = window.__attnscope;
    const f = a?.family;
    return a && a.runs > 0 && f.additive.runs > 0 && f.regression.runs > 0
      && Number(document.documentElement.dataset.drawn ?? 0) > 0 && !document.documentElement.dataset.busy;
  }, null, { timeout: 120000 });
}

const VIEWS = [
  ['text, encoder, multi-head', ''],
  ['worked example', '#mode=example'],
  ['decoder (causal), mean over heads', '#arch=decoder&agg=mean&thr=0.05'],
  ['encoder–decoder, rollout, learned positions', '#arch=encoder-decoder&agg=rollout&positional=learned'],
  ['trained english model (causal view)', '#model=english&text=the%20cat%20sat%20on%20the%20mat'],
];

for (const scheme of ['light', 'dark']) {
  for (const lang of ['en', 'zh-CN']) {
    test(`a11y: axe-core finds no serious or critical violation on any view (${scheme}, ${lang})`, async () => {
      const failures = [];
      for (const [name, hash] of VIEWS) {
        const full = `${hash || '#'}${hash ? '&' : ''}lang=${lang}`;
        const { page, rec } = await open(full, undefined, async (p) => {
          await p.emulateMedia({ colorScheme: scheme });
          await allDrawn(p);
        });
        assert.equal(await page.evaluate(() => document.documentElement.lang), lang);
        assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), scheme === 'dark');
        for (const p of await axeProblems(page)) failures.push(`${name}: ${p}`);
        clean(rec);
        await page.close();
      }
      assert.deepEqual(failures, [], 'axe-core: no serious or critical violation');
    });
  }
}

test('a11y: axe-core on a phone (390×844): no serious or critical violation, light and dark', async () => {
  const failures = [];
  for (const scheme of ['light', 'dark']) {
    for (const [name, hash] of [VIEWS[0], VIEWS[1], VIEWS[3]]) {
      const { page, rec } = await open(`${hash || '#'}${hash ? '&' : ''}lang=zh-CN`, { width: 390, height: 844 }, async (p) => {
        await p.emulateMedia({ colorScheme: scheme });
        await allDrawn(p);
      });
      for (const p of await axeProblems(page)) failures.push(`${name} (${scheme}): ${p}`);
      clean(rec);
      await page.close();
    }
  }
  assert.deepEqual(failures, [], 'axe-core: no serious or critical violation on a phone');
});

test('a11y: dark mode follows the system setting (page and heatmap chrome change colour)', async () => {
  const colours = {};
  for (const scheme of ['light', 'dark']) {
    const { page, rec } = await open('', undefined, async (p) => {
      await p.emulateMedia({ colorScheme: scheme });
      await allDrawn(p);
    });
    colours[scheme] = await page.evaluate(() => {
      const bg = (sel) => getComputedStyle(document.querySelector(sel)).backgroundColor;
      const fg = (sel) => getComputedStyle(document.querySelector(sel)).color;
      return { body: bg('body'), panel: bg('.panel'), ink: fg('.panel h2') };
    });
    clean(rec);
    await page.close();
  }
  const lum = (c) => {
    const [r, g, b] = c.match(/\d+/g).map(Number);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  assert.ok(lum(colours.light.panel) > 200 && lum(colours.dark.panel) < 60, `panels: ${colours.light.panel} / ${colours.dark.panel}`);
  assert.ok(lum(colours.light.ink) < 60 && lum(colours.dark.ink) > 200, `text: ${colours.light.ink} / ${colours.dark.ink}`);
});

test('a11y: Tab reaches the language switch, the controls and the heatmaps, each with a visible focus ring', async () => {
  const { page, rec } = await open();
  const seen = [];
  for (let k = 0; k < 90; k++) {
    await page.keyboard.press('Tab');
    const f = await page.evaluate(() => {
      const el = document.activeElement;
      // a segmented control's radio is hidden; its label carries the ring (style.css .seg)
      const cs = getComputedStyle(el.closest('.seg label') ?? el);
      const ring = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none';
      return { id: el.id, tag: el.tagName, kind: el.dataset.kind ?? '', ring };
    });
    seen.push(f);
  }
  const ids = seen.map((f) => f.id);
  for (const id of ['lang', 'copy-link', 'export', 'model', 'tokenizer', 'arch', 'attention', 'dModel', 'seed', 'text', 'agg']) {
    assert.ok(ids.includes(id), `Tab reaches #${id} (reached: ${ids.filter(Boolean).join(', ')})`);
  }
  assert.ok(seen.some((f) => f.tag === 'CANVAS'), 'Tab reaches a heatmap');
  const noRing = seen.filter((f) => f.tag !== 'BODY' && !f.ring);
  assert.deepEqual(noRing, [], 'every focused element shows a focus ring (outline or box-shadow)');
  clean(rec);
  await page.close();
});

test('a11y: arrow keys move the heatmap cell; the live region announces its tokens and the module\'s weight', async () => {
  const text = 'keys open doors slowly';
  const { page, rec } = await open(`#text=${encodeURIComponent(text)}&lang=en`);
  const canvas = page.locator('canvas[data-kind="attention"][data-head="1"]');
  await canvas.focus();
  const live = () => page.evaluate(() => {
    const c = document.activeElement;
    const el = c.closest('figure').querySelector('.hm-live');
    return { text: el.textContent, row: Number(el.dataset.row), col: Number(el.dataset.col), value: Number(el.dataset.value) };
  });
  // the module's weights for the same input, from a fresh model of the page's configuration
  const want = await page.evaluate(async () => {
    const { createAttnScope } = await import('/bindings/js/index.js');
    const as = await createAttnScope({ relaxedSimd: false }); // as the page's worker: Node's numbers, bit for bit
    const s = window.__attnscope.traceState;
    const m = as.createModel({
      tokenizer: s.tokenizer, architecture: s.arch, attention: 'learned', dModel: s.dModel, numHeads: s.numHeads,
      numLayers: s.numLayers, dFF: s.dFF, seed: s.seed, positional: s.positional, positionalBase: s.base,
      normFirst: s.normFirst, activation: s.activation,
    });
    try {
      const r = m.run(s.text);
      return { n: r.n, tokens: r.tokens, w: Array.from(r.layers[0].attention.weights) };
    } finally {
      m.delete();
    }
  });
  const n = want.n;
  assert.equal(n, 4);
  const at = (i, j) => want.w[1 * n * n + i * n + j]; // head 1
  let cell = await live();
  assert.deepEqual([cell.row, cell.col], [0, 0], 'focus announces the first cell of the selected row');
  const path = [['ArrowRight', 0, 1], ['ArrowRight', 0, 2], ['ArrowDown', 1, 2], ['ArrowDown', 2, 2], ['ArrowLeft', 2, 1],
    ['End', 2, 3], ['ArrowDown', 3, 3], ['ArrowDown', 3, 3], ['Home', 3, 0], ['ArrowUp', 2, 0]];
  for (const [key, i, j] of path) {
    await page.keyboard.press(key);
    cell = await live();
    assert.deepEqual([cell.row, cell.col], [i, j], `${key} moves to (${i}, ${j})`);
    assert.ok(Math.abs(cell.value - at(i, j)) < 1e-6, `${key}: announced value ${cell.value} is the module's ${at(i, j)}`);
    assert.ok(cell.text.startsWith(`query ${i} “${want.tokens[i]}” · key ${j} “${want.tokens[j]}”: ${at(i, j).toFixed(4)}`),
      `announcement names both tokens and the value: ${cell.text}`);
  }
  // the visually hidden table holds the same numbers
  const table = await canvas.evaluate((c) => [...c.closest('figure').querySelectorAll('.hm-table tbody tr')]
    .map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent.replace('−', '-')))));
  assert.equal(table.length, n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) assert.ok(Math.abs(table[i][j] - at(i, j)) < 5e-5);
  // Enter on a cell follows its query row step by step
  await afterDraw(page, () => page.keyboard.press('Enter'));
  assert.equal(await page.evaluate(() => window.__attnscope.state.token), 2);
  clean(rec);
  await page.close();
});

test('a11y: the model view grid is navigable by keyboard and Enter opens the head', async () => {
  const { page, rec } = await open('#numLayers=3&lang=en');
  const grid = page.locator('#model-view canvas.mv-canvas');
  await grid.focus();
  const tip = () => page.evaluate(() => document.activeElement.closest('.mv-plot').querySelector('.mv-live').textContent);
  assert.match(await tip(), /^Layer 1 · head 1 · entropy [\d.]+ nats/);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  assert.match(await tip(), /^Layer 2 · head 2 · entropy [\d.]+ nats/);
  await afterDraw(page, () => page.keyboard.press('Enter'));
  const s = await page.evaluate(() => window.__attnscope.state);
  assert.equal(s.layer, 1);
  assert.equal(s.heads, '1');
  clean(rec);
  await page.close();
});
