// The query/key map (layer: web; AttentionViz, Yeh et al. 2023): one head's queries (circles) and keys (squares)
// on the first two principal components of the joint, normalised set (the numbers are as.qkMap's, computed in the
// worker). Hover or focus a query: lines to its keys, as thick as its weights, and its top keys named; then a key:
// that pair's weight. One tab stop; the arrow keys move between points (a roving tabindex). Data in, element out.
import { h, s, tokenLabel } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';

export const QUERY_COLOR = colors.heads[0];
export const KEY_COLOR = colors.heads[1];
const LABELS_UP_TO = 80; // points per side drawn with their token beside them; more: named on hover only

/**
 * qkScatter({ points, queries, keys, explainedVariance, weights, texts, layer, head, width }) → HTMLElement.
 * points[i] = { text, position, token } for query i and key i alike; weights[text] is the head's [n, n].
 */
export function qkScatter(o) {
  const N = o.points.length;
  const W = Math.max(240, Math.min(o.width, 560));
  const pad = 28;
  const xs = [];
  const ys = [];
  for (let i = 0; i < N; i++) xs.push(o.queries[2 * i], o.keys[2 * i]);
  for (let i = 0; i < N; i++) ys.push(o.queries[2 * i + 1], o.keys[2 * i + 1]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const span = Math.max(x1 - x0, y1 - y0, 1e-9); // one scale for both axes: distances read true
  const k = (W - 2 * pad) / span;
  const X = (v) => pad + (v - (x0 + x1) / 2) * k + (W - 2 * pad) / 2;
  const Y = (v) => W / 2 - (v - (y0 + y1) / 2) * k; // PC2 up
  const start = []; // each text's first point
  o.points.forEach((p, i) => { if (start[p.text] === undefined) start[p.text] = i; });
  const nOf = (ti) => Math.round(Math.sqrt(o.weights[ti].length));
  const weight = (qi, ki) => {
    const q = o.points[qi];
    const kp = o.points[ki];
    return q.text === kp.text ? o.weights[q.text][q.position * nOf(q.text) + kp.position] : null;
  };
  const name = (i) => `${tokenLabel(o.points[i].token, 16)} (${o.texts.length > 1 ? `${o.points[i].text + 1}:` : ''}${o.points[i].position})`;
  const pct = (v) => v.toFixed(3);

  const links = s('g', { class: 'qk-links', 'aria-hidden': 'true' });
  const marks = [];
  const labels = N <= LABELS_UP_TO;
  const point = (kind, i) => {
    const px = X(kind === 'query' ? o.queries[2 * i] : o.keys[2 * i]);
    const py = Y(kind === 'query' ? o.queries[2 * i + 1] : o.keys[2 * i + 1]);
    const shape = kind === 'query'
      ? s('circle', { cx: px.toFixed(1), cy: py.toFixed(1), r: 4.5, fill: QUERY_COLOR })
      : s('rect', { x: (px - 4).toFixed(1), y: (py - 4).toFixed(1), width: 8, height: 8, fill: KEY_COLOR });
    const g = s('g', {
      class: 'qk-point', tabindex: -1, role: 'img', 'data-kind': kind, 'data-index': i,
      'aria-label': t(kind === 'query' ? 'qk.queryAria' : 'qk.keyAria', { token: name(i) }),
    }, shape, labels ? s('text', { x: (px + 6).toFixed(1), y: (py + 3).toFixed(1), 'font-size': 10, fill: 'currentColor', text: tokenLabel(o.points[i].token, 10) }) : null,
    s('title', { text: name(i) }));
    g.dataset.x = px;
    g.dataset.y = py;
    marks.push(g);
    return g;
  };
  const svg = s('svg', {
    class: 'qk-svg', width: W, height: W, viewBox: `0 0 ${W} ${W}`, role: 'group', xmlns: 'http://www.w3.org/2000/svg',
    'aria-label': t('qk.aria', { layer: o.layer, head: o.head, n: N }),
    'font-family': 'system-ui, sans-serif',
  },
  s('rect', { x: 0.5, y: 0.5, width: W - 1, height: W - 1, fill: 'none', stroke: '#999', 'stroke-width': 1 }),
  s('text', { x: W / 2, y: W - 6, 'text-anchor': 'middle', 'font-size': 11, fill: 'currentColor', text: t('qk.pc', { i: 1, pct: (o.explainedVariance[0] * 100).toFixed(1) }) }),
  s('text', { x: 12, y: W / 2, 'text-anchor': 'middle', 'font-size': 11, fill: 'currentColor', transform: `rotate(-90 12 ${W / 2})`, text: t('qk.pc', { i: 2, pct: (o.explainedVariance[1] * 100).toFixed(1) }) }),
  links,
  ...Array.from({ length: N }, (_, i) => point('key', i)),
  ...Array.from({ length: N }, (_, i) => point('query', i)));
  marks[0].setAttribute('tabindex', 0);

  const info = h('p', { class: 'note qk-info', 'aria-live': 'polite', dataset: { name: 'qk-info' }, text: t('qk.hint') });
  let query = -1; // the query last shown: a key then shows that pair's weight
  const show = (g) => {
    const kind = g.dataset.kind;
    const i = Number(g.dataset.index);
    links.replaceChildren();
    if (kind === 'query') {
      query = i;
      const ti = o.points[i].text;
      const n = nOf(ti);
      const row = Array.from({ length: n }, (_, p) => ({ p, w: o.weights[ti][o.points[i].position * n + p] }));
      const qx = g.dataset.x;
      const qy = g.dataset.y;
      for (const { p, w } of row) {
        if (w < 0.02) continue;
        const key = marks.find((m) => m.dataset.kind === 'key' && Number(m.dataset.index) === start[ti] + p);
        links.append(s('line', { x1: qx, y1: qy, x2: key.dataset.x, y2: key.dataset.y, stroke: QUERY_COLOR, 'stroke-opacity': 0.7, 'stroke-width': (0.5 + 5 * w).toFixed(2) }));
      }
      const top = row.filter(({ w }) => w > 0).sort((a, b) => b.w - a.w || a.p - b.p).slice(0, 3).map(({ p, w }) => `${name(start[ti] + p)} ${pct(w)}`);
      info.textContent = t('qk.queryInfo', { token: name(i), top: top.join(', ') });
      info.dataset.query = i;
      delete info.dataset.key;
    } else {
      const w = query >= 0 ? weight(query, i) : null;
      info.textContent = w === null ? t('qk.keyInfo', { token: name(i) }) : t('qk.pairInfo', { query: name(query), key: name(i), weight: pct(w) });
      info.dataset.key = i;
      if (w !== null) info.dataset.weight = w;
    }
  };
  for (const g of marks) {
    g.addEventListener('mouseenter', () => show(g));
    g.addEventListener('focus', () => show(g));
  }
  // the arrow keys: queries first, then keys, in order
  const order = [...marks.filter((m) => m.dataset.kind === 'query'), ...marks.filter((m) => m.dataset.kind === 'key')];
  svg.addEventListener('keydown', (e) => {
    const at = order.indexOf(e.target.closest?.('.qk-point'));
    if (at < 0) return;
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (!step) return;
    e.preventDefault();
    const next = order[(at + step + order.length) % order.length];
    for (const m of marks) m.setAttribute('tabindex', -1);
    next.setAttribute('tabindex', 0);
    next.focus();
  });
  const key = h('p', { class: 'qk-legend' },
    h('span', { class: 'qk-swatch qk-q', 'aria-hidden': 'true' }), ` ${t('qk.queries')} `,
    h('span', { class: 'qk-swatch qk-k', 'aria-hidden': 'true' }), ` ${t('qk.keys')}`);
  return h('div', { class: 'qk-map', dataset: { name: 'qk-map' } }, key, svg, info);
}
