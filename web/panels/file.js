// Panels for a trace read from an attention file (layer: web): a file holds weights only, so the panels that need
// the model (embeddings, positional encoding, step by step, causal decoding) say so instead of drawing, the text
// panel shows the file's tokens and what it holds, and the model view of a file whose layers differ in head count says
// why it is not drawn. Each wrapper leaves the panel as it was for every other trace.
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { tokensView } from '../views/tokens.js';
import { counts } from '../files.js';

const fileKey = (ctx, more = '') => `file|${ctx.serial}|${ctx.lang}|${more}`;

/** `panel` drawing `box` for computed traces and, for a file's, a note that the file has no model. */
export function needsModel(panel, box) {
  return {
    ...panel,
    needs: (ctx) => (ctx.trace?.file ? [] : panel.needs(ctx)), // ctx: { state, view, trace } when a run asks what is wanted
    key: (ctx) => (ctx.trace.file ? fileKey(ctx) : panel.key ? panel.key(ctx) : null),
    update: (ctx) => (ctx.trace.file ? undefined : panel.update?.(ctx)),
    draw(ctx) {
      if (!ctx.trace.file) return panel.draw(ctx);
      if (panel.id === 'panel-causal') { // shown for decoders only: a file is none
        $('panel-causal').hidden = true;
        $(box).replaceChildren();
        return null;
      }
      replace($(box), h('p', { class: 'note no-model', text: t('attnfile.noModel') }));
      return null;
    },
  };
}

/** The text panel: a file's tokens (chips, a click selects the row) and what the file holds. */
export function fileInput(panel) {
  let chips = null;
  return {
    ...panel,
    key: (ctx) => (ctx.trace.file ? fileKey(ctx) : panel.key(ctx)),
    update(ctx) {
      if (!ctx.trace.file) return panel.update(ctx);
      for (const el of chips?.querySelectorAll('.chip[data-i]') ?? []) el.classList.toggle('selected', Number(el.dataset.i) === ctx.state.token);
      return undefined;
    },
    draw(ctx) {
      const { trace } = ctx;
      if (!trace.file) return panel.draw(ctx);
      chips = tokensView({ tokens: trace.tokens, selected: ctx.state.token, onSelect: ctx.act.select });
      const parts = [];
      if (trace.source) parts.push(h('p', { class: 'sub', text: t('input.sourceTokens') }), tokensView({ tokens: trace.source.tokens }), h('p', { class: 'sub', text: t('input.targetTokens') }));
      parts.push(chips, h('p', { class: 'note', dataset: { name: 'file-summary' }, text: t('attnfile.summary', {
        name: trace.file.name, n: trace.n, ...counts(trace.layers.length, trace.numHeads), model: trace.file.model ?? '—',
      }) }));
      replace($('tokens'), parts);
      $('predictions').replaceChildren();
      return null;
    },
  };
}

/**
 * Why the model view cannot draw a file's trace, or null: a grid of every layer × head needs one head count (a file's
 * layers may differ).
 */
export function noGrid(trace) {
  const f = trace?.file;
  if (!f) return null;
  // a file too big to hold is streamed head by head (web/panels/file-stream.js): its head counts are the file's
  const counts = f.whole ? trace.layers.map((ly) => ly.attention.weights.length / (trace.n * trace.n)) : f.heads;
  return counts.every((c) => c === counts[0]) ? null : t('attnfile.headCounts', { counts: counts.join(', ') });
}

/** The model view, or for a file it cannot draw (noGrid), why. */
export function fileModel(panel) {
  return {
    ...panel,
    needs: (ctx) => (ctx.trace && noGrid(ctx.trace) ? [] : panel.needs(ctx)),
    key: (ctx) => (noGrid(ctx.trace) ? fileKey(ctx) : panel.key(ctx)),
    update: (ctx) => (noGrid(ctx.trace) ? undefined : panel.update(ctx)),
    draw(ctx) {
      const why = noGrid(ctx.trace);
      if (!why) return panel.draw(ctx);
      replace($('model-view'), h('p', { class: 'note', text: why }));
      return null;
    },
  };
}

/**
 * A panel drawing the shown layer (attention view, compare): a big file's trace holds one layer, so when another
 * is chosen the panel keeps its picture until that layer's trace comes (or, if a head of it is refused, stays).
 */
export function shownLayerHeld(panel) {
  const missing = (ctx) => !!ctx.trace?.file && !ctx.trace.layers[Math.min(ctx.state.layer, ctx.trace.layers.length - 1)].attention.weights;
  return {
    ...panel,
    key: (ctx) => (missing(ctx) ? `wait|${ctx.serial}` : panel.key(ctx)),
    update: (ctx) => (missing(ctx) ? undefined : panel.update?.(ctx)),
    draw: (ctx) => (missing(ctx) ? null : panel.draw(ctx)),
  };
}
