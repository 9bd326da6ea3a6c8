// Panel 4c: translation (encoder–decoder models the page loaded: a bundled one or the user's checkpoint) — the
// model writes the target for the text (greedy or beam search, asked of the worker: ctx.act.translate, whose
// answer redraws this panel), and the view shows the cross-attention of that returned sequence per layer and head
// (or mean / max over heads), as a heatmap and as d2l's alignment, words merged on both sides when asked; a target
// token chosen shows the source its step read. The panel's own choices (beams, layer, heads, words, step) are not
// in the link. Exports: the heatmap and the alignment as SVG / PNG / CSV / JSON, exactly the map drawn.
import { $, replace, h, tokenLabel } from '../dom.js';
import { t } from '../i18n.js';
import { translateView } from '../views/translate.js';
import { crossMap, crossFigure, alignmentTree, toSvgText } from '../translate-model.js';
import { exportFigure, download } from '../exports.js';

const ID = 'panel-translate';
// what the panel shows and what it asked for: the translation answers (input, beams) → { tr | error }
const shown = {
  beams: 1, layer: 0, head: 'mean', words: false, step: null, focus: false, key: null, tr: null, error: null, asked: null, ms: 0,
};

const loads = new WeakMap(); // a loaded checkpoint (ctx.checkpoint) → its number: a newer load is another model
let loaded = 0;
const loadOf = (ck) => {
  if (ck && !loads.has(ck)) loads.set(ck, ++loaded);
  return ck ? loads.get(ck) : 0;
};

/** Whether the trace on screen is a loaded encoder–decoder model's (the panel shows only for those). */
const applies = (ctx) => !ctx.trace.example && ctx.traceState?.mode === 'text' && !['random', 'file'].includes(ctx.traceState.model)
  && ctx.trace.config?.architecture === 'encoder-decoder';

/** The heatmap's title: layer and heads, in the page's language. */
const titleOf = (layer, head) => t('translate.mapTitle', {
  l: layer + 1, heads: head === 'mean' ? t('translate.mean') : head === 'max' ? t('translate.max') : t('translate.head', { h: head + 1 }),
});

function statusOf(tr) {
  const how = tr.numBeams > 1 ? t('translate.beams', { n: tr.numBeams }) : t('translate.greedy');
  const n = tr.written.tokens.length - (tr.stoppedAtEnd ? 1 : 0);
  return t(tr.stoppedAtEnd ? 'translate.statusEnd' : 'translate.statusCut', { how, n, s: (tr.generateMs / 1000).toFixed(tr.generateMs < 100 ? 3 : 2) });
}

function doExport(map, what, format) {
  const { tr, layer, head, step } = shown;
  const title = `${tr.model} · ${titleOf(layer, head)}`;
  // the alignment's CSV and JSON are its map's numbers (the figure's view says 'lines'); its SVG and PNG its drawing
  const f = crossFigure(tr, map, { layer, head, view: what === 'heatmap' ? 'heatmap' : 'lines', title });
  const render = what === 'heatmap' ? undefined : { svg: () => alignmentSvg(map, title, step) };
  exportFigure(f, format, `attnscope-translate-${what}-layer${layer}.${format}`, render);
}

const alignmentSvg = (map, title, step) => toSvgText(alignmentTree(map, { selected: step, title, labels: (x) => tokenLabel(x, 16) }).tree);

export const translate = {
  id: ID,
  box: 'translate-view',
  needs: () => [],
  key: (ctx) => (applies(ctx) ? [ctx.serial, shown.key, shown.tr ? 1 : 0, shown.error, shown.layer, shown.head, shown.words, shown.step, ctx.width['translate-view'], ctx.lang].join('|') : 'off'),
  draw(ctx) {
    const panel = $(ID);
    panel.hidden = !applies(ctx);
    if (panel.hidden) {
      $('translate-view').replaceChildren();
      return null;
    }
    const st = ctx.traceState;
    const key = JSON.stringify([st.model, st.model === 'checkpoint' ? loadOf(ctx.checkpoint) : 0, st.text, shown.beams]);
    if (shown.key !== key) { // a new input, model or beam count: ask the worker, draw when it answers
      shown.key = key;
      shown.tr = null;
      shown.error = null;
      const asked = ctx.act.translate({ state: { ...st }, options: { numBeams: shown.beams, maxNewTokens: 64 } });
      shown.asked = asked;
      const answer = (tr, error) => {
        if (shown.asked !== asked) return; // a newer question's answer is the one shown
        shown.tr = tr;
        shown.error = error;
        if (tr) {
          shown.layer = Math.min(shown.layer, tr.numLayers - 1);
          if (typeof shown.head === 'number' && shown.head >= tr.numHeads) shown.head = 'mean';
          shown.step = null;
        }
        ctx.redraw(ID);
        ctx.keep(ID);
      };
      asked.then((tr) => answer(tr, null), (err) => answer(null, err.message));
    }
    if (!shown.tr) {
      replace($('translate-view'), h('p', {
        class: shown.error ? 'error-inline' : 'note', role: shown.error ? 'alert' : 'status', id: 'translate-status',
        text: shown.error ? t('translate.error', { message: shown.error }) : t('translate.working'),
      }));
      return null;
    }
    const map = crossMap(shown.tr, { layer: shown.layer, head: shown.head, words: shown.words });
    if (shown.step != null && shown.step >= map.rows.length) shown.step = map.rows.length - 1;
    const redraw = (changes) => {
      Object.assign(shown, changes);
      ctx.redraw(ID);
      ctx.keep(ID);
    };
    replace($('translate-view'), translateView({
      tr: shown.tr, map, layer: shown.layer, head: shown.head, words: shown.words, beams: shown.beams, step: shown.step,
      width: ctx.width['translate-view'], status: statusOf(shown.tr), title: titleOf(shown.layer, shown.head),
      onBeams: (n) => { shown.beams = n; shown.key = null; ctx.redraw(ID); ctx.keep(ID); },
      onLayer: (l) => redraw({ layer: l }),
      onHead: (hd) => redraw({ head: hd }),
      onWords: (w) => redraw({ words: w, step: null }),
      onStep: (k, focus = false) => redraw({ step: k, focus }),
      onExport: (what, format) => doExport(map, what, format),
    }));
    if (shown.focus) { // a step moved from the keyboard: the focus follows it
      shown.focus = false;
      document.querySelector(`#translate-view .tr-target [data-index="${shown.step}"]`)?.focus();
    }
    return null;
  },
};
