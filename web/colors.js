// Colour maps in one place (layer: web). Perceptually uniform maps from d3-scale-chromatic, bundled
// from npm into ./vendor by scripts/build-site.mjs (no CDN). Each map becomes a 256-entry RGB lookup
// table so heatmaps fill ImageData without parsing colour strings per cell.
import * as chromatic from './vendor/d3-scale-chromatic.js';

function parse(c) {
  if (c.startsWith('#')) return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  const m = c.match(/[\d.]+/g);
  return [Number(m[0]), Number(m[1]), Number(m[2])];
}

function lut(interp) {
  const out = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) out.set(parse(interp(i / 255)), i * 3);
  return { interp, rgb: out };
}

/** Attention weights in [0, 1]: viridis. */
export const weights = lut(chromatic.interpolateViridis);
/** Other non-negative quantities (softmax steps): magma. */
export const magnitude = lut(chromatic.interpolateMagma);
/** Signed values (embeddings, PE, Q/K/V, scores): RdBu reversed, blue < 0 < red, white at 0. */
export const signed = lut((t) => chromatic.interpolateRdBu(1 - t));
/** One colour per head (bertviz's habit), Tableau 10 cycled. */
export const heads = chromatic.schemeTableau10;
/** Colour of masked (blocked, −∞) cells. */
export const MASKED = [214, 214, 214];

export const headColor = (h) => heads[h % heads.length];

/** The domain [lo, hi] to use for values: [0, 1] for weights, symmetric around 0 for signed data. */
export function domainOf(values, kind) {
  if (kind === 'weights') return [0, 1];
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    const a = Math.abs(values[i]);
    if (Number.isFinite(a) && a > m) m = a;
  }
  if (m === 0) m = 1;
  return [-m, m];
}

/** CSS colour of a value in a map's domain (for table cells and SVG). */
export function cssColor(map, v, lo, hi) {
  const t = hi > lo ? Math.min(1, Math.max(0, (v - lo) / (hi - lo))) : 0.5;
  const i = Math.round(t * 255) * 3;
  return `rgb(${map.rgb[i]}, ${map.rgb[i + 1]}, ${map.rgb[i + 2]})`;
}

/** WCAG relative luminance of an sRGB colour (0…255 channels). */
export function luminance(r, g, b) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/**
 * Black or white text for a background value, whichever contrasts more (WCAG ratio): on any colour one of the
 * two reaches at least 4.58:1, so numbers on coloured cells pass AA (the mid reds and blues of RdBu need black).
 */
export function textOn(map, v, lo, hi) {
  const t = hi > lo ? Math.min(1, Math.max(0, (v - lo) / (hi - lo))) : 0.5;
  const i = Math.round(t * 255) * 3;
  const l = luminance(map.rgb[i], map.rgb[i + 1], map.rgb[i + 2]);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000' : '#fff';
}
