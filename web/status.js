// The status line and the error banner (layer: web). The banner's message is data (the module's or the worker's
// text), written with textContent; html[data-error] is set while it shows, and the panels below are greyed.
import { $, h, replace } from './dom.js';
import { t } from './i18n.js';


/**
 * Which build runs and why, in one phrase: the threads in use, or why there is one (the loader's
 * startup.singleThread), and the builds that failed before it (their reasons are the module's text, untranslated).
 */
function buildWhy(info) {
  const parts = [info.threads > 1 ? t('status.threads', { n: info.threads }) : t('status.oneThread')];
  const why = info.startup?.singleThread;
  if (info.threads <= 1 && why && why !== 'failed') parts.push(t(`status.why.${why}`));
  const label = { 'simd-threads': 'status.threaded', simd: 'status.simd', scalar: 'status.scalar' };
  for (const f of info.startup?.fallbacks ?? []) parts.push(t('status.fellBack', { build: t(label[f.build]), reason: f.reason }));
  return parts.join('; ');
}

/** The status line from the store's data: the build and why, the model shown, the last run's timing. `name(model)`: its label. */
export function showStatus(data, name) {
  const parts = [];
  const { info } = data;
  if (info.failed) parts.push(t('status.failed'));
  else if (!info.ready) parts.push(t('status.loading'));
  else parts.push(t('status.build', { build: t(info.simd ? 'status.simd' : 'status.scalar'), version: info.version }), buildWhy(info));
  if (info.restarted) parts.push(t('status.restarted', { reason: info.restarted }));
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
