// The model view's thumbnails coloured by a head detector (issue 27): a frame around each head in the colour of its
// score (previous token, duplicate token, induction, first-token sink share: the worker's 'inside' op 'heads', the
// core's headScores and web/induction.js), with a legend. The frames are laid over the model view's canvas with the
// geometry its dataset gives (web/views/modelview.js: tile = ceil(n / stride) cells, then `gap`), so the view itself
// is not redrawn. Scores are fetched for the shown trace when a detector is chosen, and again for each new trace.
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';
import { legend } from '../views/heatmap.js';

const KEYS = { previous: 'previousToken', duplicate: 'duplicateToken', induction: 'induction', sink: 'sinkShare' };
let scores = null; // the 'heads' result for the trace of `serial`
let serial = -1;

/** Frames over the first self-attention grid of #model-view for detector `by` (nothing when scores are missing). */
export function tintModelView() {
  const by = $('tint-by')?.value ?? 'none';
  const view = $('model-view');
  for (const el of view.querySelectorAll('.mv-tint')) el.remove();
  const key = KEYS[by];
  const values = key && scores?.[key];
  const box = $('tint-legend');
  if (!values) { if (box) box.replaceChildren(); return; }
  const canvas = view.querySelector('canvas.mv-canvas');
  if (!canvas) return;
  const d = canvas.dataset;
  const [L, H, n, m, gap, stride] = ['layers', 'heads', 'n', 'm', 'gap', 'stride'].map((k) => Number(d[k]));
  if (L * H !== values.length) return;
  const tn = Math.ceil(n / stride);
  const tm = Math.ceil(m / stride);
  const pct = (v, of) => `${(100 * v) / of}%`;
  const frames = [];
  for (let l = 0; l < L; l++) {
    for (let hd = 0; hd < H; hd++) {
      const v = values[l * H + hd];
      const f = h('div', { class: 'mv-tint', dataset: { layer: l, head: hd, value: v } });
      // the frame spans the tile and half the gap around it
      f.style.left = pct(hd * (tm + gap) - gap / 2, canvas.width);
      f.style.top = pct(l * (tn + gap) - gap / 2, canvas.height);
      f.style.width = pct(tm + gap, canvas.width);
      f.style.height = pct(tn + gap, canvas.height);
      f.style.borderColor = Number.isNaN(v) ? 'transparent' : colors.cssColor(colors.magnitude, v, 0, 1);
      frames.push(f);
    }
  }
  canvas.after(...frames);
  const bar = legend(colors.magnitude, 0, 1, t(`tint.${by}`));
  bar.querySelector('.legend-masked')?.remove(); // no cell here is masked
  replace(box, bar);
}

/** createHeadTint({ compute, state }): wires #tint-by; trace(tr, serial) for each new trace. */
export function createHeadTint({ compute, state }) {
  const select = $('tint-by');
  const status = $('tint-status');
  let want = -1;
  async function fetchScores() {
    if (select.value === 'none' || serial === want) { tintModelView(); return; }
    const asked = want;
    status.textContent = t('inside.working');
    try {
      const { value } = await compute.call('inside', { state: { ...state }, op: 'heads', args: {} });
      if (asked !== want) return; // a newer trace came meanwhile
      scores = value;
      serial = asked;
      status.textContent = value.long && select.value !== 'sink' ? t('inside.detectorsLong', { n: value.long, limit: value.limit })
        : select.value === 'induction' && !value.induction ? t('inside.failed', { message: value.inductionError }) : '';
    } catch (e) {
      status.textContent = t('inside.failed', { message: e.message });
    }
    tintModelView();
  }
  select.addEventListener('change', fetchScores);
  return {
    trace(tr, s) {
      want = s;
      scores = null;
      if (select.value !== 'none') fetchScores();
    },
  };
}
