// What a bundled model's heads do (layer: web): a legend of its labelled heads — "L2 H3: previous token (0.36)"
// — from the `heads` of models/<name>/config.json (measured by training/label_heads.py on the held-out set and
// recomputed through attnscope by tests/js/heads.test.js). Layers and heads are numbered from 1 as everywhere
// on the page; clicking an entry selects that layer and head. Data in, element out.
import { h } from '../dom.js';
import { t } from '../i18n.js';

// training/label_heads.py's measures → catalog keys (written out so a key check can find them)
const MEASURES = {
  previousToken: 'heads.previousToken',
  space: 'heads.space',
  punctuation: 'heads.punctuation',
  induction: 'heads.induction',
  copy: 'heads.copy',
  field: 'heads.field',
  previousLine: 'heads.previousLine',
};

/**
 * headLegend({ heads, layer, selected, onSelect }) → HTMLElement | null.
 * heads: config.json's [{ layer, head, attention, label, measure, score, uniform }] (0-based layer and head);
 * layer / selected: the page's current layer and selected heads (0-based), to mark the shown entry;
 * onSelect(layer, head) when an entry is clicked.
 */
export function headLegend({ heads, layer, selected, onSelect }) {
  if (!Array.isArray(heads) || !heads.length) return null;
  // one chip per head; a head with several labels lists them, strongest first (config.json's order)
  const byHead = new Map();
  for (const hd of heads) {
    const key = `${hd.attention}:${hd.layer}:${hd.head}`;
    if (!byHead.has(key)) byHead.set(key, []);
    byHead.get(key).push(hd);
  }
  const items = [...byHead.values()].map((labels) => {
    const { layer: l, head, attention } = labels[0];
    const current = l === layer && selected.length === 1 && selected[0] === head;
    const text = labels.map((hd) => t('heads.label', {
      label: MEASURES[hd.measure] ? t(MEASURES[hd.measure]) : hd.label, score: hd.score.toFixed(2),
    })).join(t('heads.labelSep'));
    const b = h('button', {
      type: 'button',
      class: `head-label${current ? ' on' : ''}`,
      'aria-pressed': String(current),
      title: labels.map((hd) => t('heads.uniform', { label: MEASURES[hd.measure] ? t(MEASURES[hd.measure]) : hd.label, uniform: hd.uniform.toFixed(3) })).join('\n'),
      dataset: { layer: l, head, measures: labels.map((hd) => hd.measure).join(' ') },
      text: t(attention === 'cross' ? 'heads.entryCross' : 'heads.entry', { layer: l + 1, head: head + 1, labels: text }),
    });
    b.addEventListener('click', () => onSelect(l, head));
    return b;
  });
  // inline (phrasing) elements only: the legend sits in the model's paragraph
  return h('span', { class: 'head-legend', dataset: { name: 'head-legend' } },
    h('span', { class: 'head-legend-title', text: t('heads.title') }), ...items);
}
