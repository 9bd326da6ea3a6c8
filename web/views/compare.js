// The compare view (layer: web): the two pinned maps and their difference on the aligned spans (web/compare.js),
// with the buttons that pin what the attention view shows. Data in, element out.
import { h } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';
import { heatmap } from './heatmap.js';

const slotText = (slot, p) => t('compare.slot', { slot, what: p.label, layer: p.layer + 1, head: p.head + 1, n: p.tokens.length });

/** compareView({ pins: { a, b }, result | null, error | null, width, onPin(slot), onClear() }) → HTMLElement */
export function compareView(o) {
  const { pins, result, width } = o;
  const buttons = h('div', { class: 'ctl-row' },
    h('button', { type: 'button', class: 'btn', id: 'compare-pin-a', text: t('compare.pinA'), onclick: () => o.onPin('a') }),
    h('button', { type: 'button', class: 'btn', id: 'compare-pin-b', text: t('compare.pinB'), onclick: () => o.onPin('b') }),
    h('button', { type: 'button', class: 'btn', id: 'compare-clear', text: t('compare.clear'), onclick: o.onClear, disabled: !pins.a && !pins.b }));
  const slots = h('ul', { class: 'compare-slots', 'data-no-i18n': '' },
    ...[['A', pins.a], ['B', pins.b]].filter(([, p]) => p).map(([slot, p]) => h('li', { text: slotText(slot, p) })));
  const parts = [buttons, pins.a || pins.b ? slots : h('p', { class: 'note', text: t('compare.empty') })];
  if (o.error) parts.push(h('p', { class: 'error', role: 'alert', text: t('compare.cannot', { reason: o.error }) }));
  if (result) {
    const { U } = result;
    parts.push(h('p', { class: 'note', dataset: { name: 'compare-alignment' }, text: result.mode === 'chars'
      ? t('compare.aligned', { a: pins.a.tokens.length, b: pins.b.tokens.length, spans: U })
      : t('compare.byPosition', { n: U }) }));
    parts.push(compareTiles(result, `A · ${pins.a.label}`, `B · ${pins.b.label}`, width));
  }
  return h('div', { class: 'view-body compare-view' }, parts);
}

/** A comparison's two maps (one colour domain) and their difference, side by side (also the english / english-rope switch). */
export function compareTiles(result, titleA, titleB, width, kinds = ['compare-a', 'compare-b', 'compare-diff'], diffTitle = t('compare.diff')) {
  const { U, labels } = result;
  let hi = 0;
  for (const v of [...result.a, ...result.b]) hi = Math.max(hi, v);
  const tile = Math.max(200, Math.min(360, Math.floor((width - 24) / 3)));
  const map = (values, kind, title, signed) => heatmap({
    values, rows: U, cols: U, map: signed ? colors.signed : colors.weights, kind: signed ? 'signed' : 'weights',
    domain: signed ? undefined : [0, hi || 1], rowLabels: labels, colLabels: labels, rowName: t('axis.query'), colName: t('axis.key'),
    title, width: tile, cellMax: 30, legendLabel: signed ? t('compare.diff') : t('heatmap.weight'), dataset: { kind },
  });
  return h('div', { class: 'hm-tiles' },
    map(result.a, kinds[0], titleA, false), map(result.b, kinds[1], titleB, false), map(result.diff, kinds[2], diffTitle, true));
}
