// What the panel adapters share (layer: web): the trace a panel draws (merged into words when that is on: computed
// once per trace), and moving a drawn heatmap's selected row without redrawing it.
import { wordTrace } from '../viewmodel.js';

const words = new WeakMap(); // trace → its word-merged copy

/** The trace the attention panel and the model view draw: the module's, or merged into words. */
export function shownTrace(ctx) {
  const { trace } = ctx;
  if (!ctx.view.words || trace.example) return trace;
  let w = words.get(trace);
  if (!w) {
    w = wordTrace(trace);
    words.set(trace, w);
  }
  return w;
}

/** A trace's layers changed (a completion merged in): its word-merged copy is made again. */
export const forgetWords = (trace) => words.delete(trace);

/** Moves the selected row of the heatmaps matching `selector` to `row` (heatmap.selectRow). */
export function selectRows(selector, row) {
  for (const c of document.querySelectorAll(selector)) c.closest('.hm')?.selectRow?.(row);
}
