// The notebook viewer (layer: web): attnscope's own views — the attention view (per-head heatmaps and lines, layer
// tabs, head chips), mean / max / rollout over heads and the model view of every layer × head — drawn from the data
// attnscope.show() (python/attnscope) writes into a notebook output cell. scripts/build-notebook.mjs bundles this
// file and the page's views into one script (global attnscopeNotebook) with the page's CSS; it runs offline, makes
// no request, and draws into a shadow root so the notebook's styles and the page's do not mix.
import { h, replace } from './dom.js';
import { attentionView } from './views/attention.js';
import { aggregateView, modelView } from './views/modelview.js';
import { aggregateMap, modelSections } from './viewmodel.js';
import { setLanguage, t } from './i18n.js';
import './locales/en.js';
import './locales/zh-CN.js';

/** Float32Array from base64 little-endian float32 bytes. */
function floats(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

/**
 * Draws into `host` (an element of the output cell) from `data` = { tokens, layers: [base64 float32 [heads, n, n]],
 * sourceTokens?, cross?: [base64 float32 [heads, n, m]], layer, heads: 'all' | number[], agg: 'heads' | 'mean' | 'max' |
 * 'rollout', lang, css, width }. Returns the trace.
 */
export function show(host, data) {
  setLanguage(data.lang ?? 'en');
  const n = data.tokens.length;
  const trace = { tokens: data.tokens, n, layers: data.layers.map((b) => ({ attention: { weights: floats(b) } })), complete: true };
  // cross-attention (attnscope.show(..., cross_attentions=, source_tokens=)): drawn under the self-attention of each
  // layer and as its own model-view grid, as the page draws an attention file's
  if (data.cross && data.sourceTokens) {
    trace.source = { tokens: data.sourceTokens, n: data.sourceTokens.length };
    data.cross.forEach((b, l) => { trace.layers[l].cross = { weights: floats(b) }; });
  }
  trace.numHeads = Math.max(...trace.layers.map((ly) => ly.attention.weights.length / (n * n)));
  const root = host.attachShadow ? host.attachShadow({ mode: 'open' }) : host;
  const box = h('div', { class: 'attnscope-notebook', lang: data.lang ?? 'en' });
  // the page's CSS, its :root variables on the shadow host (the notebook's own page keeps its styles)
  root.append(h('style', { text: `${(data.css ?? '').replace(/:root\b/g, ':host')}\n:host { display: block; color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", sans-serif; }` }), box);
  const width = data.width ?? 900;
  const state = { layer: data.layer ?? 0, heads: null, token: 0, agg: data.agg ?? 'heads' };
  const uniform = trace.layers.every((ly) => ly.attention.weights.length === trace.layers[0].attention.weights.length);
  function draw() {
    const layer = Math.min(state.layer, trace.layers.length - 1);
    const H = trace.layers[layer].attention.weights.length / (n * n);
    const heads = state.heads ?? (Array.isArray(data.heads) ? data.heads.filter((x) => x < H) : [...Array(H).keys()]);
    const parts = [];
    const agg = state.agg !== 'heads' && (uniform || state.agg !== 'rollout') ? aggregateMap(trace, layer, state.agg) : null;
    if (agg) parts.push(aggregateView({ values: agg, agg: state.agg, layer, tokens: trace.tokens, width, token: state.token, onSelect: (i) => { state.token = i; draw(); } }));
    parts.push(attentionView({
      trace, layer, heads, token: state.token, width,
      onLayer: (l) => { state.layer = l; state.heads = null; draw(); },
      onHeads: (next) => { state.heads = next; },
      onSelect: (i) => { state.token = i; draw(); },
    }));
    if (uniform && data.overview !== false) {
      const { H: H0, sections } = modelSections(trace, { self: t('model.self'), encoder: '', decoder: t('model.decoder'), cross: t('model.cross') });
      parts.push(modelView({ sections, width, layer, heads: [...Array(H0).keys()], onOpen: (l, hd) => { state.layer = l; state.heads = [hd]; draw(); } }));
    }
    replace(box, parts);
  }
  draw();
  return trace;
}
