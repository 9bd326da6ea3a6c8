// Panel 4: attention — the aggregate map (mean / max over heads, rollout) and the per-head maps and lines of the
// shown layer, weak links hidden by the threshold / top-k filter. Redrawn when what it shows changes; a click on a
// token only moves the selected row, a head toggle changes the maps in place (its key follows: keep).
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { sinkHiddenTrace } from '../sinks.js';
import { selectedHeads, headsString } from '../state.js';
import { attentionView } from '../views/attention.js';
import { aggregateView } from '../views/modelview.js';
import { filterLinks } from '../aggregates.js';
import {
  shownLayer, shownToken, firstPiece, aggregateMap, filteredTrace,
} from '../viewmodel.js';
import { shownTrace, selectRows } from './common.js';

const ID = 'panel-attention';

export const attention = {
  id: ID,
  box: 'attention-view',
  // the shown layer's weights (drawn at once when the layer changes, its masked cells when the full trace comes);
  // every layer's for words (merged once per trace) and rollout
  needs: (ctx) => (ctx.view.words || ctx.state.agg === 'rollout' ? ['all', 'layer'] : ['layer']),
  key: (ctx) => {
    const s = ctx.state;
    return [ctx.serial, ctx.view.words, ctx.width['attention-view'], s.layer, selectedHeads(s, ctx.trace.numHeads).join(','), s.agg, s.thr, s.topk, ctx.view.nosink, ctx.lang].join('|');
  },
  update: (ctx) => selectRows('#attention-view canvas[data-kind="attention"], #aggregate-view canvas[data-kind="aggregate"]', shownToken(shownTrace(ctx), ctx.state.token)),
  draw(ctx) {
    const { state: s, act } = ctx;
    const width = ctx.width['attention-view'];
    const raw = shownTrace(ctx);
    const layer = shownLayer(raw, s.layer);
    const tr = ctx.view.nosink && raw.n > 1 ? sinkHiddenTrace(raw, layer) : raw; // a view only: exports read the raw trace
    const agg = aggregateMap(tr, layer, s.agg);
    if (agg) {
      const f = filterLinks(agg, tr.n, tr.n, { threshold: s.thr, topK: s.topk });
      replace($('aggregate-view'), aggregateView({
        values: f.values, hidden: f.hidden, agg: s.agg, layer, tokens: tr.tokens, thr: s.thr, topk: s.topk,
        width, token: shownToken(tr, s.token), onSelect: (i) => act.select(firstPiece(tr, i)),
      }));
    } else $('aggregate-view').replaceChildren();
    const shown = filteredTrace(tr, layer, { threshold: s.thr, topK: s.topk });
    const H = ctx.trace.numHeads;
    replace($('attention-view'), attentionView({
      trace: shown, layer: s.layer, heads: selectedHeads(s, H), token: shownToken(shown, s.token), width,
      onLayer: (l) => act.layer(l),
      // the maps and lines were changed in place (setHeads): the key says so, and the step-by-step and causal
      // views follow from the next frame
      onHeads: (next) => {
        act.heads(headsString(next, H));
        ctx.keep(ID);
      },
      onSelect: (i) => act.select(firstPiece(shown, i)),
    }));
    if (tr.sinkHidden) $('attention-view').prepend(h('p', { class: 'sink-on', role: 'status', dataset: { name: 'sink-on' }, text: t('sink.on') }));
    attention.update(ctx);
    return null;
  },
};
