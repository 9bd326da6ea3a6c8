// The english vs english-rope switch (layer: web; in the compare panel, #pair-view): the page's text through the two
// bundled models trained alike but for their blocks (learned positions vs RoPE, GPT-2 blocks vs RMSNorm / SwiGLU /
// shared K/V heads), one head of each — by default each model's strongest labelled previous-token head — their
// difference on aligned tokens (web/compare.js, the compare panel's code and tiles), and both models' previous-token
// heads, each a button that shows it. The work runs in the worker ('pair' request, web/pair-work.js), on demand.
import { $, h, replace } from '../dom.js';
import { t, onLanguageChange } from '../i18n.js';
import { compareTraces } from '../compare.js';
import { compareTiles } from '../views/compare.js';

/** createPair({ compute, state }): wires #pair-view; state is the page state (its text is read when asked). */
export function createPair({ compute, state }) {
  const root = $('pair-view');
  if (!root) return null;
  const picks = [null, null];
  let last = null; // { sides, result } | { error }
  const status = h('p', { class: 'note', role: 'status', dataset: { name: 'pair-status' } });
  const out = h('div', { class: 'pair-out' });
  // built in the page's language, and again when it changes (with the comparison, if one is shown)
  const frame = () => {
    const run = h('button', { type: 'button', class: 'btn', id: 'pair-run', text: t('pair.run') });
    run.addEventListener('click', () => ask());
    replace(root, h('p', { class: 'note', text: t('pair.note') }), h('div', { class: 'ctl-row' }, run), status, out);
    if (last) draw();
  };
  onLanguageChange(frame);
  queueMicrotask(frame); // after the page has chosen its language (web/app.js boot)

  async function ask() {
    status.textContent = t('pair.working');
    try {
      const { value: sides } = await compute.call('pair', { text: state.text, picks: [...picks] });
      last = { sides, result: compareTraces(side(sides[0]), side(sides[1])) };
    } catch (e) {
      last = { error: e.message };
    }
    draw();
  }
  const side = (s) => ({ tokens: s.tokens, weights: s.weights, text: s.text, offsets: s.offsets });
  const headName = (x) => t('pair.head', { l: x.layer + 1, h: x.head + 1 });

  function draw() {
    if (last.error) {
      status.textContent = '';
      replace(out, h('p', { class: 'error', role: 'alert', text: t('compare.cannot', { reason: last.error }) }));
      return;
    }
    const { sides, result } = last;
    status.textContent = sides.some((s) => s.truncated) ? t('pair.truncated', { n: sides[0].n }) : '';
    const width = root.clientWidth || 600;
    const pickers = sides.map((s, k) => {
      const sel = h('select', { 'aria-label': t('pair.pick', { name: s.name }), dataset: { side: k } });
      for (let l = 0; l < s.numLayers; l++) {
        for (let hd = 0; hd < s.numHeads; hd++) {
          const prev = s.prev.find((x) => x.layer === l && x.head === hd);
          sel.append(h('option', { value: `${l},${hd}`, text: `${headName({ layer: l, head: hd })}${prev ? ` · ${t('pair.prevScore', { score: prev.score.toFixed(2) })}` : ''}` }));
        }
      }
      sel.value = `${s.layer},${s.head}`;
      sel.addEventListener('change', () => {
        const [layer, head] = sel.value.split(',').map(Number);
        picks[k] = { layer, head };
        ask();
      });
      const prevs = h('div', { class: 'head-legend', dataset: { name: 'pair-prev', side: k } },
        h('span', { class: 'head-legend-title', text: t('pair.prevHeads', { name: s.name }) }),
        s.prev.map((x) => {
          const b = h('button', { type: 'button', class: `head-label${x.layer === s.layer && x.head === s.head ? ' on' : ''}`, dataset: { layer: x.layer, head: x.head }, text: `${headName(x)} (${x.score.toFixed(2)})` });
          b.addEventListener('click', () => { picks[k] = { layer: x.layer, head: x.head }; ask(); });
          return b;
        }));
      return h('div', { class: 'pair-side' }, h('label', {}, `${s.name} `, sel), prevs);
    });
    replace(out, ...pickers,
      h('p', { class: 'note', dataset: { name: 'pair-alignment' }, text: result.mode === 'chars'
        ? t('compare.aligned', { a: sides[0].n, b: sides[1].n, spans: result.U }) : t('compare.byPosition', { n: result.U }) }),
      compareTiles(result, `${sides[0].name} · ${headName(sides[0])}`, `${sides[1].name} · ${headName(sides[1])}`, width, ['pair-a', 'pair-b', 'pair-diff'],
        t('pair.diff', { a: sides[0].name, b: sides[1].name })));
  }
  return { last: () => last };
}
