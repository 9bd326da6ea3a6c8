// Panel 9b: attention flow beside rollout, and the query/key map (issue 27). Both on demand, in the compute worker
// (web/flow-work.js through the 'inside' request). Flow reads the weights the page shows (any model, an attention
// file, the worked example): the head means of every layer go to the worker, which runs the core's attentionFlow
// (Abnar & Zuidema 2020: max-flow over the layered graph with the residual); rollout (web/aggregates.js) is drawn
// beside it from the same means. The Q/K map runs the model again in the worker for one head's q and k. Exports:
// SVG / PNG / CSV / JSON of both figures.
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';
import { meanOverHeads, rollout } from '../aggregates.js';
import { downloadGrid, downloadData, download } from '../exports.js';
import { heatmapGrid } from '../render/index.js';
import { heatmap } from '../views/heatmap.js';
import { qkScatter } from '../views/qkmap.js';
import { FLOW_MAX_TOKENS } from '../flow-work.js';
import { stream, stopStream } from '../attnfile-client.js';

/** Each layer's weights as [n, n] head means, or null when some layer's are not all here (a big file read per layer). */
function headMeans(trace) {
  const n = trace.n;
  const out = [];
  for (const ly of trace.layers) {
    const w = ly.attention?.weights;
    const H = w ? w.length / (n * n) : 0;
    if (!Number.isInteger(H) || H < 1) return null;
    out.push(meanOverHeads(w, H, n));
  }
  return out.length ? out : null;
}

