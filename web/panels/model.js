// Panel 6: the model view — every layer × head with per-head entropy and mean distance (web/viewmodel.js
// modelSections). Redrawn for a new trace, width or language; the shown layer and heads are marks moved in place.
import { $, replace } from '../dom.js';
import { selectedHeads, headsString } from '../state.js';
import { t } from '../i18n.js';
import { modelView } from '../views/modelview.js';
import { modelSections, shownLayer } from '../viewmodel.js';
import { shownTrace } from './common.js';

export const model = {
  id: 'panel-model',
  box: 'model-view',
  needs: () => ['all'],
  key: (ctx) => [ctx.serial, ctx.view.words, ctx.width['model-view'], ctx.lang].join('|'),
  update(ctx) {
    const { trace, state: s } = ctx;
    $('model-view').firstChild?.setSelection?.(shownLayer(trace, s.layer), selectedHeads(s, trace.numHeads));
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
    model.update(ctx);
    return null;
  },
};
