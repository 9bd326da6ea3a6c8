// The translation view's work (layer: web, runs in the compute worker; no DOM, no model math): the page's
// encoder–decoder model (a bundled one or the user's checkpoint) reads the text as its source and writes the target
// with `model.generate` (greedy, or beam search with numBeams), then `model.run` on that very target gives the
// cross-attention of the returned sequence (API.md "Encoder–decoder checkpoints": run({ source, targetIds })).
// Row r of a layer's cross-attention is the decoding step that read target token r (the start token first) and
// wrote token r + 1: the rows kept are exactly the steps that wrote the returned tokens (and the end token).

/** The end token's name: generate's result leaves it out; every encoder–decoder family read here names it so. */
export const END = '</s>';

/**
 * The translation of state `s`'s text: { model, text, stoppedAtEnd, numBeams, maxNewTokens, numHeads, numLayers,
 * source: { text, tokens, ids, offsets }, read: { tokens, ids } (the decoder's input, start token first),
 * written: { tokens, ids } (what each step wrote: the returned tokens, then END when it stopped there),
 * cross: [Float32Array [H, steps, source]] one per decoder layer, generateMs }.
 */
export async function translateWork(pipeline, s, { numBeams = 1, maxNewTokens = 64 } = {}) {
  if (s.mode !== 'text' || s.model === 'random' || s.model === 'file') throw new Error('translate: choose a trained encoder–decoder model or your own checkpoint');
  const model = await pipeline.loaded(s.model);
  const c = model.config;
  if (c.architecture !== 'encoder-decoder') throw new Error(`translate: a ${c.architecture} model does not translate`);
  // at most as many steps as the decoder has positions (a learned or sinusoidal table; T5 has none)
  const limit = c.maxPositions > 1 ? Math.min(maxNewTokens, c.maxPositions - 1) : maxNewTokens;
  const t0 = performance.now();
  const g = model.generate(s.text, { maxNewTokens: limit, numBeams });
  const generateMs = performance.now() - t0;
  // the decoder's input: the start token, then every returned token but the last unless the end token followed it
  // (the step reading the last returned token then wrote the end token; without it, that step wrote nothing returned)
  const kept = g.stoppedAtEnd ? g.ids.length : Math.max(0, g.ids.length - 1);
  const targetIds = Array.from(g.ids.subarray(0, kept));
  let r;
  if (c.decoderStartTokenId !== undefined) r = model.run({ source: s.text, targetIds }, { trace: 'weights' });
  else {
    // a bundled model reads its target as text: the returned tokens' text, checked to read back as the same ids
    r = model.run({ source: s.text, target: g.tokens.slice(0, kept).join('') }, { trace: 'weights' });
    const same = r.ids.length === kept + 1 && targetIds.every((id, k) => id === r.ids[k + 1]);
    if (!same) throw new Error(`translate: the returned tokens read back as other tokens (${r.tokens.slice(1).join(' ')}), so their attention is not the returned sequence's`);
  }
  return {
    model: s.model,
    text: g.text,
    stoppedAtEnd: g.stoppedAtEnd,
    numBeams,
    maxNewTokens: limit,
    numHeads: r.numHeads ?? c.numHeads,
    numLayers: r.layers.length,
    source: { text: s.text, tokens: r.source.tokens, ids: Array.from(r.source.ids), offsets: Array.from(r.source.offsets ?? []) },
    read: { tokens: r.tokens, ids: Array.from(r.ids) },
    written: { tokens: [...g.tokens, ...(g.stoppedAtEnd ? [END] : [])], ids: [...g.ids, ...(g.stoppedAtEnd ? [null] : [])] },
    cross: r.layers.map((ly) => ly.cross.weights),
    generateMs,
  };
}
