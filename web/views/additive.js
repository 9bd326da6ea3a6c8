// Additive (Bahdanau) attention view (layer: web): the seeded queries, keys and values, the weights
// W_q, W_k, w_v, the tanh features of one query against every key, the scores w_v·tanh(…), the masked
// softmax weights and the output, printed as numbers. Every number is the module's
// (web/family-worker.js calls as.additiveAttention); the view only lays them out. Data in, element out.
import { h, fmt } from '../dom.js';
import * as colors from '../colors.js';
import { t } from '../i18n.js';

/**
 * A small numeric table [rows, cols] with coloured cells; −∞ cells are shown as masked.
 * o: { name, title, values, rows, cols, rowLabels, colLabels, map, domain?, focusRow?, onRow? }
 */
function matrix(o) {
  const [lo, hi] = o.domain ?? colors.domainOf(o.values, 'signed');
  const t = h('table', { class: 'matrix', dataset: { matrix: o.name } });
  t.append(h('thead', {}, h('tr', {}, h('th'), o.colLabels.map((c) => h('th', { scope: 'col', text: c })))));
  const tb = h('tbody');
  for (let i = 0; i < o.rows; i++) {
    const tr = h('tr', { class: i === o.focusRow ? 'focus-row' : null }, h('th', { scope: 'row', text: o.rowLabels[i] }));
    if (o.onRow) {
      tr.classList.add('pickable');
      tr.addEventListener('click', () => o.onRow(i));
    }
    for (let j = 0; j < o.cols; j++) {
      const v = o.values[i * o.cols + j];
      const td = h('td', { text: fmt(v), dataset: { value: Number.isFinite(v) ? v : String(v) } });
      if (v === -Infinity) td.className = 'masked';
      else {
        td.style.background = colors.cssColor(o.map, v, lo, hi);
        td.style.color = colors.textOn(o.map, v, lo, hi);
      }
      tr.append(td);
    }
    tb.append(tr);
  }
  t.append(tb);
  return h('figure', { class: 'matrix-fig' }, h('figcaption', { class: 'hm-title', text: o.title }), h('div', { class: 'scroll-x', tabindex: 0 }, t)); // focusable: scrolls from the keyboard on a phone
}

const names = (p, n) => Array.from({ length: n }, (_, i) => `${p}${i}`);

/** additiveView({ result, query, onQuery }) → HTMLElement; result as web/family-worker.js returns it. */
export function additiveView({ result: r, query, onQuery }) {
  const { nq, nk, dq, dk, dv, hidden, validLen } = r;
  const qi = Math.min(query, nq - 1);
  const qs = names('q', nq);
  const ks = names('k', nk).map((k, j) => (j >= validLen ? `${k} ✕` : k));
  const hs = names('h', hidden);
  const signed = (name, title, values, rows, cols, rowLabels, colLabels, extra = {}) => matrix({
    name, title, values, rows, cols, rowLabels, colLabels, map: colors.signed, ...extra,
  });
  const body = h('div', { class: 'view-body additive', dataset: { nq, nk, hidden, validLen } });
  body.append(h('p', { class: 'note', text: t('additive.note', { nq, dq, nk, dk, dv, hidden })
    + (validLen < nk ? t('additive.blocked', { from: validLen, to: nk - 1, validLen }) : t('additive.allValid', { validLen })) }));

  body.append(h('h3', { class: 'steps-sub', text: t('additive.inputs') }),
    h('div', { class: 'example-results' },
      signed('queries', t('additive.matQueries', { r: nq, c: dq }), r.queries, nq, dq, qs, names('', dq), { focusRow: qi, onRow: onQuery }),
      signed('keys', t('additive.matKeys', { r: nk, c: dk }), r.keys, nk, dk, ks, names('', dk)),
      signed('values', t('additive.matValues', { r: nk, c: dv }), r.values, nk, dv, ks, names('', dv)),
      signed('wq', `W_q [${dq}, ${hidden}]`, r.wq, dq, hidden, names('', dq), hs),
      signed('wk', `W_k [${dk}, ${hidden}]`, r.wk, dk, hidden, names('', dk), hs),
      signed('wv', `w_v [${hidden}]`, r.wv, 1, hidden, ['w_v'], hs)));

  const fq = r.features.subarray(qi * nk * hidden, (qi + 1) * nk * hidden);
  const pick = h('select', { class: 'token-pick', 'aria-label': t('additive.pickAria') },
    qs.map((q, i) => h('option', { value: i, text: q, selected: i === qi })));
  pick.addEventListener('change', () => onQuery(Number(pick.value)));
  body.append(h('h3', { class: 'steps-sub' }, t('additive.featuresBefore'), pick, t('additive.featuresAfter')),
    h('p', { class: 'formula', text: t('additive.featuresFormula', { q: qi }) }),
    h('div', { class: 'example-results' },
      signed('features', t('additive.featuresTitle', { q: qi, nk, hidden }), fq, nk, hidden, ks, hs, { domain: [-1, 1] })));

  body.append(h('h3', { class: 'steps-sub', text: t('additive.scoresTitle') }),
    h('p', { class: 'formula', text: t('additive.scoresFormula') }),
    h('div', { class: 'example-results' },
      signed('scores', t('additive.matScores', { r: nq, c: nk }), r.scores, nq, nk, qs, ks, { focusRow: qi, onRow: onQuery }),
      matrix({ name: 'weights', title: t('additive.matWeights', { r: nq, c: nk }), values: r.weights, rows: nq, cols: nk, rowLabels: qs, colLabels: ks,
        map: colors.weights, domain: [0, 1], focusRow: qi, onRow: onQuery }),
      signed('output', t('additive.matOutput', { r: nq, c: dv }), r.output, nq, dv, qs, names('', dv), { focusRow: qi, onRow: onQuery })));
  return body;
}
