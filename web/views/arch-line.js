// The architecture of a loaded checkpoint in one line (layer: web), e.g. "Llama · 16 layers · 32 query heads
// sharing 8 K/V heads · RoPE θ 500000, llama3 ×32 · RMSNorm · SwiGLU · BF16 2.47 GB". Every fact comes from the
// loaded model's config (bindings/embind/layout.h: what the core runs, and the stored dtype and size the loader
// saw), never from config.json re-parsed here. Data in, text out.
import { t } from '../i18n.js';

/** config.model_type → the family's usual name. */
const FAMILY = {
  llama: 'Llama', mistral: 'Mistral', qwen2: 'Qwen2', qwen3: 'Qwen3', gemma: 'Gemma', gemma2: 'Gemma 2',
  gemma3_text: 'Gemma 3', phi3: 'Phi-3', gpt2: 'GPT-2', bert: 'BERT', t5: 'T5', mt5: 'mT5', bart: 'BART', mbart: 'mBART',
  marian: 'Marian',
};
/** An encoder–decoder's positions: model.config.positional (T5's 'none': its relative bias in the attention). */
const POSITIONS = { sinusoidal: 'arch.posSinusoidal', learned: 'arch.posLearned', none: 'arch.posRelative' };
const NORM = { layernorm: 'LayerNorm', rmsnorm: 'RMSNorm', rmsnorm1p: 'RMSNorm (1 + w)' };
const GATED = { silu: 'SwiGLU', gelu: 'GeGLU', 'gelu-tanh': 'GeGLU (tanh)', relu: 'ReGLU' };
const PLAIN = { silu: 'SiLU', gelu: 'GELU', 'gelu-tanh': 'GELU (tanh)', relu: 'ReLU' };

/** 2470000000 → '2.47 GB', 53032 → '53 kB' (decimal units, as file sizes are usually shown). */
export function sizeText(bytes) {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1e3))} kB`;
}

const num = (x) => String(Number(x.toPrecision(6)));

/**
 * An encoder–decoder checkpoint's line, e.g. "Marian · 6+6 layers · 8 heads · sinusoidal positions · 58,101-piece
 * shared vocabulary · F32 298.5 MB"; `c.vocabSize` is the token table's rows (the page adds it from the model's
 * parameters, web/pipeline.js).
 */
function encDecLine(c) {
  const parts = [FAMILY[c.checkpoint.modelType] ?? c.checkpoint.modelType, t('arch.encDecLayers', { e: c.numLayers, d: c.numDecoderLayers }),
    t('arch.heads', { n: c.numHeads })];
  if (POSITIONS[c.positional]) parts.push(t(POSITIONS[c.positional]));
  if (c.vocabSize) parts.push(t('arch.vocab', { n: c.vocabSize.toLocaleString('en-US') }));
  if (c.checkpoint.dtype) parts.push(`${c.checkpoint.dtype} ${sizeText(c.checkpoint.bytes)}`);
  return parts.join(' · ');
}

/** The line for a checkpoint model's config (model.config with its layout); '' without one. */
export function architectureLine(c) {
  if (!c?.checkpoint) return '';
  if (c.architecture === 'encoder-decoder') return encDecLine(c);
  const parts = [FAMILY[c.checkpoint.modelType] ?? c.checkpoint.modelType, t('arch.layers', { n: c.numLayers })];
  const kv = c.numKeyValueHeads ?? c.numHeads;
  if (kv === c.numHeads) parts.push(t('arch.heads', { n: c.numHeads }));
  else parts.push(t(kv === 1 ? 'arch.mqa' : 'arch.gqa', { n: c.numHeads, kv }));
  if (c.rope) {
    let rope = `RoPE θ ${num(c.rope.theta)}`;
    if (c.rope.type !== 'default') rope += `, ${c.rope.type} ×${num(c.rope.factor)}`;
    if (c.rope.rotaryDim && c.rope.rotaryDim < c.headDim) rope += `, ${t('arch.partial', { r: c.rope.rotaryDim, d: c.headDim })}`;
    parts.push(rope);
  }
  if (c.slidingWindow > 0) {
    parts.push(c.globalLayers > 0
      ? t('arch.localGlobal', { local: c.numLayers - c.globalLayers, global: c.globalLayers, w: c.slidingWindow })
      : t('arch.window', { w: c.slidingWindow }));
  }
  parts.push(NORM[c.norm] ?? c.norm);
  parts.push((c.gated ? GATED : PLAIN)[c.activation] ?? c.activation);
  if (c.qkNorm) parts.push(t('arch.qkNorm'));
  if (c.attnSoftcap > 0 || c.finalSoftcap > 0) parts.push(t('arch.softcap', { a: num(c.attnSoftcap), f: num(c.finalSoftcap) }));
  if (c.checkpoint.dtype) parts.push(`${c.checkpoint.dtype} ${sizeText(c.checkpoint.bytes)}`);
  return parts.join(' · ');
}
