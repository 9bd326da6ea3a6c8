// The status line and the error banner (layer: web). The banner's message is data (the module's or the worker's
// text), written with textContent; html[data-error] is set while it shows, and the panels below are greyed.
import { $, h, replace } from './dom.js';
import { t } from './i18n.js';


/** The status line from the store's data: the build, the model shown, the last run's timing. `name(model)`: its label. */
export function showStatus(data, name) {
  const parts = [];
  if (!data.info.ready) parts.push(t('status.loading'));
  else parts.push(t('status.build', { build: t(data.info.simd ? 'status.simd' : 'status.scalar'), version: data.info.version }));
  if (data.traceState?.mode === 'text' && data.traceState.model !== 'random') parts.push(name(data.traceState.model));
  if (data.timing.compute != null) {
    parts.push(t('status.timing', { compute: data.timing.compute.toFixed(1), render: data.timing.render.toFixed(1) }));
  }
  $('status').textContent = parts.join(' · ');
}

export function showError(data, message) {
  data.error = message;
  const el = $('error');
  replace(el, h('strong', { text: t('error.prefix') }), h('span', { 'data-no-i18n': '', text: message }),
    h('span', { class: 'error-hint', text: t('error.hint') }));
  el.hidden = false;
  document.documentElement.dataset.error = '1';
  $('content').classList.add('stale');
}

export function clearError(data) {
  data.error = null;
  $('error').hidden = true;
  delete document.documentElement.dataset.error;
  $('content').classList.remove('stale');
}
