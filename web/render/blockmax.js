// Block maxima of a big map (layer: web/render; no DOM): a [rows, cols] map shown in fewer pixels than it has
// cells is cut into outRows × outCols blocks, each the largest value of its cells, so a thin diagonal or a single
// strong link stays visible however far out the view is (averaging would fade it). The blocks tile the window
// exactly: block a spans rows r0 + ⌊a·span/out⌋ … r0 + ⌊(a+1)·span/out⌋ − 1, so every cell is in one block and a
// block is one cell when out equals the span. Cells that are not finite (−∞: masked) count only when a block has
// no finite cell, which is then −∞. Used by the page's big heatmaps (web/views/bigmap.js). poolMax cuts blocks of a
// fixed stride instead: the model view's thumbnails.

/** The first cell of block `a` of `out` blocks over `span` cells starting at `start` (a = out gives the end). */
export const blockStart = (start, span, out, a) => start + Math.floor((a * span) / out);

/**
 * The window's [start, end) on an axis of `size` cells, `span` cells wide (at least 1, at most size), centred on
 * `centre` and kept inside the map.
 */
export function clampWindow(size, span, centre) {
  const s = Math.max(1, Math.min(size, Math.round(span)));
  const start = Math.max(0, Math.min(size - s, Math.round(centre - s / 2)));
  return [start, start + s];
}

/**
 * blockMax(values, rows, cols, { r0, r1, c0, c1 }, outRows, outCols) → Float32Array(outRows · outCols)
 * values: [rows, cols] row-major; the window [r0, r1) × [c0, c1) (default the whole map); outRows ≤ r1 − r0 and
 * outCols ≤ c1 − c0 (a block is at least one cell).
 */
export function blockMax(values, rows, cols, win = {}, outRows = rows, outCols = cols) {
  const { r0 = 0, r1 = rows, c0 = 0, c1 = cols } = win;
  if (values.length !== rows * cols) throw new RangeError(`blockMax: values has ${values.length} numbers for ${rows}×${cols} cells`);
  if (!(r0 >= 0 && r0 < r1 && r1 <= rows && c0 >= 0 && c0 < c1 && c1 <= cols)) {
    throw new RangeError(`blockMax: window rows [${r0}, ${r1}) × cols [${c0}, ${c1}) is not inside ${rows}×${cols}`);
  }
  const spanR = r1 - r0;
  const spanC = c1 - c0;
  if (!(Number.isInteger(outRows) && outRows >= 1 && outRows <= spanR && Number.isInteger(outCols) && outCols >= 1 && outCols <= spanC)) {
    throw new RangeError(`blockMax: ${outRows}×${outCols} blocks for a ${spanR}×${spanC} window (each block needs a cell)`);
  }
  const out = new Float32Array(outRows * outCols).fill(-Infinity);
  // the block column of each column of the window, once
  const colBlock = new Int32Array(spanC);
  for (let b = 0; b < outCols; b++) {
    for (let j = blockStart(0, spanC, outCols, b); j < blockStart(0, spanC, outCols, b + 1); j++) colBlock[j] = b;
  }
  for (let a = 0; a < outRows; a++) {
    const o = a * outCols;
    for (let i = blockStart(r0, spanR, outRows, a); i < blockStart(r0, spanR, outRows, a + 1); i++) {
      const row = i * cols + c0;
      for (let j = 0; j < spanC; j++) {
        const v = values[row + j];
        const q = o + colBlock[j];
        if (v > out[q]) out[q] = v; // NaN and −∞ never win over a finite value
      }
    }
  }
  return out;
}

/**
 * poolMax(w, rows, cols, stride, out) → out: one weight map [rows, cols] (non-negative) pooled by `stride`, each
 * stride × stride block of cells (the last ones cut short) → its largest value, [ceil(rows/stride), ceil(cols/stride)]
 * row-major. The model view's thumbnails (web/views/modelview.js) and those of an attention file read head by head
 * (web/attnfile-stream.js). `out` (that size) is filled in place when given.
 */
export function poolMax(w, rows, cols, stride, out = new Float32Array(Math.ceil(rows / stride) * Math.ceil(cols / stride))) {
  const tm = Math.ceil(cols / stride);
  out.fill(0);
  const block = Int32Array.from({ length: cols }, (_, j) => (j / stride) | 0); // each column's block, once
  for (let i = 0; i < rows; i++) {
    const prow = ((i / stride) | 0) * tm;
    for (let j = 0, at = i * cols; j < cols; j++, at++) {
      const v = w[at];
      const q = prow + block[j];
      if (v > out[q]) out[q] = v;
    }
  }
  return out;
}
