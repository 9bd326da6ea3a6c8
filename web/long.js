// Long inputs (layer: web, runs in the worker; no DOM): a text of more tokens than the usual path takes through a
// loaded model (usualMax: MAX_TOKENS, 512, or fewer for a model whose every map would not fit the budget below), up
// to LONG_MAX (2,048). Every layer's [H, n, n] weights at 2,048 tokens through a Llama-3.2-1B-shaped model would be
// 16 × 32 × 2,048² floats = 8 GB, so the run asks the module for what the page shows and no more: per-head summaries
// of every layer (run option `summaries`: entropy, mean distance, sink share, each row's top-k keys; the model view
// and the lines view are drawn from them) and the full maps of the heads on screen only (run option `heads`: the
// shown layer's selected heads, at most LONG_HEADS). The tiled attention never holds an n × n matrix for the other
// heads. This file owns the rule (the page's run, web/pipeline.js, and the head detectors, web/inside-work.js, ask it).
import { selectedHeads } from './state.js';

export const MAX_TOKENS = 512; // the usual path's most tokens, whatever the model
export const LONG_MAX = 2048;
export const LONG_HEADS = 2; // maps drawn at once (each 16 MB at 2,048 tokens)
export const LONG_TOP_K = 5; // keys kept per row (the lines view's links)

/**
 * Whether `text` may tokenize into more than `max` tokens: a token of any of the page's tokenizers covers at
 * least one byte of UTF-8 (byte-level BPE, byte fallback, words, characters), plus a few special tokens.
 */
export const mayBeLong = (text, max) => new TextEncoder().encode(text).length + 8 > max;

/**
 * Whether a text of `bytes` UTF-8 bytes will surely have at most `max` tokens by the model's last text (`ratio` bytes
 * per token, 0 when unknown), with a third of margin: the page then runs it the usual way without a probe, and falls
 * back to the long run only if the module says it has too many tokens.
 */
export const looksShort = (bytes, ratio, max) => ratio > 0 && bytes / ratio < 0.75 * max;

/**
 * Bytes of the [H, n, n] maps a usual run of a model of `numLayers` × `numHeads` (query heads) gives at n tokens:
 * every layer's weights (trace 'weights') and the shown layer's dots and scores as well (run option `full`), float32.
 * They are made in the wasm heap (which keeps its size), moved to the page, and what the views derive from them
 * scales with them (the words-merged copy of every map, a filtered copy of the shown layer, L + 2 [n, n] aggregates).
 */
export const usualBytes = ({ numLayers, numHeads }, n) => (numLayers + 2) * numHeads * n * n * 4;

/**
 * The most those maps may take: what GPT-2 small and BERT base (12 layers × 12 heads) take at MAX_TOKENS, 168 MiB —
 * the largest run the page's usual path was built and measured for before the big decoders. A model above it at
 * n ≤ 512 tokens takes the long path: a Llama-3.2-1B (16 × 32) would hold 576 MiB at 512 tokens, and its 4-layer cut
 * 192 MiB, where the renderer peaked at 2,188 MiB (README "Streamed weights").
 */
export const USUAL_BUDGET = usualBytes({ numLayers: 12, numHeads: 12 }, MAX_TOKENS);

/**
 * The most tokens the page runs the usual way (every layer's maps) through a model of `config` ({ numLayers,
 * numHeads }): MAX_TOKENS, or the largest n whose usualBytes fit USUAL_BUDGET; above it, the long path.
 */
export function usualMax(config) {
  const per = usualBytes(config, 1);
  if (!(per > 0)) return MAX_TOKENS; // no attention heads to hold (a GRU, a kernel regression)
  return Math.min(MAX_TOKENS, Math.floor(Math.sqrt(USUAL_BUDGET / per)));
}

/** The heads whose full maps a long trace of state `s` holds: the shown layer's first selected heads. */
export function longHeads(s, numLayers, numHeads) {
  const layer = Math.max(0, Math.min(s.layer, numLayers - 1));
  return selectedHeads(s, numHeads).slice(0, LONG_HEADS).map((head) => ({ layer, head }));
}

/**
 * A long trace of `model` for state `s`, or null when the text has at most `max` tokens after all (the caller then
 * runs it the usual way). trace.long = { layer, heads, topK, limit: max }; trace.layers[l].attention.summary as the
 * module gives it; trace.heads = [{ layer, head, weights [n·n] }].
 */
export function longRun(model, s, max = usualMax(model.config)) {
  const c = model.config;
  const heads = longHeads(s, c.numLayers, c.numHeads);
  const trace = model.run(s.text, { trace: 'none', heads, summaries: { topK: LONG_TOP_K }, topK: 5 });
  if (trace.n <= max) return null;
  if (trace.n > LONG_MAX) throw new RangeError(`the input has ${trace.n} tokens; the page shows at most ${LONG_MAX}`);
  trace.long = { layer: heads[0]?.layer ?? 0, heads: heads.map((x) => x.head), topK: LONG_TOP_K, limit: max };
  trace.config = { ...c };
  trace.texts = { text: s.text };
  trace.complete = true; // nothing more is asked for: the rest would not fit
  return trace;
}

export const LONG_TILE = 64; // pixels a side of a long input's model-view thumbnail at most

/**
 * Model-view thumbnails of one layer from its per-head summary (run option `summaries`), never from the [n, n] maps:
 * each head's tile is ceil(n / s) pixels a side, s = ceil(n / LONG_TILE); pixel (a, b) = the largest of the top-k
 * weights of rows a·s … a·s + s − 1 whose key falls in columns b·s … b·s + s − 1 (0 where none does). That is the
 * block maximum of the map with every weight outside its row's top k set to 0 — a lower bound of the full map's
 * block maximum that keeps each row's strongest links, at H × nReal × k reads. → { tiles [H, t, t], side t, stride s }.
 */
export function topkTiles(summary, n) {
  const s = Math.max(1, Math.ceil(n / LONG_TILE));
  const side = Math.ceil(n / s);
  const H = summary.entropy.length;
  const k = summary.topK;
  const rows = summary.topIds.length / (k * (H || 1));
  const tiles = new Float32Array(H * side * side);
  for (let hd = 0; hd < H; hd++) {
    for (let i = 0; i < rows; i++) {
      const at = (hd * rows + i) * k;
      const prow = (hd * side + ((i / s) | 0)) * side;
      for (let r = 0; r < k; r++) {
        const j = summary.topIds[at + r];
        if (j < 0) continue;
        const q = prow + ((j / s) | 0);
        if (summary.topWeights[at + r] > tiles[q]) tiles[q] = summary.topWeights[at + r];
      }
    }
  }
  return { tiles, side, stride: s };
}
