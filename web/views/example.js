// Worked example (layer: web): "Your journey starts with one step" with its 3-d embeddings, editable.
// Simple self-attention (scores = X·Xᵀ, weights = softmax, context = weights·X) from the module,
// printed to 4 decimals as in the published example (row 2, "journey": scores 0.9544 1.4950 …).
import { h, fmt } from '../dom.js';
import * as colors from '../colors.js';
import { t } from '../i18n.js';

function table(name, title, values, rows, cols, rowLabels, colLabels, map, domain) {
  const [lo, hi] = domain ?? colors.domainOf(values, 'signed');
  const t = h('table', { class: 'matrix', dataset: { matrix: name } });
  t.append(h('thead', {}, h('tr', {}, h('td'), colLabels.map((c) => h('th', { scope: 'col', text: c, 'data-no-i18n': '' })))));
  const tb = h('tbody');
  for (let i = 0; i < rows; i++) {
    const tr = h('tr', { class: i === 1 ? 'focus-row' : '' }, h('th', { scope: 'row', text: rowLabels[i], 'data-no-i18n': '' }));
    for (let j = 0; j < cols; j++) {
      const v = values[i * cols + j];
      const td = h('td', { text: fmt(v), dataset: { value: v } });
      td.style.background = colors.cssColor(map, v, lo, hi);
      td.style.color = colors.textOn(map, v, lo, hi);
      tr.append(td);
    }
    tb.append(tr);
  }
  t.append(tb);
  return h('figure', { class: 'matrix-fig' }, h('figcaption', { class: 'hm-title', text: title }), h('div', { class: 'scroll-x', tabindex: 0 }, t)); // scrolls from the keyboard
}

/** The editable inputs (rendered once per visit, so typing in them keeps focus). */
export function exampleInputs({ embeddings, tokens, onEdit, onReset }) {
  let current = embeddings.map((r) => [...r]);
  const inputs = h('table', { class: 'matrix editable', dataset: { matrix: 'inputs' } });
  inputs.append(h('thead', {}, h('tr', {}, h('td'), ['x¹', 'x²', 'x³'].map((c) => h('th', { scope: 'col', text: c })))));
  const tb = h('tbody');
  current.forEach((r, i) => {
    const tr = h('tr', { class: i === 1 ? 'focus-row' : '' }, h('th', { scope: 'row', text: tokens[i], 'data-no-i18n': '' }));
    r.forEach((v, c) => {
      const input = h('input', { type: 'number', step: '0.01', value: String(v), 'aria-label': t('example.inputAria', { token: tokens[i], c: c + 1 }) });
      input.addEventListener('input', () => {
        const x = Number(input.value);
        if (input.value.trim() === '' || !Number.isFinite(x)) return;
        current = current.map((rr) => [...rr]);
        current[i][c] = x;
        onEdit(current);
      });
      tr.append(h('td', {}, input));
    });
    tb.append(tr);
  });
  inputs.append(tb);
  const reset = h('button', { type: 'button', class: 'btn', text: t('example.reset') });
  reset.addEventListener('click', onReset);
  return h('figure', { class: 'matrix-fig' }, h('figcaption', { class: 'hm-title', text: t('example.inputs') }),
    h('div', { class: 'scroll-x' }, inputs), reset);
}

/** The module's scores, weights and context for the current inputs, to 4 decimals. */
export function exampleResults({ trace }) {
  const A = trace.layers[0].attention;
  const labels = [...trace.tokens];
  return h('div', { class: 'example-results' },
    table('scores', t('example.scores'), A.scores, 6, 6, labels, labels, colors.signed),
    table('weights', t('example.weights'), A.weights, 6, 6, labels, labels, colors.weights, [0, 1]),
    table('context', t('example.context'), A.output, 6, 3, labels, ['z¹', 'z²', 'z³'], colors.signed));
}
