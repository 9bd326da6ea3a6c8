// RoPE view (layer: web; issue 28): for one query q at position m and one key k at position n, a dial per frequency
// pair (q's pair before and after the rotation by m·θᵢ, k's after n·θᵢ), the score q_m·k_n against the offset m − n,
// and the same q, k moved together by s positions (equal score). Every number comes from the module
// (as.ropeExplain through the worker): this file only draws.
import { h, s, fmt } from '../dom.js';
import { t } from '../i18n.js';

const DIALS_MAX = 32;
/** A number in `p` significant digits: plain in [1e-3, 1e7), else in exponent form (θᵢ spans many decades). */
export const sig = (v, p = 3) => (v === 0 ? '0' : Math.abs(v) >= 1e-3 && Math.abs(v) < 1e7 ? String(Number(v.toPrecision(p))) : v.toExponential(p - 1)); // pairs drawn (a 128-dim head has 64: the first 32 hold the fast ones, the last the slow)

/** One pair's dial: unit circle, q before (thin), q after (thick), k after (dashed); angle m·θᵢ written below. */
function dial(i, e, q, half) {
  const R = 26, c = 30;
  const len = (x, y) => Math.hypot(x, y) || 1;
  const norm = Math.max(len(q[i], q[i + half]), len(e.qRotated[i], e.qRotated[i + half]), len(e.kRotated[i], e.kRotated[i + half]));
  const tip = (x, y) => [c + (R * x) / norm, c - (R * y) / norm];
  const arrow = (x, y, cls) => {
    const [x2, y2] = tip(x, y);
    return s('line', { x1: c, y1: c, x2, y2, class: cls });
  };
  const svg = s('svg', { class: 'rope-dial', viewBox: '0 0 60 60', width: 60, height: 60, 'aria-hidden': 'true' },
    s('circle', { cx: c, cy: c, r: R, class: 'rope-ring' }),
    arrow(q[i], q[i + half], 'rope-before'),
    arrow(e.kRotated[i], e.kRotated[i + half], 'rope-k'),
    arrow(e.qRotated[i], e.qRotated[i + half], 'rope-after'));
  return h('figure', { class: 'rope-dial-fig', dataset: { pair: String(i) } }, svg,
    h('figcaption', {}, h('span', { text: t('rope.pair', { i, theta: sig(e.invFreq[i], 2) }) }), h('br'),
      h('span', { text: t('rope.angle', { angle: sig(e.angleQ[i], 2) }) })));
}

/** The score against the offset m − n: a polyline, the chosen offset marked. */
function curve(e, width, offset) {
  const W = Math.max(260, Math.min(width, 720)), H = 190;
  const pad = { l: 44, r: 10, t: 10, b: 28 };
  const vals = Array.from(e.curve);
  const lo = Math.min(...vals), hi = Math.max(...vals);
  const span = hi - lo || 1;
  const x = (d) => pad.l + ((d - e.from) / Math.max(1, e.to - e.from)) * (W - pad.l - pad.r);
  const y = (v) => pad.t + ((hi - v) / span) * (H - pad.t - pad.b);
  const svg = s('svg', { class: 'curves rope-curve', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': t('rope.curveAria') });
  for (const v of [lo, (lo + hi) / 2, hi]) {
    svg.append(s('line', { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), class: 'grid' }),
      s('text', { x: pad.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'axis', text: fmt(v, 2) }));
  }
  for (const d of [e.from, Math.round((e.from + e.to) / 2), e.to]) {
    svg.append(s('text', { x: x(d), y: H - 8, 'text-anchor': 'middle', class: 'axis', text: String(d) }));
  }
  const pts = vals.map((v, j) => `${x(e.from + j).toFixed(1)},${y(v).toFixed(1)}`);
  svg.append(s('polyline', { points: pts.join(' '), fill: 'none', class: 'rope-line' }));
  if (offset >= e.from && offset <= e.to) {
    svg.append(s('circle', { cx: x(offset), cy: y(vals[offset - e.from]), r: 4, class: 'rope-mark' }));
  }
  const fig = h('figure', { class: 'curves-fig', dataset: { name: 'rope-curve' } },
    h('figcaption', { class: 'hm-title', text: t('rope.curve', { from: e.from, to: e.to }) }), svg);
  fig.style.maxWidth = `${W}px`;
  return fig;
}

/**
 * ropeView({ settings, source, q, k, m, n, shift, e, moved, width }) → HTMLElement. `e` is ropeExplain's result at
 * (m, n), `moved` at (m + shift, n + shift); `settings` what was asked (type, theta, headDim, factor).
 */
export function ropeView({ settings, source, q, m, n, shift, e, moved, width }) {
  const half = e.rotaryDim / 2;
  const body = h('div', { class: 'view-body rope-body' });
  const sc = settings.scaling?.type ?? 'default';
  body.append(h('p', { class: 'note', dataset: { name: 'rope-settings' }, text: t(source === 'model' ? 'rope.fromModel' : 'rope.defaultModel', {
    headDim: settings.headDim, theta: sig(settings.theta ?? 10000, 6), type: sc, factor: sig(settings.scaling?.factor ?? 1), rotary: e.rotaryDim,
  }) }));
  body.append(h('p', { class: 'note', text: t('rope.formula') }));
  const dials = h('div', { class: 'rope-dials', role: 'img', 'aria-label': t('rope.dialsAria', { m, n }) });
  const shown = Math.min(half, width < 520 ? DIALS_MAX / 2 : DIALS_MAX);
  for (let i = 0; i < shown; i++) dials.append(dial(i, e, q, half));
  const keys = h('p', { class: 'curve-keys' },
    h('span', { class: 'curve-key' }, h('span', { class: 'swatch rope-sw-before' }), t('rope.keyBefore')),
    h('span', { class: 'curve-key' }, h('span', { class: 'swatch rope-sw-after' }), t('rope.keyAfter', { m })),
    h('span', { class: 'curve-key' }, h('span', { class: 'swatch rope-sw-k' }), t('rope.keyK', { n })));
  body.append(h('h3', { class: 'hm-title', text: t('rope.dials', { shown, half }) }), keys, dials);
  body.append(curve(e, width, m - n));
  const same = Math.abs(moved.score - e.score) / Math.max(1e-30, Math.abs(e.score));
  body.append(h('p', { class: 'rope-same', dataset: { name: 'rope-same' } },
    h('span', { text: t('rope.scoreAt', { m, n, score: fmt(e.score, 6) }) }), ' ',
    h('span', { text: t('rope.scoreMoved', { m: m + shift, n: n + shift, score: fmt(moved.score, 6) }) }), ' ',
    h('strong', { text: t('rope.sameOffset', { diff: same.toExponential(1) }) })));
  return body;
}
