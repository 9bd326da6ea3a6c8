// The views of every layer for an attention file too big to hold (layer: web): its trace holds the shown layer
// only (web/attnfile.js), so rollout (the attention panel's aggregate) and the model view are streamed from the file
// head by head in the worker (web/attnfile-stream.js through web/attnfile-client.js), with progress and Cancel, and
// drawn when they come. Each wrapper leaves the panel as it was for every other trace.
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { filterLinks } from '../aggregates.js';
import { aggregateView, modelView } from '../views/modelview.js';
import { shownLayer } from '../viewmodel.js';
import { selectedHeads, headsString } from '../state.js';
import {
  stream, streamedValue, streaming, stopStream, streamFailed, forgetFailure,
} from '../attnfile-client.js';
import { noGrid } from './file.js';
import { onScreen, NEAR } from '../scheduler.js';

const big = (ctx) => !!ctx.trace?.file && !ctx.trace.file.whole;

/**
 * Draws `args` ({ op, layer? }) of the file into `box` with `paint(value)` when it has been read; until then a
 * progress bar and Cancel, then panel `panelId` is drawn again. A refused head or a cancel leaves a note and a
 * button that reads again (a rollout goes on from the layers already multiplied). Without `auto` (a panel drawn off
 * screen) a button starts it.
 */
function streamedInto(ctx, box, panelId, args, what, paint, auto = true) {
  const file = ctx.trace.file;
  const value = streamedValue(file, args);
  if (value) return paint(value);
  // a refused head or a Cancel stays said (redraws do not read again) until "Read again"
  const said = (el, err) => {
    const again = h('button', { type: 'button', class: 'btn', text: t('h29l.again'), dataset: { name: 'stream-again' } });
    again.addEventListener('click', () => {
      forgetFailure(file, args);
      ctx.redraw(panelId);
    });
    const stopped = err.name === 'AbortError';
    replace(el, h('p', { class: 'note', role: stopped ? 'status' : 'alert', text: stopped ? t('h29l.cancelled', { what }) : t('h29l.failed', { what, message: err.message }) }), again);
  };
  const el = h('div', { class: 'file-stream', dataset: { name: 'file-stream', op: args.op } });
  replace($(box), el);
  const before = streamFailed(file, args);
  if (before) {
    said(el, before);
    return null;
  }
  if (!auto && !streaming(file, args)) { // not on screen: read when asked, not behind the user's back
    const start = h('button', { type: 'button', class: 'btn', text: t('h29l.start', { what, mb: Math.round(file.bytes / 2 ** 20) }), dataset: { name: 'stream-start' } });
    start.addEventListener('click', () => streamedInto(ctx, box, panelId, args, what, paint));
    el.append(start);
    return null;
  }
  const bar = h('progress', { max: 1, value: streaming(file, args)?.fraction ?? 0, 'aria-label': what });
  const cancel = h('button', { type: 'button', class: 'btn', text: t('h29l.cancel'), dataset: { name: 'stream-cancel' } });
  cancel.addEventListener('click', () => stopStream(file, args));
  el.append(h('p', { class: 'note', role: 'status', text: t('h29l.reading', { what }) }), bar, cancel);
  stream(file, args, (f) => { bar.value = f; }).then(() => {
    if (el.isConnected) ctx.redraw(panelId);
  }, (err) => {
    if (el.isConnected && streamFailed(file, args)) said(el, err);
  });
  return null;
}

/** The attention panel: for a big file, rollout to the shown layer streamed into the aggregate box. */
export function streamedRollout(panel) {
  return {
    ...panel,
    draw(ctx) {
      const out = panel.draw(ctx);
      if (!big(ctx) || ctx.state.agg !== 'rollout') return out;
      const { trace: tr, state: s } = ctx;
      const layer = shownLayer(tr, s.layer);
      return streamedInto(ctx, 'aggregate-view', panel.id, { op: 'rollout', layer }, t('h29l.rolloutTo', { l: layer + 1 }), (v) => {
        const f = filterLinks(v.rollout, tr.n, tr.n, { threshold: s.thr, topK: s.topk });
        replace($('aggregate-view'), aggregateView({
          values: f.values, hidden: f.hidden, agg: 'rollout', layer, tokens: tr.tokens, thr: s.thr, topk: s.topk,
          width: ctx.width['attention-view'], token: Math.min(s.token, tr.n - 1), onSelect: (i) => ctx.act.select(i),
        }), h('p', { class: 'note', dataset: { name: 'rollout-streamed' }, text: t('h29l.rolloutNote') }));
        return null;
      });
    },
  };
}

/** The model view: for a big file with one head count, every head's block-max thumbnail streamed from the file. */
export function streamedModel(panel) {
  const mine = (ctx) => big(ctx) && !noGrid(ctx.trace);
  return {
    ...panel,
    needs: (ctx) => (ctx.trace && mine(ctx) ? [] : panel.needs(ctx)),
    draw(ctx) {
      if (!mine(ctx)) return panel.draw(ctx);
      const { trace: tr, state: s } = ctx;
      return streamedInto(ctx, 'model-view', panel.id, { op: 'model' }, t('h29l.modelView'), (v) => {
        const many = v.sections.length > 1;
        const sections = v.sections.map((sec) => ({
          key: sec.key, title: sec.key === 'cross' ? t('model.cross') : t(many ? 'model.decoder' : 'model.self'),
          weights: sec.thumbs, H: sec.H, n: sec.rows, m: sec.cols, open: true, pooled: { n: sec.tn, m: sec.tm, stride: v.stride },
          entropy: sec.entropy, distance: sec.distance, sink: sec.sink,
        }));
        const H = sections[0].H;
        replace($('model-view'), modelView({
          sections, width: ctx.width['model-view'], layer: shownLayer(tr, s.layer), heads: selectedHeads(s, H),
          onOpen: (l, hd) => {
            ctx.act.layer(l, headsString([hd], H));
            $('panel-attention').scrollIntoView({ block: 'start' });
          },
        }), h('p', { class: 'note', dataset: { name: 'model-streamed' }, text: t('h29l.pooled', { mb: Math.round(tr.file.bytes / 2 ** 20), s: v.stride }) }),
        ...v.sections.filter((sec) => sec.refused.length).map((sec) => h('p', { class: 'note', role: 'alert', dataset: { name: 'model-refused' }, text: t('h29l.refused', {
          count: sec.refused.length, heads: sec.refused.slice(0, 8).map((r) => `L${r.layer + 1} H${r.head + 1}`).join(', '), message: sec.refused[0].message,
        }) })));
        return null;
      }, onScreen($('panel-model'), NEAR)); // off screen (drawn when idle): read when the user asks
    },
  };
}