/** createFlow({ compute, trace, whenComplete }) wires the panel (#flow-qk); trace() is the page's trace now. */
export function createFlow({ compute, state, trace, whenComplete }) {
  const root = $('flow-qk');
  const box = (name) => root.querySelector(`[data-box="${name}"]`);
  const results = {}; // flow, qk: the last of each
  let running = null;
  let stopFile = null; // stops a big attention file's head means being read

  /** A big attention file's head means of every layer, read head by head in the worker (web/attnfile-stream.js). */
  async function fileMeans(file) {
    box('flow-status').textContent = t('h29l.reading', { what: t('h29l.flow') });
    const bar = box('flow-progress');
    bar.hidden = false;
    bar.value = 0;
    box('flow-cancel').hidden = false;
    stopFile = () => stopStream(file, { op: 'means' });
    try {
      return (await stream(file, { op: 'means' }, (f) => { bar.value = f; })).means;
    } catch (e) {
      box('flow-status').textContent = e.name === 'AbortError' ? t('inside.cancelled') : t('inside.failed', { message: e.message });
      return null;
    } finally {
      bar.hidden = true;
      box('flow-cancel').hidden = true;
      stopFile = null;
    }
  }

  async function call(name, op, args, progress) {
    box(`${name}-status`).textContent = t('inside.working');
    const bar = progress ? box(`${name}-progress`) : null;
    if (bar) { bar.hidden = false; bar.value = 0; }
    const p = compute.call('inside', { state: { ...state }, op, args }, (f) => { if (bar) bar.value = f; });
    if (progress) { running = p; box(`${name}-cancel`).hidden = false; }
    try {
      const { value, ms } = await p;
      box(`${name}-status`).textContent = t('inside.done', { ms: Math.round(ms) });
      return value;
    } catch (e) {
      box(`${name}-status`).textContent = e.name === 'AbortError' ? t('inside.cancelled') : t('inside.failed', { message: e.message });
      return null;
    } finally {
      if (bar) bar.hidden = true;
      if (progress) box(`${name}-cancel`).hidden = true;
      if (running === p) running = null;
    }
  }

  function drawFlow() {
    const r = results.flow;
    const width = Math.max(240, Math.min(root.clientWidth / 2 - 12, 420));
    const map = (name, values, title) => heatmap({
      values, rows: r.n, cols: r.n, map: colors.weights, kind: 'weights', domain: [0, Math.max(1e-9, ...values)],
      rowLabels: r.tokens, colLabels: r.tokens, rowName: t('flow.output'), colName: t('flow.input'), title,
      width, cellMax: 30, legendLabel: t('flow.share'), dataset: { kind: name },
    });
    replace(box('flow'), h('div', { class: 'flow-pair' },
      map('rollout', r.rollout, t('flow.rolloutTitle', { l: r.numLayers })),
      map('flow', r.flowNormalized, t('flow.flowTitle', { l: r.numLayers }))));
  }

  function flow() {
    whenComplete(async () => {
      const tr = trace();
      const n = tr?.n ?? 0;
      if (n > FLOW_MAX_TOKENS) { box('flow-status').textContent = t('flow.tooLong', { n, max: FLOW_MAX_TOKENS }); return; }
      const held = tr && headMeans(tr);
      const means = held ?? (tr?.file && !tr.file.whole ? await fileMeans(tr.file) : null);
      if (!means) { if (!tr?.file) box('flow-status').textContent = t('flow.needLayers'); return; }
      const v = await call('flow', 'flow', { layers: means, n }, true);
      if (!v) return;
      const flowNormalized = new Float32Array(n * n);
      for (let o = 0; o < n; o++) {
        let sum = 0;
        for (let j = 0; j < n; j++) sum += v.flow[o * n + j];
        for (let j = 0; j < n; j++) flowNormalized[o * n + j] = sum > 0 ? v.flow[o * n + j] / sum : 0;
      }
      results.flow = {
        tokens: tr.tokens, n, numLayers: means.length, rollout: rollout(means, 1, n)[means.length - 1], flow: v.flow, flowNormalized,
      };
      drawFlow();
    });
  }

  async function qk() {
    const layer = Number($('qk-layer').value);
    const head = Number($('qk-head').value);
    const texts = $('qk-texts').value.split('\n');
    const v = await call('qk', 'qk', { layer, head, texts }, false);
    if (!v) return;
    results.qk = v;
    drawQk();
  }
  function drawQk() {
    replace(box('qk'), qkScatter({ ...results.qk, width: root.clientWidth }));
  }

  // ---- exports
  function flowCsv(r) {
    const rows = ['output,input,output_token,input_token,rollout,flow,flow_normalized'];
    for (let o = 0; o < r.n; o++) {
      for (let j = 0; j < r.n; j++) {
        rows.push([o, j, JSON.stringify(r.tokens[o]), JSON.stringify(r.tokens[j]), r.rollout[o * r.n + j], r.flow[o * r.n + j], r.flowNormalized[o * r.n + j]].join(','));
      }
    }
    return `${rows.join('\n')}\n`;
  }
  function qkCsv(r) {
    const rows = ['kind,text,position,token,x,y'];
    for (const [kind, xy] of [['query', r.queries], ['key', r.keys]]) {
      r.points.forEach((p, i) => rows.push([kind, p.text, p.position, JSON.stringify(p.token), xy[2 * i], xy[2 * i + 1]].join(',')));
    }
    return `${rows.join('\n')}\n`;
  }
  function qkImage(format, file) {
    const svg = box('qk').querySelector('svg').cloneNode(true);
    // a standalone file: dark text (currentColor) on white, as presentation attributes (the page's CSP allows no inline style)
    svg.setAttribute('color', '#222');
    const bg = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    for (const [k, v] of Object.entries({ width: '100%', height: '100%', fill: '#fff' })) bg.setAttribute(k, v);
    svg.prepend(bg);
    for (const g of svg.querySelectorAll('.qk-point')) g.removeAttribute('tabindex');
    const text = new XMLSerializer().serializeToString(svg);
    const blob = new Blob([text], { type: 'image/svg+xml' });
    if (format === 'svg') { download(blob, file, 1000); return; }
    const W = Number(svg.getAttribute('width'));
    const img = new Image();
    const url = URL.createObjectURL(blob);
    img.onload = () => {
      const c = h('canvas', { width: 2 * W, height: 2 * W });
      const g = c.getContext('2d');
      g.fillStyle = '#fff';
      g.fillRect(0, 0, 2 * W, 2 * W);
      g.drawImage(img, 0, 0, 2 * W, 2 * W);
      URL.revokeObjectURL(url);
      c.toBlob((b) => download(b, file, 1000), 'image/png');
    };
    img.src = url;
  }
  function exportResult(name, format) {
    const r = results[name];
    if (!r) return;
    const file = `attnscope-${name === 'qk' ? 'qk-map' : 'flow'}.${format}`;
    if (format === 'csv' || format === 'json') {
      downloadData(format, file, format === 'json' ? r : (name === 'qk' ? qkCsv(r) : flowCsv(r)));
    } else if (name === 'qk') qkImage(format, file);
    else {
      const matrix = new Float32Array(2 * r.n * r.n);
      matrix.set(r.rollout);
      matrix.set(r.flowNormalized, r.n * r.n);
      downloadGrid(heatmapGrid({
        tokens: r.tokens, matrix, rows: r.n, cols: r.n, palette: colors.weights, legend: t('flow.share'),
        panelTitles: [t('flow.rolloutTitle', { l: r.numLayers }), t('flow.flowTitle', { l: r.numLayers })], columns: 2,
      }), file, format);
    }
  }

  root.addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b || !root.contains(b)) return;
    if (b.dataset.flowExport) exportResult(b.dataset.flowExport, b.dataset.format);
    else if (b.id === 'flow-run') flow();
    else if (b.id === 'qk-run') qk();
    else if (b.dataset.cancel && running) compute.cancel(running);
    else if (b.dataset.cancel && stopFile) stopFile();
  });

  return {
    /** A new trace: says whether flow can run for it; the head inputs follow the model's shape. */
    trace(tr) {
      const n = tr?.n ?? 0;
      const L = tr?.layers?.length ?? 0;
      $('flow-run').disabled = n > FLOW_MAX_TOKENS;
      box('flow-limit').textContent = n > FLOW_MAX_TOKENS ? t('flow.tooLong', { n, max: FLOW_MAX_TOKENS }) : '';
      $('qk-layer').max = Math.max(0, L - 1);
      $('qk-head').max = Math.max(0, (tr?.numHeads ?? 1) - 1);
      if (Number($('qk-layer').value) > L - 1) $('qk-layer').value = 0;
      if (Number($('qk-head').value) > (tr?.numHeads ?? 1) - 1) $('qk-head').value = 0;
    },
  };
}
