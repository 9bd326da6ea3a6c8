// Building blocks of the guided path's steps (layer: web): formulas (KaTeX, rendered offline from the vendored
// copy), number tables shaded by value, a row of labelled bars, and the "try this" box that checks an answer.
// Every number shown carries data-k="<name>" so the tests can read what the learner reads. Text from the
// catalogs and from the module goes through textContent only.
import katex from '../vendor/katex/katex.mjs';
import { h, fmt, replace, tokenLabel } from '../dom.js';
import * as colors from '../colors.js';
import { t } from '../i18n.js';
import { parseAnswer } from './numbers.js';

/**
 * A formula. katex.render builds DOM nodes and sets their styles through the CSSOM (element.style), which the
 * page's CSP (style-src 'self', no 'unsafe-inline') allows; renderToString's style="" attributes would not be.
 */
export function tex(src, display = true) {
  const el = h(display ? 'div' : 'span', { class: display ? 'l-tex' : 'l-tex-inline' });
  katex.render(src, el, { displayMode: display, throwOnError: false, output: 'htmlAndMathml' });
  return el;
}

/** A live region: update() recomputes with the module and redraws only this part; ctx.drawn() counts it. */
export function live(ctx, draw) {
  const el = h('div', { class: 'l-live' });
  const update = () => {
    try {
      replace(el, draw());
    } catch (e) {
      replace(el, h('p', { class: 'l-error', role: 'alert', text: e.message }));
    }
    ctx.drawn();
  };
  return { el, update };
}

/** A paragraph from the catalog (key), {vars} filled. */
export const p = (key, vars, cls = 'l-p') => h('p', { class: cls, text: t(key, vars) });

/** A heading of a part of a step. */
export const sub = (key, vars) => h('h3', { class: 'l-sub', text: t(key, vars) });

function cellColor(v, lo, hi) {
  if (!Number.isFinite(v)) return 'rgb(214,214,214)';
  const x = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  const i = Math.max(0, Math.min(255, Math.round(x * 255))) * 3;
  const rgb = colors.weights.rgb;
  return `rgb(${rgb[i]},${rgb[i + 1]},${rgb[i + 2]})`;
}

/**
 * A table of `values` (row-major rows × cols) with row and column labels; `shade` colours cells by value,
 * `key` names them (data-k="key-r-c"), `mark` highlights a row.
 */
export function matrix(values, rows, cols, { rowLabels, colLabels, digits = 4, key, shade = true, mark = -1, caption } = {}) {
  const finite = Array.from(values).filter(Number.isFinite);
  const lo = Math.min(0, ...finite);
  const hi = Math.max(...finite, lo + 1e-9);
  const head = colLabels ? h('tr', {}, h('th', {}), colLabels.map((c) => h('th', { scope: 'col', text: tokenLabel(c) }))) : null;
  const body = Array.from({ length: rows }, (_, r) => h('tr', { class: r === mark ? 'l-mark' : null },
    rowLabels ? h('th', { scope: 'row', text: tokenLabel(rowLabels[r], 40) }) : null,
    Array.from({ length: cols }, (_, c) => {
      const v = values[r * cols + c];
      const cell = h('td', { text: fmt(v, digits), dataset: key ? { k: `${key}-${r}-${c}` } : {} });
      if (shade) {
        const x = hi > lo ? (v - lo) / (hi - lo) : 0.5;
        cell.style.background = cellColor(v, lo, hi);
        cell.style.color = x > 0.55 ? '#111' : '#fff';
      }
      return cell;
    })));
  return h('div', { class: 'l-scroll' }, h('table', { class: 'l-matrix' },
    caption ? h('caption', { text: caption }) : null, head ? h('thead', {}, head) : null, h('tbody', {}, body)));
}

/** Horizontal bars for `values` in [0, max] with labels, each number tagged data-k="key-i". */
export function bars(values, labels, { key, digits = 4, max = Math.max(...values, 1e-9), mark = -1 } = {}) {
  return h('div', { class: 'l-bars' }, Array.from(values, (v, i) => {
    const fill = h('span', { class: 'l-bar-fill' });
    fill.style.width = `${Math.max(0, Math.min(1, v / max)) * 100}%`;
    return h('div', { class: i === mark ? 'l-bar l-mark' : 'l-bar' },
      h('span', { class: 'l-bar-label', text: tokenLabel(labels[i]) }),
      h('span', { class: 'l-bar-track' }, fill),
      h('span', { class: 'l-bar-num', text: fmt(v, digits), dataset: key ? { k: `${key}-${i}` } : {} }));
  }));
}

/** A labelled number input or slider; onInput(value) gets the parsed number. */
export function numberField(labelKey, value, onInput, { min, max, step = 'any', range = false, id } = {}) {
  const input = h('input', {
    type: range ? 'range' : 'number', value: String(value), min, max, step, id, inputmode: 'decimal',
  });
  const out = range ? h('output', { text: String(value) }) : null;
  input.addEventListener('input', () => {
    const v = Number(input.value);
    if (out) out.textContent = input.value;
    if (Number.isFinite(v)) onInput(v);
  });
  return h('label', { class: 'l-field' }, h('span', { text: t(labelKey) }), input, out);
}

/** A labelled text input; onInput(text) on every change. */
export function textField(labelKey, value, onInput, id) {
  const input = h('input', { type: 'text', value, id, spellcheck: 'false', autocomplete: 'off' });
  input.addEventListener('input', () => onInput(input.value));
  return h('label', { class: 'l-field l-field-wide' }, h('span', { text: t(labelKey) }), input);
}

/**
 * The "try this" box: a question (catalog key + vars), a number input and a Check button. `answer()` is read
 * when the learner checks (it follows the live view); right within ±tol → onSolved(). data-verdict on the box
 * is 'right' or 'wrong' after a check.
 */
export function tryBox(task, onSolved) {
  const input = h('input', { type: 'text', id: 'try-answer', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false' });
  const verdict = h('p', { class: 'l-verdict', role: 'status', 'aria-live': 'polite' });
  const box = h('section', { class: 'l-try', 'aria-labelledby': 'try-title' },
    h('h3', { id: 'try-title', text: t('try.title') }),
    h('p', { text: t(task.key, task.vars) }),
    h('p', { class: 'l-tol', text: task.tol ? t('try.tolerance', { tol: task.tol }) : t('try.exact') }));
  const check = () => {
    const got = parseAnswer(input.value);
    const want = task.answer();
    if (!Number.isFinite(got)) {
      box.dataset.verdict = 'invalid';
      verdict.textContent = t('try.notNumber');
      return;
    }
    const right = Math.abs(got - want) <= task.tol + 1e-12;
    box.dataset.verdict = right ? 'right' : 'wrong';
    verdict.textContent = right ? t('try.right', { explain: t(task.explain, task.explainVars?.() ?? {}) }) : t('try.wrong');
    if (right) onSolved();
  };
  const form = h('form', { class: 'l-try-form' },
    h('label', { class: 'sr-only', for: 'try-answer', text: t('try.answer') }), input,
    h('button', { type: 'submit', class: 'l-btn', id: 'try-check', text: t('try.check') }));
  form.addEventListener('submit', (e) => { e.preventDefault(); check(); });
  box.append(form, verdict);
  return box;
}
