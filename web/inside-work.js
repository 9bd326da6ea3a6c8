// The "looking inside" panel's work (layer: web, runs in the compute worker; no DOM, no model math): the logit lens
// table, heads knocked out (next-token top-k and loss beside the unablated run), the ablation sweep and activation
// patching, each through the attnscope module's public API (bindings/js/inside.js) on the model the page shows.
// Sweeps report progress and stop at the page's Cancel (an AbortSignal the worker aborts).

import { flowWork, qkWork } from './flow-work.js';
import { inductionScores } from './induction.js';
import { mayBeLong, looksShort, usualMax } from './long.js';

const loss = (lp) => (lp && lp.length ? -lp.reduce((s, x) => s + x, 0) / lp.length : null);

/** The page's model for state `s` (the seeded random one or a loaded one), as pipeline.generate uses. */
async function modelOf(pipeline, s) {
  if (s.mode === 'example') throw new Error('the worked example has no language-model head: choose a model');
  return s.model === 'random' ? pipeline.randomModel(s) : pipeline.loaded(s.model);
}

/**
 * op 'lens' { k } → { tokens, numLayers, k, layers: [{ ids, probs, tokens }] }
 * op 'ablate' { heads } → { tokens, before: { next, loss }, after: { next, loss } }
 * op 'heads' { } → as.headScores of the text's attention: previous-token, duplicate-token and sink share per head,
 *   and induction (web/induction.js); for a text over the model's usual tokens (web/long.js usualMax) only
 *   sinkShare, long: n and limit: that number
 * op 'sweep' { } → as.ablationSweep's result (metric loss)
 * op 'patch' { clean, corrupted, tokens, granularity } → as.patch's result
 * op 'flow' { layers, n } → { flow } (web/flow-work.js: from the page's weights, no model)
 * op 'qk' { layer, head, texts } → { queries, keys, … } (web/flow-work.js)
 */
export async function insideWork(pipeline, s, op, args, onProgress, signal) {
  if (op === 'flow') return flowWork(pipeline.as, args, onProgress, signal);
  const model = await modelOf(pipeline, s);
  const { as } = pipeline;
  if (model.config.architecture === 'encoder-decoder') throw new Error('looking inside reads one stack: choose a decoder or an encoder');
  if (op === 'lens') {
    const r = model.run(s.text, { trace: 'none', lens: args.k });
    return {
      tokens: r.tokens, numLayers: r.layers.length, k: args.k,
      layers: r.layers.map((l) => ({ ids: l.lens.ids, probs: l.lens.probs, tokens: l.lens.tokens })),
    };
  }
  if (op === 'ablate') {
    const before = model.run(s.text, { trace: 'none', logProbs: true, topK: 5 });
    const after = model.run(s.text, { trace: 'none', logProbs: true, topK: 5, ablate: args.heads });
    const side = (r) => ({ next: r.next, loss: loss(r.logProbs) });
    return { tokens: before.tokens, before: side(before), after: side(after), numLayers: model.config.numLayers, numHeads: model.config.numHeads };
  }
  if (op === 'heads') {
    // a long input (web/long.js): every head's full map would not fit (8 GB at 2,048 tokens through a 1B-shaped
    // model; above the page's budget for this model's size below 512), so only the sink share, from the run's
    // per-head summaries; `long` says why the rest is absent. As the page's own run decides (pipeline.maybeLong): a
    // text short by the model's last bytes per token needs no probe.
    const max = usualMax(model.config);
    const bytes = new TextEncoder().encode(s.text).length;
    if (mayBeLong(s.text, max) && !looksShort(bytes, pipeline.bytesPerToken?.get(model) ?? 0, max)) {
      const probe = model.run(s.text, { trace: 'none', summaries: { topK: 1 } });
      if (probe.n > max) {
        const sinkShare = Float32Array.from(probe.layers.flatMap((l) => Array.from(l.attention.summary.sink)));
        return { tokens: probe.tokens, numLayers: probe.layers.length, numHeads: sinkShare.length / probe.layers.length, sinkShare, long: probe.n, limit: max };
      }
    }
    const r = model.run(s.text, { trace: 'weights' });
    const weights = r.layers.map((l) => l.attention.weights);
    const scores = as.headScores({ weights, numHeads: weights[0].length / (r.n * r.n), n: r.n, ids: r.ids });
    // induction on the text's distinct tokens shuffled and repeated (web/induction.js); absent, with the reason, when
    // the text gives no such sequence
    try {
      const ind = inductionScores(as, model, s.text);
      return { tokens: r.tokens, ...scores, induction: ind.induction, inductionPeriod: ind.period };
    } catch (e) {
      return { tokens: r.tokens, ...scores, inductionError: e.message };
    }
  }
  if (op === 'sweep') return as.ablationSweep(model, s.text, { onProgress: (done, total) => onProgress(done / total), signal });
  if (op === 'patch') {
    return as.patch(model, {
      clean: args.clean, corrupted: args.corrupted, tokens: args.tokens, granularity: args.granularity,
      onProgress: (done, total) => onProgress(done / total), signal,
    });
  }
  if (op === 'qk') return qkWork(pipeline.as, model, s.text, args);
  throw new Error(`inside: unknown operation ${op}`);
}
