// Panels 1 (text and tokens: chips, summary, a loaded model's predictions) and the worked example's results.
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { tokensView } from '../views/tokens.js';
import { predictionsView } from '../views/predictions.js';
import { exampleResults } from '../views/example.js';

let chips = null; // the drawn token chips of the current trace (their selection moves)

/** A loaded model's predictions (the seeded random model's next-token guesses mean nothing). */
function predictions(ctx) {
  const { trace, act, generation } = ctx;
  if (ctx.traceState.model === 'random') {
    $('predictions').replaceChildren();
    return;
  }
  replace($('predictions'), predictionsView({
    trace, canGenerate: trace.config?.architecture !== 'encoder-decoder' && !!trace.next?.tokens?.length,
    generating: generation.generating, onGenerate: () => act.generate(8), playing: generation.playing,
    onGrow: act.grow, onPlay: act.play,
  }));
}

export const input = {
  id: 'panel-input',
  shows: (ctx) => !ctx.trace.example,
  needs: () => [],
  // redrawn for a new trace or language; a click on a token only moves the selection
  key: (ctx) => [ctx.serial, ctx.lang].join('|'),
  update(ctx) {
    for (const el of chips?.querySelectorAll('.chip[data-i], .span[data-i]') ?? []) el.classList.toggle('selected', Number(el.dataset.i) === ctx.state.token);
    if (ctx.traceState.model !== 'random') predictions(ctx);
  },
  draw(ctx) {
    const { trace } = ctx;
    const n = trace.n;
    const texts = trace.texts;
    chips = tokensView({
      text: texts.target ?? texts.text, tokens: trace.tokens, ids: trace.ids, offsets: trace.offsets, selected: ctx.state.token, onSelect: ctx.act.select,
    });
    const parts = [chips];
    if (trace.source) {
      parts.unshift(h('p', { class: 'sub', text: t('input.sourceTokens') }),
        tokensView({ text: texts.source, tokens: trace.source.tokens, ids: trace.source.ids, offsets: trace.source.offsets }),
        h('p', { class: 'sub', text: t('input.targetTokens') }));
    }
    const pad = trace.nReal != null && trace.nReal !== n ? t('input.padSummary', { real: trace.nReal, pad: n - trace.nReal }) : '';
    const heads = t(`input.heads.${trace.numHeads > 1 ? 'other' : 'one'}`, { n: trace.numHeads, d: trace.headDim });
    const layers = t(`input.layers.${trace.layers.length > 1 ? 'other' : 'one'}`, { n: trace.layers.length });
    parts.push(h('p', { class: 'note', text: t('input.summary', { n, pad, dModel: trace.dModel, heads, layers }) }));
    replace($('tokens'), parts);
    predictions(ctx);
    return null;
  },
};

export const example = {
  id: 'panel-example',
  shows: (ctx) => !!ctx.trace.example,
  needs: () => [],
  draw(ctx) {
    replace($('example-results'), exampleResults({ trace: ctx.trace }));
    return null;
  },
};
