// Embeddings view (layer: web): the [n, dModel] embedding matrix, one row per token, signed colour map.
import { h } from '../dom.js';
import { heatmap } from './heatmap.js';
import * as colors from '../colors.js';
import { t } from '../i18n.js';

/** embeddingsView({ trace, width, selected, onSelect }) → HTMLElement */
export function embeddingsView({ trace, width, selected, onSelect }) {
  const { n, dModel } = trace;
  return h('div', { class: 'view-body' },
    h('p', { class: 'note', text: t('embeddings.note', {
      n,
      dModel,
      what: t(trace.example ? 'embeddings.example' : trace.config && trace.config.seed == null ? 'embeddings.trained' : 'embeddings.seeded'),
    }) }),
    heatmap({
      values: trace.embeddings, rows: n, cols: dModel, map: colors.signed,
      rowLabels: trace.tokens, colLabels: dModel <= 64 ? [...Array(dModel).keys()].map(String) : null,
      rowName: t('axis.token'), colName: t('axis.dim'), title: t('embeddings.title'), width, cellMax: 26,
      dataset: { name: 'embeddings' }, selectedRow: selected, onCell: onSelect && ((i) => onSelect(i)),
    }));
}
