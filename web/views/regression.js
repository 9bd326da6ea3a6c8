// Nadaraya–Watson kernel regression view (layer: web; d2l's "attention pooling"): the 50 noisy training
// points, the true curve y = 2 sin x + x^0.8 and the prediction for the current bandwidth w, and the
// query × training-point weights as a heatmap. Numbers come from as.kernelRegression (web/family-worker.js);
// the view maps them to pixels. Data in, element out.
import { h, s, fmt } from '../dom.js';
import * as colors from '../colors.js';
import { heatmap } from './heatmap.js';
import { t } from '../i18n.js';

const TRUTH = '#6b7280';
const PRED = colors.headColor(1);
const POINTS = colors.headColor(0);

function plot(r, width) {
  const W = Math.max(260, Math.min(width, 560));
  const H = Math.round(W * 0.55);
  const pad = { l: 30, r: 8, t: 8, b: 22 };
  let lo = Infinity;
  let hi = -Infinity;
  for (const a of [r.yTrain, r.yTruth, r.yPred]) for (const v of a) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  lo = Math.floor(lo);
  hi = Math.ceil(hi);
  const x = (v) => pad.l + (v / 5) * (W - pad.l - pad.r);
  const y = (v) => pad.t + ((hi - v) / (hi - lo)) * (H - pad.t - pad.b);
  const svg = s('svg', { class: 'curves regression-plot', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
    'aria-label': t('regression.plotAria', { w: r.w }) });
  const step = hi - lo > 6 ? 2 : 1;
  for (let v = lo; v <= hi; v += step) {
    svg.append(s('line', { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), class: 'grid' }),
      s('text', { x: pad.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'axis', text: fmt(v, 0) }));
  }
  for (let v = 0; v <= 5; v++) svg.append(s('text', { x: x(v), y: H - 6, 'text-anchor': 'middle', class: 'axis', text: String(v) }));
  svg.append(s('text', { x: x(4.5), y: H - 6, 'text-anchor': 'middle', class: 'axis', text: 'x →', 'aria-hidden': 'true' }),
    s('text', { x: pad.l + 4, y: pad.t + 10, class: 'axis', text: 'y' }));
  const line = (ys, attrs) => s('polyline', {
    points: Array.from(r.xQuery, (xv, i) => `${x(xv).toFixed(1)},${y(ys[i]).toFixed(1)}`).join(' '), fill: 'none', ...attrs,
  });
  svg.append(line(r.yTruth, { stroke: TRUTH, 'stroke-width': 1.5, 'stroke-dasharray': '5 4', class: 'truth' }));
  r.xTrain.forEach((xv, j) => svg.append(s('circle', { cx: x(xv).toFixed(1), cy: y(r.yTrain[j]).toFixed(1), r: 2.6, fill: POINTS, 'fill-opacity': 0.55 })));
  svg.append(line(r.yPred, { stroke: PRED, 'stroke-width': 2.2, class: 'pred' }));
  const key = (color, text, dashed) => {
    const sw = h('span', { class: `swatch${dashed ? ' dashed' : ''}` });
    sw.style.background = color;
    return h('span', { class: 'curve-key' }, sw, text);
  };
  const fig = h('figure', { class: 'curves-fig' },
    h('figcaption', { class: 'hm-title', text: t('regression.caption', { w: fmt(r.w, 1) }) }), svg,
    h('div', { class: 'curve-keys' }, key(PRED, t('regression.pred')), key(TRUTH, t('regression.truth'), true), key(POINTS, t('regression.points'))));
  fig.style.maxWidth = `${W}px`;
  return fig;
}

/** regressionView({ result, width }) → HTMLElement; result as web/family-worker.js returns it. */
export function regressionView({ result: r, width }) {
  const half = width >= 900 ? Math.floor((width - 24) / 2) : width;
  const nq = r.xQuery.length;
  const nt = r.xTrain.length;
  // colour domain [0, largest weight]: at small w every weight is ~1/50, and [0, 1] would be one colour
  let top = 0;
  for (const v of r.weights) if (v > top) top = v;
  const map = heatmap({
    values: r.weights, rows: nq, cols: nt, map: colors.weights, kind: 'weights', domain: [0, top > 0 ? top : 1],
    rowLabels: Array.from(r.xQuery, (v) => v.toFixed(1)), colLabels: Array.from(r.xTrain, (v) => v.toFixed(2)),
    rowName: t('axis.queryX'), colName: t('axis.trainingX'), title: t('regression.weights', { nq, nt }),
    width: Math.min(half - 16, 460), cellMax: 9, legendLabel: t('heatmap.weight'), dataset: { kind: 'kernel', w: r.w },
  });
  return h('div', { class: 'row-2 regression', dataset: { w: r.w, seed: r.seed, pred: JSON.stringify(Array.from(r.yPred)) } },
    plot(r, half), map);
}
