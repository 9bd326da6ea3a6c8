// Embeddings view (layer: web): the [n, dModel] embedding matrix, one row per token, signed colour map.
import { h } from '../dom.js';
import { heatmap } from './heatmap.js';
import * as colors from '../colors.js';

/** embeddingsView({ trace, width, selected, onSelect }) → HTMLElement */
export function embeddingsView({ trace, width, selected, onSelect }) {
  const { n, dModel } = trace;
  return h('div', { class: 'view-body' },
    h('p', { class: 'note', text: `${n} tokens × dModel ${dModel}. ${trace.example
      ? 'The worked example\'s hand-set 3-d vectors.'
      : trace.config && trace.config.seed == null
        ? 'The trained model\'s rows of its embedding table, one per token id.'
        : 'Seeded random vectors (same seed, same numbers); each token id has one row of the table.'}` }),
    heatmap({
      values: trace.embeddings, rows: n, cols: dModel, map: colors.signed,
      rowLabels: trace.tokens, colLabels: dModel <= 64 ? [...Array(dModel).keys()].map(String) : null,
      rowName: 'token', colName: 'dim', title: 'Embedding E [n, dModel]', width, cellMax: 26,
      dataset: { name: 'embeddings' }, selectedRow: selected, onCell: onSelect && ((i) => onSelect(i)),
    }));
}
