// The english vs english-rope switch, worker side (layer: web, runs in the worker; no DOM): the same text through
// the two bundled models trained on the same corpus and budget — one with a learned position table and GPT-2-style
// blocks, one with RoPE, RMSNorm, SwiGLU and shared K/V heads — each run once (trace 'weights'), and from each the
// map of one chosen head (by default its strongest labelled previous-token head) and its labelled previous-token
// heads (config.json `heads`, training/label_heads.py). The page compares the two maps (web/panels/pair.js).
export const PAIR = Object.freeze(['english', 'english-rope']);

const configs = new Map(); // name → Promise of its config.json

function configOf(name) {
  if (!configs.has(name)) {
    const url = new URL(`../models/${encodeURIComponent(name)}/config.json`, import.meta.url);
    const p = fetch(url).then((r) => {
      if (!r.ok) throw new Error(`could not load ${url.pathname} (HTTP ${r.status})`);
      return r.json();
    });
    p.catch(() => configs.delete(name));
    configs.set(name, p);
  }
  return configs.get(name);
}

/**
 * pairWork(pipeline, text, picks) → [side, side]: side = { name, text, tokens, offsets, n, numLayers, numHeads,
 * layer, head, weights: Float32Array [n, n], prev: [{ layer, head, score }], truncated }. `picks[k]`: { layer, head }
 * of side k or null (its strongest previous-token head). The text is cut to the models' context.
 */
export async function pairWork(p, text, picks = []) {
  const sides = [];
  for (const [k, name] of PAIR.entries()) {
    const model = await p.loaded(name);
    const config = await configOf(name);
    const max = Math.max(1, (model.config.maxPositions ?? 128) - 1); // a character per token, room for a start token
    const chars = Array.from(text);
    const cut = chars.slice(0, max).join('');
    const r = model.run(cut || ' ', { trace: 'weights' });
    const L = r.layers.length;
    const H = r.numHeads;
    const prev = (config.heads ?? []).filter((x) => x.measure === 'previousToken' && (x.attention ?? 'self') === 'self')
      .map(({ layer, head, score }) => ({ layer, head, score })).sort((a, b) => b.score - a.score);
    const want = picks[k] ?? prev[0] ?? { layer: 0, head: 0 };
    const layer = Math.min(Math.max(0, want.layer), L - 1);
    const head = Math.min(Math.max(0, want.head), H - 1);
    const n = r.n;
    sides.push({
      name, text: cut || ' ', tokens: r.tokens, offsets: r.offsets, n, numLayers: L, numHeads: H, layer, head,
      weights: r.layers[layer].attention.weights.slice(head * n * n, (head + 1) * n * n), prev, truncated: chars.length > max,
    });
  }
  return sides;
}
