// Translation view (layer: web): an encoder–decoder model's source on top and the target it wrote below, the
// cross-attention of the shown layer (one head, or the mean / max over heads) as a heatmap — a row per decoding step,
// a column per source token — and as d2l's alignment figure (source tokens in a row, target tokens in a row, lines
// weighted by attention), and the step chosen (a click or the keyboard on a target token, a row or a cell) read
// out: the source tokens coloured by the weight that step gave them. Every number is the module's (the panel's
// map, web/translate-model.js). Data in, element out.
import { h, s, tokenLabel, fmt } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';
import { heatmap } from './heatmap.js';
import { alignmentTree, strongest } from '../translate-model.js';

export const BEAMS = [1, 2, 3, 4, 5];
const FORMATS = ['svg', 'png', 'csv', 'json'];

/** A tree of alignmentTree as SVG DOM. */
function build([tag, attrs, kids]) {
  return s(tag, attrs, typeof kids === 'string' ? kids : (kids ?? []).map(build));
}

function select(id, label, options, value, onChange) {
  const el = h('select', { id }, options.map(([v, text]) => h('option', { value: String(v), selected: String(v) === String(value), text })));
  el.addEventListener('change', () => onChange(el.value));
  return h('label', { class: 'ctl' }, h('span', { text: label }), el);
}

/** The controls: decoding (greedy or beams), layer, heads (mean, max, each), words. */
function controls(o) {
  const words = h('input', { type: 'checkbox', id: 'translate-words', checked: o.words });
  words.addEventListener('change', () => o.onWords(words.checked));
  return h('div', { class: 'ctl-row tr-controls' },
    select('translate-beams', t('translate.decoding'), BEAMS.map((n) => [n, n === 1 ? t('translate.greedy') : t('translate.beams', { n })]), o.beams, (v) => o.onBeams(Number(v))),
    select('translate-layer', t('translate.layer'), o.tr.cross.map((_, l) => [l, t('translate.layerN', { l: l + 1 })]), o.layer, (v) => o.onLayer(Number(v))),
    select('translate-head', t('translate.heads'), [['mean', t('translate.mean')], ['max', t('translate.max')],
      ...Array.from({ length: o.tr.numHeads }, (_, k) => [k, t('translate.head', { h: k + 1 })])], o.head, (v) => o.onHead(v === 'mean' || v === 'max' ? v : Number(v))),
    h('label', { class: 'check' }, words, ' ', h('span', { text: t('translate.words') })));
}

/** One line of tokens: the source (coloured by the chosen step's weights) or the target (buttons choosing a step). */
function tokenLine(kind, labels, o) {
  const { map, step } = o;
  const C = map.cols.length;
  const hi = map.domain[1];
  const line = h('div', {
    class: `tr-line tr-${kind}`, role: kind === 'target' ? 'toolbar' : 'list', 'aria-label': t(kind === 'target' ? 'translate.targetAria' : 'translate.sourceAria'), 'data-no-i18n': '',
  });
  labels.forEach((label, k) => {
    const text = tokenLabel(label, 24);
    if (kind === 'source') {
      const w = step == null ? null : map.values[step * C + k];
      const chip = h('span', { class: 'chip tr-chip', role: 'listitem', title: w == null ? label : `${label}: ${fmt(w, 4)}`, dataset: { index: k, ...(w == null ? {} : { weight: w }) } },
        h('span', { text }), w == null ? null : h('span', { class: 'chip-id', text: fmt(w, 2) }));
      if (w != null) {
        chip.style.background = colors.cssColor(colors.weights, w, 0, hi);
        chip.style.color = colors.textOn(colors.weights, w, 0, hi);
        chip.lastChild.style.color = 'inherit';
      }
      line.append(chip);
      return;
    }
    const b = h('button', {
      type: 'button', class: `chip tr-chip${k === step ? ' selected' : ''}`, 'aria-pressed': String(k === step), tabindex: k === (step ?? 0) ? 0 : -1,
      title: label, dataset: { index: k }, text,
    });
    b.addEventListener('click', () => o.onStep(k));
    line.append(b);
  });
  if (kind === 'target') { // arrow keys move along the target (one tab stop for the line)
    line.addEventListener('keydown', (e) => {
      const k = Number(e.target.dataset?.index);
      const to = { ArrowLeft: k - 1, ArrowRight: k + 1, Home: 0, End: labels.length - 1 }[e.key];
      if (to === undefined || Number.isNaN(k)) return;
      e.preventDefault();
      o.onStep(Math.max(0, Math.min(labels.length - 1, to)), true);
    });
  }
  return h('div', { class: 'tr-side' }, h('span', { class: 'tr-label', text: t(kind === 'target' ? 'translate.target' : 'translate.source') }), line);
}

