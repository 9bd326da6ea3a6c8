// Raster twins of the SVG views (layer: web/render; no DOM): the same layout (grid.js, lines.js) drawn into an
// RGBA buffer at `scale` pixels per SVG unit, for PNG export (bin/attnscope.mjs encodes it with pngjs; the
// page can putImageData it). Cells, the legend's colour bar and the links are drawn; text is not (a PNG
// carries no labels — use SVG for a figure with tokens).
import {
  MASKED, colorIndex, legendBar, parseColor, rgbAt, textWidth,
} from './common.js';
import { gridLayout } from './grid.js';
import { linesLayout } from './lines.js';

function canvas(width, height, scale) {
  const w = Math.round(width * scale);
  const h = Math.round(height * scale);
  const data = new Uint8ClampedArray(w * h * 4).fill(255);
  return { width: w, height: h, data };
}

// Fills the SVG-unit rectangle [x, x+w) × [y, y+h) with an opaque colour; edges snap as round(unit · scale),
// so neighbouring cells share an edge and never overlap or leave a gap.
function fillRect(img, scale, x, y, w, h, [r, g, b]) {
  const px0 = Math.max(0, Math.round(x * scale));
  const px1 = Math.min(img.width, Math.round((x + w) * scale));
  const py0 = Math.max(0, Math.round(y * scale));
  const py1 = Math.min(img.height, Math.round((y + h) * scale));
  for (let py = py0; py < py1; py++) {
    for (let px = px0; px < px1; px++) {
      const k = (py * img.width + px) * 4;
      img.data[k] = r; img.data[k + 1] = g; img.data[k + 2] = b; img.data[k + 3] = 255;
    }
  }
}

/** A grid spec (heatmapGrid / overviewGrid) as RGBA: { width, height, data }, width = round(svg width · scale). */
export function gridRaster(spec, scale = 2) {
  const L = gridLayout(spec);
  const img = canvas(L.width, L.height, scale);
  const { rows, cols, cell, palette } = spec;
  spec.panels.forEach((panel, p) => {
    const { x, y } = L.panels[p];
    const [lo, hi] = panel.domain;
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const k = i * cols + j;
        const rgb = rgbAt(palette, colorIndex(panel.values[k], lo, hi, panel.masked?.[k] === 1));
        fillRect(img, scale, x + j * cell, y + i * cell, cell, cell, rgb);
      }
    }
  });
  if (L.legend) {
    const { gx, w } = legendBar({ ...L.legend, ...spec.legend });
    const steps = Math.round(w * scale);
    for (let s = 0; s < steps; s++) {
      const idx = Math.round((s / Math.max(1, steps - 1)) * 255);
      fillRect(img, 1, Math.round(gx * scale) + s, Math.round(L.legend.y * scale), 1, Math.round(10 * scale), rgbAt(palette, idx));
    }
    if (spec.panels.some((pn) => pn.masked?.includes(1))) fillRect(img, scale, gx + w + 40, L.legend.y, 10, 10, MASKED);
  }
  return img;
}

// Blends an antialiased segment of half-width `half` px: one step per pixel along the major axis, a span with
// fractional coverage at its edges on the minor axis, colour [r, g, b] over what is there with alpha a.
function blendLine(img, x0, y0, x1, y1, [r, g, b], a, half) {
  const steep = Math.abs(y1 - y0) > Math.abs(x1 - x0);
  let [ma, na, mb, nb] = steep ? [y0, x0, y1, x1] : [x0, y0, x1, y1];
  if (ma > mb) [ma, na, mb, nb] = [mb, nb, ma, na];
  const slope = mb > ma ? (nb - na) / (mb - ma) : 0;
  const hw = half * Math.sqrt(1 + slope * slope);
  const majorLimit = steep ? img.height : img.width;
  const minorLimit = steep ? img.width : img.height;
  for (let M = Math.max(0, Math.round(ma)); M <= Math.min(majorLimit - 1, Math.round(mb)); M++) {
    const mid = na + (M + 0.5 - ma) * slope;
    const lo = mid - hw;
    const hi = mid + hw;
    for (let q = Math.max(0, Math.floor(lo)); q <= Math.min(minorLimit - 1, Math.floor(hi)); q++) {
      const cov = Math.min(q + 1, hi) - Math.max(q, lo);
      if (cov <= 0) continue;
      const al = a * Math.min(1, cov);
      const k = ((steep ? M : q) * img.width + (steep ? q : M)) * 4;
      img.data[k] += (r - img.data[k]) * al;
      img.data[k + 1] += (g - img.data[k + 1]) * al;
      img.data[k + 2] += (b - img.data[k + 2]) * al;
    }
  }
}

/** The lines view as RGBA: the links of linesLayout (same options as linesSvg) and the head swatches. */
export function linesRaster(o, scale = 2) {
  const L = linesLayout(o);
  const img = canvas(L.width, L.height, scale);
  const rgbs = L.colors.map(parseColor);
  for (const k of L.links) {
    blendLine(img, L.x0 * scale, L.y(k.i) * scale, L.x1 * scale, L.y(k.j) * scale, rgbs[k.p], k.opacity, 0.7 * scale);
  }
  let x = 10;
  rgbs.forEach((rgb, p) => {
    fillRect(img, scale, x, L.legendY, 12, 10, rgb);
    x += 20 + textWidth(o.labels?.[p] ?? `H${p}`);
  });
  return img;
}
