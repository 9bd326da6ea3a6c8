// Panels 7 and 8: additive (Bahdanau) attention and kernel regression, drawn from their worker's last result
// (web/family.js), an error above the last good picture (greyed: stale).
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { additiveView } from '../views/additive.js';
import { regressionView } from '../views/regression.js';
import { widthOf } from '../scheduler.js';

/** Draws `kind`'s view from { result, error }; `state` the page's, `onQuery(i)` picks the additive view's query. */
export function drawFamily(kind, { result, error }, state, onQuery) {
  const el = $(`${kind}-view`);
  const parts = [];
  if (error) parts.push(h('div', { class: 'error', role: 'alert' }, h('strong', { text: t('error.prefix') }), error));
  if (result) {
    parts.push(kind === 'additive'
      ? additiveView({ result, query: state.adQ, onQuery })
      : regressionView({ result, width: widthOf('regression-view') }));
  }
  replace(el, parts);
  el.classList.toggle('stale', !!error);
}
