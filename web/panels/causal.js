// Panel 4b: causal decoding (decoders) — the triangular pattern, the selected row, the next-token top-k there: the
// full run's `next` for the last token, else asked for (ctx.act.next: the model run on the prefix with its topK
// option); "generate next token" (one token, the new last row followed). Drawn on every render; an answer redraws it.
import { $, replace } from '../dom.js';
import { t } from '../i18n.js';
import { selectedHeads } from '../state.js';
import { causalView } from '../views/causal.js';

const KS = [5, 10, 20];
const shown = { k: 5, key: null, next: null, asked: null }; // the top-k size, what `next` answers, the answer

export const causal = {
  id: 'panel-causal',
  box: 'causal-view',
  needs: () => ['full'],
  draw(ctx) {
    const { trace, traceState, state, act } = ctx;
    if (!ctx.has('full')) return null; // drawn when the completion comes (the scheduler's idle drawing)
    const decoder = !trace.example && trace.config?.architecture === 'decoder';
    $('panel-causal').hidden = !decoder;
    if (!decoder) {
      $('causal-view').replaceChildren();
      return null;
    }
    const last = (trace.nReal ?? trace.n) - 1;
    const i = Math.min(state.token, last);
    const random = traceState.model === 'random';
    const k = random ? 5 : shown.k;
    const key = `${ctx.serial}:${i}:${k}`;
    if (shown.key !== key) { // a new trace, position or k: the trace's own `next` if it answers, else ask
      shown.key = key;
      shown.asked = null;
      if (i === last && trace.next && (random || trace.next.tokens.length === k)) shown.next = { position: i, ...trace.next };
      else if (random) shown.next = { position: i, error: t('causal.randomOnlyLast') };
      else {
        shown.next = null;
        const asked = act.next({
          state: { ...traceState }, position: i, ids: Array.from(trace.ids.subarray(0, i + 1)), end: trace.offsets[2 * i + 1], topK: k,
        });
        shown.asked = asked;
        const answer = (next) => { // a newer question's answer is the one shown
          if (shown.asked !== asked) return;
          shown.next = next;
          ctx.redraw(causal.id);
        };
        asked.then(answer, (err) => answer({ position: i, error: err.message }));
      }
    }
    replace($('causal-view'), causalView({
      trace, layer: state.layer, heads: selectedHeads(state, trace.numHeads), token: i, next: shown.next, k, ks: random ? [5] : KS,
      canGenerate: !random && !!trace.next, generating: ctx.generation.generating, width: ctx.width['causal-view'],
      onSelect: act.select,
      onK: random ? null : (v) => { shown.k = v; ctx.redraw(causal.id); },
      onGenerate: () => {
        act.generate(1, { follow: true });
        ctx.redraw(causal.id);
      },
    }));
    return null;
  },
};
