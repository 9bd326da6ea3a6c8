// Panel 5: step by step (Q·Kᵀ → ÷√dₖ → softmax → ×V for the selected token and head), built in slices of ~12 ms
// (at 512 keys the whole view is ~70 ms of DOM); keyed only once it is whole.
import { $, replace } from '../dom.js';
import { selectedHeads } from '../state.js';
import { stepsViewSliced } from '../views/steps.js';
import { shownLayer } from '../viewmodel.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { kvHeadOf } from '../sinks.js';

export const steps = {
  id: 'panel-steps',
  box: 'steps',
  needs: () => ['full'],
  key: (ctx) => {
    const { trace, state: s } = ctx;
    return [ctx.serial, shownLayer(trace, s.layer), selectedHeads(s, trace.numHeads)[0], Math.min(s.token, trace.n - 1), ctx.width.steps, ctx.lang].join('|');
  },
  draw(ctx) {
    const { trace, state: s } = ctx;
    const v = stepsViewSliced({
      trace, layer: shownLayer(trace, s.layer), head: selectedHeads(s, trace.numHeads)[0], token: Math.min(s.token, trace.n - 1),
      width: ctx.width.steps, onSelect: ctx.act.select,
    });
    replace($('steps'), v.el);
    const kv = trace.config?.numKeyValueHeads, H = trace.numHeads, hd = selectedHeads(s, H)[0];
    if (kv && kv < H) $('steps').prepend(h('p', { class: 'note', dataset: { name: 'kv-head' }, text: t('gqa.step', { h: hd + 1, g: kvHeadOf(hd, H, kv) + 1, kv, n: H / kv }) }));
    const more = () => (v.more(12) ? more : null);
    return more();
  },
};
