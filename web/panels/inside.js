// Panel 9: looking inside (issue 27) — the logit lens table, heads knocked out by clicking them (next-token top-k
// and loss beside the unablated run), the ablation sweep (progress bar, Cancel) and activation patching between a
// clean and a corrupted prompt (with the worked examples of web/inside-presets.js), and the head detectors as a sortable table. All work runs in the compute worker
// (web/inside-work.js through the 'inside' request); this module holds the panel's own inputs and results and draws
// them with web/views/inside.js. Exports: CSV and JSON of every result, SVG and PNG of the tables' heatmaps.
import { $, h, replace } from '../dom.js';
import { t } from '../i18n.js';
import * as colors from '../colors.js';
import { downloadGrid, downloadData } from '../exports.js';
import { heatmapGrid } from '../render/index.js';
import {
  lensTable, headGrid, ablationResult, valueTable, detectorsTable,
} from '../views/inside.js';
import { IOI, REVERSE } from '../inside-presets.js';


/** createInside({ compute, state }) wires the panel (#inside) to the worker; state is the page state (read only). */
export function createInside({ compute, state }) {
  const root = $('inside');
  const off = new Set();
  const results = {}; // lens, ablate, sweep, patch: the last result of each, with what it was asked for
  let running = null; // the call in flight (a sweep or a patch): cancel(running)
  const shape = { numLayers: 0, numHeads: 0 };

  const box = (name) => root.querySelector(`[data-box="${name}"]`);
  const setStatus = (name, text) => { box(`${name}-status`).textContent = text; };
  const snapshot = () => ({ ...state });

  async function call(name, op, args, { progress = false } = {}) {
    setStatus(name, t('inside.working'));
    const bar = progress ? box(`${name}-progress`) : null;
    const cancel = progress ? box(`${name}-cancel`) : null;
    if (bar) { bar.hidden = false; bar.value = 0; }
    const p = compute.call('inside', { state: snapshot(), op, args }, (f) => { if (bar) bar.value = f; });
    if (cancel) {
      cancel.hidden = false;
      running = p;
    }
    try {
      const { value, ms } = await p;
      setStatus(name, t('inside.done', { ms: Math.round(ms) }));
      return value;
    } catch (e) {
      setStatus(name, e.name === 'AbortError' ? t('inside.cancelled') : t('inside.failed', { message: e.message }));
      return null;
    } finally {
      if (bar) bar.hidden = true;
      if (cancel) cancel.hidden = true;
      if (running === p) running = null;
    }
  }

  function drawHeads() {
    replace(box('heads'), headGrid({
      numLayers: shape.numLayers, numHeads: shape.numHeads, off, onToggle: (l, hd) => {
        const k = `${l}.${hd}`;
        if (off.has(k)) off.delete(k); else off.add(k);
        drawHeads();
        root.querySelector(`.inside-head[data-layer="${l}"][data-head="${hd}"]`)?.focus();
        ablate();
      },
    }));
  }

  async function lens() {
    const r = await call('lens', 'lens', { k: 5 });
    if (!r) return;
    results.lens = r;
    replace(box('lens'), lensTable(r));
  }

  async function ablate() {
    if (!off.size) {
      replace(box('ablate'));
      setStatus('ablate', t('inside.pickHeads'));
      return;
    }
    const heads = [...off].map((k) => k.split('.').map(Number)).map(([layer, head]) => ({ layer, head }));
    const r = await call('ablate', 'ablate', { heads });
    if (!r) return;
    results.ablate = { heads, ...r };
    replace(box('ablate'), ablationResult(r));
  }

  let sortBy = 'previousToken';
  function drawDetectors() {
    replace(box('heads-table'), detectorsTable(results.heads, sortBy, (key) => {
      sortBy = key;
      drawDetectors();
      root.querySelector(`.inside-sort[data-sort="${key}"]`)?.focus();
    }));
  }
  async function detectors() {
    const r = await call('detectors', 'heads', {});
    if (!r) return;
    results.heads = r;
    drawDetectors();
  }

  async function sweep() {
    const r = await call('sweep', 'sweep', {}, { progress: true });
    if (!r) return;
    results.sweep = r;
    const m = Math.max(1e-9, ...Array.from(r.delta, Math.abs));
    replace(box('sweep'), valueTable({
      name: 'sweep', caption: t('inside.sweepCaption', { base: r.base.toFixed(4) }), values: r.delta, rows: r.numLayers, cols: r.numHeads,
      colLabels: Array.from({ length: r.numHeads }, (_, hd) => `${t('inside.head')} ${hd}`), map: colors.signed, domain: [-m, m],
      format: (v) => v.toFixed(3),
    }), h('ol', { class: 'inside-ranking', dataset: { name: 'ranking' } }, ...r.ranking.slice(0, 5).map((x) => h('li', {
      text: t('inside.rank', { layer: x.layer, head: x.head, delta: `${x.delta >= 0 ? '+' : ''}${x.delta.toFixed(4)}` }),
    }))));
  }

  async function patch() {
    const args = {
      clean: $('inside-clean').value, corrupted: $('inside-corrupted').value,
      tokens: [$('inside-token-a').value, $('inside-token-b').value], granularity: $('inside-granularity').value,
    };
    const r = await call('patch', 'patch', args, { progress: true });
    if (!r) return;
    results.patch = { ...args, ...r };
    const lo = Math.min(0, ...r.normalized);
    const hi = Math.max(1, ...r.normalized);
    replace(box('patch'), valueTable({
      name: 'patch', caption: t('inside.patchCaption', { clean: r.clean.toFixed(3), corrupted: r.corrupted.toFixed(3) }),
      values: r.normalized, rows: r.numLayers, cols: r.cols,
      colLabels: r.granularity === 'head' ? Array.from({ length: r.cols }, (_, hd) => `${t('inside.head')} ${hd}`) : r.tokens,
      map: colors.weights, domain: [lo, hi], format: (v) => v.toFixed(2),
    }));
  }

  // ---- exports: CSV / JSON of every result; SVG / PNG of the lens, sweep and patch heatmaps
  function grid(name) {
    const r = results[name];
    if (name === 'lens') {
      const values = Float32Array.from(r.layers.flatMap((l) => Array.from({ length: r.tokens.length }, (_, p) => l.probs[p * r.k])));
      return { title: t('inside.lensCaption', { k: r.k }), rows: r.layers.map((_, i) => `${t('inside.layer')} ${i}`), cols: r.tokens, values, domain: [0, 1], palette: colors.weights };
    }
    const v = name === 'sweep' ? r.delta : r.normalized;
    const cols = name === 'sweep' || r.granularity === 'head'
      ? Array.from({ length: name === 'sweep' ? r.numHeads : r.cols }, (_, hd) => `${t('inside.head')} ${hd}`) : r.tokens;
    const m = Math.max(1e-9, ...Array.from(v, Math.abs));
    return {
      title: name, rows: Array.from({ length: r.numLayers }, (_, i) => `${t('inside.layer')} ${i}`), cols, values: v,
      domain: name === 'sweep' ? [-m, m] : [Math.min(0, ...v), Math.max(1, ...v)], palette: name === 'sweep' ? colors.signed : colors.weights,
    };
  }
  function csv(name) {
    const r = results[name];
    const lines = [];
    if (name === 'lens') {
      lines.push('layer,position,token,rank,id,text,prob');
      r.layers.forEach((l, i) => r.tokens.forEach((tok, p) => {
        for (let j = 0; j < r.k; j++) lines.push([i, p, JSON.stringify(tok), j + 1, l.ids[p * r.k + j], JSON.stringify(l.tokens[p * r.k + j]), l.probs[p * r.k + j]].join(','));
      }));
    } else if (name === 'heads') {
      lines.push('layer,head,previous_token,duplicate_token,sink_share,induction');
      r.previousToken.forEach((v, i) => lines.push([Math.floor(i / r.numHeads), i % r.numHeads, v, r.duplicateToken[i], r.sinkShare[i], r.induction?.[i] ?? ''].join(',')));
    } else if (name === 'ablate') {
      lines.push('run,rank,id,token,prob');
      for (const side of ['before', 'after']) {
        r[side].next.ids.forEach((id, j) => lines.push([side, j + 1, id, JSON.stringify(r[side].next.tokens[j]), r[side].next.probs[j]].join(',')));
        lines.push([side, 'loss', '', '', r[side].loss ?? ''].join(','));
      }
    } else {
      const g = grid(name);
      lines.push(`layer,column,${name === 'sweep' ? 'delta_loss' : 'normalized'}`);
      g.values.forEach((v, i) => lines.push([Math.floor(i / g.cols.length), JSON.stringify(g.cols[i % g.cols.length]), v].join(',')));
    }
    return `${lines.join('\n')}\n`;
  }
  function exportResult(name, format) {
    const r = results[name];
    if (!r) return;
    const file = `attnscope-${name}.${format}`;
    if (format === 'json' || format === 'csv') {
      downloadData(format, file, format === 'csv' ? csv(name) : r);
      return;
    }
    const g = grid(name);
    downloadGrid(heatmapGrid({
      title: g.title, tokens: g.rows, keyTokens: g.cols, matrix: g.values, rows: g.rows.length, cols: g.cols.length, domain: g.domain, palette: g.palette, legend: name,
    }), file, format);
  }

  // a worked example fills the form; one made for a bundled model (REVERSE) switches the page to that model and its
  // clean prompt first, through the picker and the text box as a person would (web/controls.js does the rest)
  function preset(p) {
    $('inside-clean').value = p.clean;
    $('inside-corrupted').value = p.corrupted;
    [$('inside-token-a').value, $('inside-token-b').value] = p.tokens;
    if (!p.model) return;
    if (state.mode !== 'text') document.querySelector('input[name=mode][value=text]')?.click();
    if (state.model !== p.model) {
      $('model').value = p.model;
      $('model').dispatchEvent(new Event('change'));
      $('text').value = p.clean;
      $('text').dispatchEvent(new Event('input'));
    }
  }

  root.addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b || !root.contains(b)) return;
    if (b.dataset.insideExport) exportResult(b.dataset.insideExport, b.dataset.format);
    else if (b.id === 'inside-lens') lens();
    else if (b.id === 'inside-sweep') sweep();
    else if (b.id === 'inside-detectors') detectors();
    else if (b.id === 'inside-patch') patch();
    else if (b.id === 'inside-clear') { off.clear(); drawHeads(); ablate(); }
    else if (b.id === 'inside-ioi') preset(IOI);
    else if (b.id === 'inside-reverse') preset(REVERSE);
    else if (b.dataset.cancel && running) compute.cancel(running);
  });

  return {
    /** A new trace: the head grid follows the model's shape (clicked heads are kept while it does not change). */
    trace(trace) {
      const numLayers = trace.layers?.length ?? 0;
      const numHeads = trace.numHeads ?? 0;
      if (numLayers !== shape.numLayers || numHeads !== shape.numHeads) {
        Object.assign(shape, { numLayers, numHeads });
        off.clear();
        drawHeads();
      }
    },
  };
}
