// Panel 9: compare two traces (layer: web). "Pin as A / B" keeps one head of the shown layer of whatever the page
// shows now (a file, a model, a prompt); with both pinned, the two maps and their difference are drawn on aligned
// tokens (web/compare.js, the module the patching view's clean/corrupted pair uses too). Pins stay while the page
// shows other traces.
import { $, replace } from '../dom.js';
import { t } from '../i18n.js';
import { selectedHeads } from '../state.js';
import { shownLayer } from '../viewmodel.js';
import { compareTraces } from '../compare.js';
import { compareView } from '../views/compare.js';

const pins = { a: null, b: null };
let version = 0;
let current = null; // the newest context (the buttons pin from it)
let last = { result: null, error: null }; // what the view draws (window.__attnscope.compare)

/** One head of the shown layer of `ctx`'s trace, as a comparison side. */
function pinOf(ctx, label) {
  const { trace, state } = ctx;
  const layer = shownLayer(trace, state.layer);
  const w = trace.layers[layer].attention.weights;
  const n = trace.n;
  const H = w.length / (n * n);
  const head = selectedHeads(state, H)[0];
  const texts = trace.texts;
  return {
    label, layer, head, tokens: [...trace.tokens], weights: w.slice(head * n * n, (head + 1) * n * n),
    text: texts?.target ?? texts?.text, offsets: trace.offsets ? Array.from(trace.offsets) : undefined,
  };
}

function compute() {
  last = { result: null, error: null };
  if (!pins.a || !pins.b) return;
  try {
    last.result = compareTraces(pins.a, pins.b);
  } catch (e) {
    last.error = e.message;
  }
}

/** The last comparison drawn: { result, error } (tests read it through window.__attnscope.compare). */
export const lastComparison = () => last;

export const compare = {
  id: 'panel-compare',
  box: 'compare-view',
  needs: () => ['layer'],
  key: (ctx) => [version, ctx.width['compare-view'], ctx.lang].join('|'),
  update(ctx) { current = ctx; },
  draw(ctx) {
    current = ctx;
    replace($('compare-view'), compareView({
      pins, ...last, width: ctx.width['compare-view'],
      onPin(slot) {
        const c = current;
        const model = c.trace.file ? c.trace.file.name : t('compare.computed', { model: c.traceState.model });
        pins[slot] = pinOf(c, model);
        version += 1;
        compute();
        c.redraw('panel-compare');
      },
      onClear() {
        pins.a = pins.b = null;
        version += 1;
        compute();
        current.redraw('panel-compare');
      },
    }));
    return null;
  },
};
