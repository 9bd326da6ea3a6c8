// What the model predicts (layer: web): the next-token top-k of a language model (trace.next), a BERT
// model's top-k at each [MASK] (trace.masks), an encoder–decoder's generated output (trace.generated),
// and a "generate" button for causal language models. Every number is the module's; the view lays the
// probabilities out as bars. Data in, element out.
import { h, tokenLabel } from '../dom.js';
import { t } from '../i18n.js';

function topList(name, top, caption) {
  const list = h('ol', { class: 'topk', dataset: { name } });
  Array.from(top.tokens).forEach((t, k) => {
    const p = top.probs[k];
    const bar = h('span', { class: 'topk-bar' });
    bar.style.width = `${Math.max(1, Math.round(p * 100))}%`;
    list.append(h('li', { dataset: { id: top.ids[k], prob: p } },
      h('span', { class: 'topk-tok', text: tokenLabel(t, 20), 'data-no-i18n': '' }),
      h('span', { class: 'topk-track' }, bar),
      h('span', { class: 'topk-p', text: `${(p * 100).toFixed(p < 0.01 ? 2 : 1)}%` })));
  });
  return h('figure', { class: 'topk-fig' }, h('figcaption', { class: 'hm-title', text: caption }), list);
}

/** The output, and a slider that shows it growing token by token (with the cross-attention rows above). */
function grown(g, playing, onGrow, onPlay) {
  const slider = h('input', {
    type: 'range', min: 1, max: g.count, step: 1, value: g.shown, id: 'grow', 'aria-label': t('predictions.growAria'),
  });
  slider.addEventListener('input', () => onGrow(Number(slider.value)));
  const play = h('button', { type: 'button', class: 'btn', id: 'grow-play', text: t(playing ? 'predictions.stop' : 'predictions.play') });
  play.addEventListener('click', onPlay);
  return h('div', { class: 'gen-out', dataset: { name: 'generated-box' } },
    h('p', { dataset: { name: 'generated' } }, t('predictions.output'), h('strong', { text: g.text, 'data-no-i18n': '' })),
    g.count > 1 ? h('div', { class: 'gen-row' }, h('label', { class: 'ctl grow' },
      t('predictions.shown', { shown: g.shown, count: g.count }), slider), play) : null);
}

/** predictionsView({ trace, canGenerate, generating, onGenerate, playing, onGrow, onPlay }) → HTMLElement | null */
export function predictionsView({ trace, canGenerate, generating, onGenerate, playing, onGrow, onPlay }) {
  const parts = [];
  if (trace.generated) parts.push(grown(trace.generated, playing, onGrow, onPlay));
  if (trace.next?.tokens?.length && !trace.generated) { // after a generated target: only the end token
    const last = trace.tokens[(trace.nReal ?? trace.n) - 1];
    parts.push(topList('next', trace.next, t('predictions.next', { token: tokenLabel(last, 20), k: trace.next.tokens.length })));
  }
  for (const m of trace.masks ?? []) {
    parts.push(topList(`mask-${m.position}`, m, t('predictions.mask', { position: m.position, k: m.tokens.length })));
  }
  if (canGenerate) {
    const b = h('button', { type: 'button', class: 'btn', id: 'generate', disabled: !!generating, text: t(generating ? 'predictions.generating' : 'predictions.generate') });
    b.addEventListener('click', onGenerate);
    parts.push(h('div', { class: 'gen-row' }, b, h('span', { class: 'note', text: t('predictions.greedy') })));
  }
  return parts.length ? h('div', { class: 'predictions' }, ...parts) : null;
}