/** The chosen step read out: what it read and wrote, the source token it looked at most; previous / next. */
function stepLine(o) {
  const { map, step, tr } = o;
  if (step == null) return h('p', { class: 'note tr-step', id: 'translate-step', text: t('translate.pick') });
  const R = map.rows.length;
  const top = strongest(map, step);
  // the decoder's input at this step: the token before (the start token for the first step); merged into words,
  // the word's first piece's
  const piece = map.rowGroups ? map.rowGroups.indexOf(step) : step;
  const prev = h('button', { type: 'button', class: 'btn', id: 'translate-prev', disabled: step === 0, text: t('translate.prev') });
  const next = h('button', { type: 'button', class: 'btn', id: 'translate-next', disabled: step === R - 1, text: t('translate.next') });
  prev.addEventListener('click', () => o.onStep(step - 1));
  next.addEventListener('click', () => o.onStep(step + 1));
  return h('div', { class: 'tr-step', id: 'translate-step', role: 'status', 'aria-live': 'polite' },
    h('p', { dataset: { step, strongest: top.j, weight: top.weight } }, t('translate.stepRead', {
      k: step + 1, n: R, read: tokenLabel(tr.read.tokens[piece], 24), wrote: tokenLabel(map.rows[step], 24),
      token: tokenLabel(map.cols[top.j], 24), w: fmt(top.weight, 3),
    })), h('div', { class: 'tr-nav' }, prev, next));
}

/** One export bar: `what` ('heatmap' | 'alignment'), a button per format. */
function exportBar(what, onExport) {
  return h('p', { class: 'export-bar' }, h('span', { text: t(what === 'heatmap' ? 'translate.exportHeatmap' : 'translate.exportAlignment') }), ' ',
    FORMATS.map((f) => {
      const b = h('button', { type: 'button', dataset: { translateExport: what, format: f }, 'aria-label': t('translate.exportAria', { what: t(what === 'heatmap' ? 'translate.exportHeatmap' : 'translate.exportAlignment'), f: f.toUpperCase() }), text: f.toUpperCase() });
      b.addEventListener('click', () => onExport(what, f));
      return [b, ' '];
    }));
}

/**
 * translateView({ tr, map, layer, head, words, beams, step, width, status, title, onBeams, onLayer, onHead, onWords,
 * onStep(k, focus), onExport(what, format) }) → HTMLElement
 */
export function translateView(o) {
  const { map, width, title } = o;
  const hm = heatmap({
    values: map.values, rows: map.rows.length, cols: map.cols.length, map: colors.weights, kind: 'weights', domain: map.domain,
    rowLabels: map.rows, colLabels: map.cols, rowName: t('translate.rowName'), colName: t('axis.sourceKey'),
    title, width: Math.min(width, 720), cellMax: 28, legendLabel: t('heatmap.weight'),
    dataset: { kind: 'translate' }, selectedRow: o.step, onCell: (i) => o.onStep(i),
  });
  const al = alignmentTree(map, {
    width: Math.min(width - 4, 900), selected: o.step, title: t('translate.alignTitle'), labels: (x) => tokenLabel(x, 16),
  });
  const svg = build(al.tree);
  svg.setAttribute('aria-hidden', 'true');
  const figure = h('figure', {
    class: 'tr-align', id: 'translate-align', tabindex: 0, role: 'img', 'data-no-i18n': '',
    'aria-label': t('translate.alignAria', { n: map.rows.length, m: map.cols.length, title }),
  }, svg);
  // what is drawn, for tests and the console: beams, layer, heads, words, step
  const dataset = { beams: o.tr.numBeams, layer: o.layer, head: o.head, words: o.words ? '1' : '0', step: o.step ?? '' };
  return h('div', { class: 'view-body tr-view', dataset },
    controls(o),
    h('p', { class: 'note', id: 'translate-status', role: 'status', 'aria-live': 'polite', text: o.status }),
    tokenLine('source', map.cols, o),
    tokenLine('target', map.rows, o),
    stepLine(o),
    hm,
    exportBar('heatmap', o.onExport),
    figure,
    exportBar('alignment', o.onExport));
}
