// Panel 6: the model view — every layer × head with per-head entropy and mean distance (web/viewmodel.js
// modelSections). Redrawn for a new trace, width or language; the shown layer and heads are marks moved in place.
import { $, h, replace } from '../dom.js';
import { selectedHeads, headsString } from '../state.js';
import { t } from '../i18n.js';
import { modelView } from '../views/modelview.js';
import { modelSections, shownLayer } from '../viewmodel.js';
import { shownTrace } from './common.js';
import { kvHeadOf, kvCacheBytes } from '../sinks.js';
import { tintModelView } from './head-tint.js';

const MiB = (b) => `${(b / 2 ** 20).toFixed(b < 2 ** 20 ? 3 : 1)} MiB`;

/** Shared K/V heads (GQA/MQA): which query heads read which K/V head, and the KV cache against full multi-head. */
export function gqaNote(config, H) {
  const kv = config?.numKeyValueHeads;
  if (!kv || !config.headDim || !config.numLayers) return null;
  const groups = Array.from({ length: kv }, (_, g) => {
    const qs = [...Array(H).keys()].filter((hd) => kvHeadOf(hd, H, kv) === g).map((hd) => `H${hd + 1}`);
    return t('gqa.group', { g: g + 1, heads: qs.join(' ') });
  });
  const tokens = config.maxPositions ?? 2048;
  const c = kvCacheBytes(config, tokens, 2);
  return h('div', { class: 'gqa-note', dataset: { name: 'gqa' } },
    h('p', { class: 'note', text: t(kv === H ? 'gqa.mha' : kv === 1 ? 'gqa.mqa' : 'gqa.gqa', { H, kv }) }),
    kv < H ? h('ul', { class: 'gqa-groups' }, groups.map((g) => h('li', { text: g }))) : null,
    h('p', { class: 'note', dataset: { name: 'kv-cache' }, text: t('gqa.cache', { tokens, shared: MiB(c.shared), full: MiB(c.full), ratio: (H / kv).toFixed(kv === H ? 0 : 1) }) }));
}

export const model = {
  id: 'panel-model',
  box: 'model-view',
  needs: () => ['all'],
  key: (ctx) => [ctx.serial, ctx.view.words, ctx.width['model-view'], ctx.lang].join('|'),
  update(ctx) {
    const { trace, state: s } = ctx;
    // the view body, not firstChild: a K/V-sharing note may come first (gqaNote)
    $('model-view').querySelector('.model-view')?.setSelection?.(shownLayer(trace, s.layer), selectedHeads(s, trace.numHeads));
  },
  draw(ctx) {
    const tr = shownTrace(ctx);
    const { H, sections } = modelSections(tr, {
      encoder: t('model.encoder'), decoder: t('model.decoder'), self: t('model.self'), cross: t('model.cross'),
    });
    replace($('model-view'), modelView({
      sections, width: ctx.width['model-view'], layer: shownLayer(tr, ctx.state.layer), heads: selectedHeads(ctx.state, H),
      onOpen: (l, hd) => {
        ctx.act.layer(l, headsString([hd], H));
        $('panel-attention').scrollIntoView({ block: 'start' });
      },
    }));
    const gqa = gqaNote(tr.config, H);
    if (gqa) $('model-view').prepend(gqa);
    tintModelView(); // the detector frames, when one is chosen
    model.update(ctx);
    return null;
  },
};
