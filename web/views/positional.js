// Positional-encoding view (layer: web): the PE table as a heatmap, a few dimensions as curves over the
// position (the table comes with the model run: run option positionalTable), and the summed input
// X = E + PE next to E and PE for the current tokens.
import { h, s, fmt } from '../dom.js';
import { heatmap } from './heatmap.js';
import * as colors from '../colors.js';
import { t } from '../i18n.js';

function curves(pe, positions, d, dims, width) {
  const W = Math.max(260, Math.min(width, 640));
  const H = 170;
  const pad = { l: 30, r: 8, t: 8, b: 22 };
  const x = (p) => pad.l + (p / Math.max(1, positions - 1)) * (W - pad.l - pad.r);
  const y = (v) => pad.t + ((1 - v) / 2) * (H - pad.t - pad.b);
  const svg = s('svg', { class: 'curves', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': t('positional.curvesAria') });
  for (const v of [-1, 0, 1]) {
    svg.append(s('line', { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), class: 'grid' }),
      s('text', { x: pad.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'axis', text: fmt(v, 0) }));
  }
  for (const p of [0, Math.floor((positions - 1) / 2), positions - 1]) {
    svg.append(s('text', { x: x(p), y: H - 6, 'text-anchor': 'middle', class: 'axis', text: String(p) }));
  }
  const keys = h('div', { class: 'curve-keys' });
  dims.forEach((c, k) => {
    const pts = [];
    for (let p = 0; p < positions; p++) pts.push(`${x(p).toFixed(1)},${y(pe[p * d + c]).toFixed(1)}`);
    const color = colors.headColor(k);
    svg.append(s('polyline', { points: pts.join(' '), fill: 'none', stroke: color, 'stroke-width': 1.6 }));
    const sw = h('span', { class: 'swatch' });
    sw.style.background = color;
    keys.append(h('span', { class: 'curve-key' }, sw, t('positional.dimKey', { c, fn: c % 2 ? 'cos' : 'sin' })));
  });
  const fig = h('figure', { class: 'curves-fig' }, h('figcaption', { class: 'hm-title', text: t('positional.curves') }), svg, keys);
  fig.style.maxWidth = `${W}px`;
  return fig;
}

/** positionalView({ trace, state, width, selected, onSelect }) → HTMLElement */
export function positionalView({ trace, state, width, selected, onSelect }) {
  const { n, dModel: d } = trace;
  const kind = trace.config?.positional ?? state.positional; // the model's own (a loaded model ignores the controls)
  const base = trace.config?.positionalBase ?? state.base;
  const body = h('div', { class: 'view-body' });
  const inside = trace.config?.rope ? 'rope' : trace.config?.relativeBias ? 'relative' : null; // positions enter inside attention
  if (inside === 'rope') {
    body.append(h('p', { class: 'note', text: t('positional.rope', { theta: trace.config.rope.theta }) }));
  } else if (inside === 'relative') {
    body.append(h('p', { class: 'note', text: t('positional.relative', trace.config.relativeBias) }));
  } else if (kind === 'none') {
    body.append(h('p', { class: 'note', text: t('positional.off') }));
  } else if (kind === 'learned') {
    body.append(h('p', { class: 'note', text: t(trace.config?.seed != null ? 'positional.learnedSeeded' : 'positional.learnedTrained') }));
  } else if (trace.positionalTable) {
    const P = trace.positionalRows;
    body.append(h('p', { class: 'note', text: t('positional.formula', { base, d, P }) }));
    const dims = [0, 1, 2, 3, Math.min(d - 2, 6), Math.min(d - 1, 7)].filter((c, i, a) => c >= 0 && c < d && a.indexOf(c) === i);
    body.append(h('div', { class: 'row-2' },
      heatmap({
        values: trace.positionalTable, rows: P, cols: d, map: colors.signed, domain: [-1, 1],
        rowLabels: [...Array(P).keys()].map(String), colLabels: d <= 64 ? [...Array(d).keys()].map(String) : null,
        rowName: t('axis.position'), colName: t('axis.dim'), title: t('positional.table', { P, d }),
        width: Math.min(width, 420), heightMax: 280, cellMax: 24, square: false, dataset: { name: 'pe-table' },
      }),
      curves(trace.positionalTable, P, d, dims, width >= 900 ? width - 480 : width)));
  }
  const third = width >= 900 ? (width - 40) / 3 : width;
  const common = { rows: n, cols: d, rowLabels: trace.tokens, rowName: t('axis.token'), colName: t('axis.dim'), width: third, cellMax: 16, selectedRow: selected, onCell: onSelect && ((i) => onSelect(i)) };
  const lim = Math.max(1, ...[trace.embeddings, trace.input].map((v) => colors.domainOf(v, 'signed')[1]));
  const added = !inside && kind !== 'none'; // a table is added to E: show it between E and X
  body.append(h('div', { class: 'row-3' },
    heatmap({ ...common, values: trace.embeddings, map: colors.signed, domain: [-lim, lim], title: t('positional.e'), dataset: { name: 'e' } }),
    added ? heatmap({ ...common, values: trace.positional, map: colors.signed, domain: [-lim, lim], title: t('positional.pe'), dataset: { name: 'pe' } }) : null,
    heatmap({ ...common, values: trace.input, map: colors.signed, domain: [-lim, lim], title: t('positional.x'), dataset: { name: 'input' } })));
  return body;
}
