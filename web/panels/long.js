// Panels for a long input (layer: web; what the trace holds: web/long.js): the attention panel draws the heads on
// screen as big maps with their top-k links, the model view draws every layer × head from the module's per-head
// summaries (thumbnails from each row's top-k keys, web/long.js topkTiles; entropy, mean distance and sink share
// tables), and the panels that need every layer's intermediates say why they are empty. Each wrapper leaves the
// panel as it was for every other trace. A head or layer chosen whose map the trace lacks is computed on request (act.refetch).
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { selectedHeads, headsString } from '../state.js';
import { shownLayer } from '../viewmodel.js';
import { modelView } from '../views/modelview.js';
import { longAttentionView } from '../views/long.js';
import { gqaNote } from './model.js';
import { LONG_HEADS, topkTiles } from '../long.js';

const asked = new WeakMap(); // trace → the heads asked for from it (once each, so a failing run cannot loop)
const isLong = (ctx) => !!ctx.trace?.long;
const longKey = (ctx, ...more) => ['long', ctx.serial, ctx.lang, ...more].join('|');

/** `panel` as it was, or for a long trace a note that it is not drawn at this length. */
export function shortOnly(panel, box) {
  return {
    ...panel,
    needs: (ctx) => (isLong(ctx) ? [] : panel.needs(ctx)),
    key: (ctx) => (isLong(ctx) ? longKey(ctx) : panel.key ? panel.key(ctx) : null),
    update: (ctx) => (isLong(ctx) ? undefined : panel.update?.(ctx)),
    draw(ctx) {
      if (!isLong(ctx)) return panel.draw(ctx);
      replace($(box), h('p', { class: 'note no-model', dataset: { name: 'long-skip' }, text: t('long.skipped', { n: ctx.trace.n }) }));
      return null;
    },
  };
}

/** The heads the long attention view shows: the first selected ones, at most LONG_HEADS. */
const shownHeads = (ctx) => selectedHeads(ctx.state, ctx.trace.numHeads).slice(0, LONG_HEADS);

/** The attention panel: for a long trace, the big maps and top-k links of the heads on screen. */
export function longAttention(panel) {
  return {
    ...panel,
    needs: (ctx) => (isLong(ctx) ? [] : panel.needs(ctx)),
    key: (ctx) => (isLong(ctx)
      ? longKey(ctx, ctx.width['attention-view'], shownLayer(ctx.trace, ctx.state.layer), shownHeads(ctx).join(','))
      : panel.key(ctx)),
    // a token chosen: its links move, the maps (and their zoom) stay
    update: (ctx) => (isLong(ctx) ? $('attention-view').firstChild?.selectToken?.(Math.min(ctx.state.token, ctx.trace.n - 1)) : panel.update?.(ctx)),
    draw(ctx) {
      if (!isLong(ctx)) return panel.draw(ctx);
      const { trace, state: s, act } = ctx;
      const layer = shownLayer(trace, s.layer);
      const heads = shownHeads(ctx);
      // a head or layer whose map this trace lacks: asked for (the view says it is being computed)
      const want = `${layer}:${heads}`;
      if (heads.some((hd) => !trace.heads.some((x) => x.layer === layer && x.head === hd)) && asked.get(trace) !== want) {
        asked.set(trace, want);
        act.refetch();
      }
      $('aggregate-view').replaceChildren();
      replace($('attention-view'), longAttentionView({
        trace, layer, heads, token: Math.min(s.token, trace.n - 1), width: ctx.width['attention-view'], max: LONG_HEADS,
        onLayer: (l) => act.layer(l), onHeads: (next) => act.heads(headsString(next, trace.numHeads)), onSelect: (i) => act.select(i),
      }));
      return null;
    },
  };
}

/** The model view: for a long trace, every layer × head's summaries as tables (a click opens the head). */
export function longModel(panel) {
  return {
    ...panel,
    needs: (ctx) => (isLong(ctx) ? [] : panel.needs(ctx)),
    key: (ctx) => (isLong(ctx) ? longKey(ctx, ctx.width['model-view']) : panel.key(ctx)),
    update(ctx) {
      if (!isLong(ctx)) return panel.update(ctx);
      const layer = shownLayer(ctx.trace, ctx.state.layer);
      const heads = shownHeads(ctx);
      $('model-view').querySelector('.model-view')?.setSelection?.(layer, heads.slice(0, 1));
      return undefined;
    },
    draw(ctx) {
      if (!isLong(ctx)) return panel.draw(ctx);
      const { trace } = ctx;
      const H = trace.numHeads;
      const per = (key) => trace.layers.map((ly) => ly.attention.summary[key]);
      // thumbnails from each row's top-k keys (web/long.js topkTiles), never from n × n maps
      const thumbs = trace.layers.map((ly) => topkTiles(ly.attention.summary, trace.n));
      const sec = {
        key: 'self', title: t('model.self'), H, n: trace.n, m: trace.n, open: true, stride: thumbs[0]?.stride ?? 1,
        weights: thumbs.map((x) => x.tiles), entropy: per('entropy'), distance: per('distance'), sink: per('sink'),
      };
      const view = modelView({
        sections: [sec], width: ctx.width['model-view'], layer: shownLayer(trace, ctx.state.layer), heads: shownHeads(ctx).slice(0, 1),
        onOpen: (l, hd) => {
          ctx.act.layer(l, headsString([hd], H));
          $('panel-attention').scrollIntoView({ block: 'start' });
        },
      });
      view.classList.add('long-model');
      view.dataset.long = trace.n;
      view.prepend(h('p', { class: 'note', dataset: { name: 'long-model' }, text: t('long.model', { n: trace.n, k: trace.long.topK }) }),
        h('p', { class: 'note', dataset: { name: 'long-thumbs' }, text: t('long.thumbs', { k: trace.long.topK, s: sec.stride }) }));
      replace($('model-view'), view);
      const gqa = gqaNote(trace.config, H);
      if (gqa) $('model-view').prepend(gqa);
      return null;
    },
  };
}
