// Page boot and wiring (layer: web): makes the store, the link, the compute client, the render scheduler, the
// panels, the controls and the model picker, and connects them so data flows one way — controls and panels change
// the store; what each change triggers (web/store.js TRIGGERS) runs a recompute, a redraw, a family view or the
// link; the worker's traces go into the store and are drawn. Holds no math (numbers come from the attnscope module
// in ./worker.js) and no view (web/panels/, web/views/). Text is only ever written with textContent.
import { $ } from './dom.js';
import { takeWorker, startWorker, describeWorkerError } from './boot.js'; // first: it starts the compute worker before the rest of the page runs
import { DEFAULTS } from './state.js';
import { createStore } from './store.js';
import { createUrl } from './url.js';
import { createCompute } from './compute.js';
import { createScheduler } from './scheduler.js';
import { createFamily } from './family.js';
import { createModels } from './models.js';
import { createControls, TEXT_IDS } from './controls.js';
import { showStatus, showError, clearError } from './status.js';
import { exportView, exportTrace } from './exports.js';
import { traceHas, mergeCompletion, shownLayer } from './viewmodel.js';
import { useLanguage, applyPageStrings } from './language.js';
import { t, detectLanguage, onLanguageChange } from './i18n.js';
import './locales/en.js';
import './locales/zh-CN.js';
import { input, example } from './panels/input.js';
import { embeddings } from './panels/embeddings.js';
import { positional } from './panels/positional.js';
import { rope } from './panels/rope.js';
import { attention } from './panels/attention.js';
import { causal } from './panels/causal.js';
import { steps } from './panels/steps.js';
import { model } from './panels/model.js';
import { drawFamily } from './panels/family.js';
import { forgetWords } from './panels/common.js';
import {
  needsModel, fileInput, fileModel, shownLayerHeld,
} from './panels/file.js';
import { createFiles } from './files.js';
import { streamedRollout, streamedModel } from './panels/file-stream.js';
import { connectFileStream, streamedValue } from './attnfile-client.js';
import { compare, lastComparison } from './panels/compare.js';
import { createInside } from './panels/inside.js';
import { translate } from './panels/translate.js';
import { createFlow } from './panels/flow.js';
import { createHeadTint } from './panels/head-tint.js';
import { shortOnly, longAttention, longModel } from './panels/long.js';
import { createPair } from './panels/pair.js';

const store = createStore(location.hash);
const { state, view, data } = store;
const url = createUrl(state);
const sent = []; // what each run asked for (window.__attnscope.requests; the last 50)
const afterComplete = []; // what waits for the trace to be complete (exports)
let completing = 0; // the trace serial a completion was asked for

// ---- the parts

const compute = createCompute({
  // only what the panels on or near the screen draw; the rest is asked for when the page is idle (completeTrace).
  // The first run: the attention maps too, wherever they are (the page's first picture)
  next: () => {
    const ctx = { state, view, trace: data.trace }; // what panels' needs(ctx) read, before a run has made a context
    return { state: { ...state }, need: { all: scheduler.wanted(ctx, 'all'), full: !data.trace || scheduler.wanted(ctx, 'full') } };
  },
  onRun,
  onReady(info) {
    Object.assign(data.info, { ...info, ready: true, failed: false, pretrained: !!info.pretrained, bundled: info.bundled ?? [] });
    document.documentElement.dataset.simd = String(info.simd);
    models.fill();
    status();
  },
  onBusy: () => scheduler.busy(),
  start(onMessage, onError) {
    const w = startWorker();
    w.addEventListener('message', onMessage);
    w.addEventListener('error', onError);
    return w;
  },
  onFailed(e, started) {
    data.info.failed = true;
    showError(data, t(started ? 'error.workerDied' : 'error.worker', { message: describeWorkerError(e, started) }));
    status();
  },
  onRestart(e) { // the text, the settings and the views drawn stay; the run in flight is computed again
    Object.assign(data.info, { ready: false, restarted: describeWorkerError(e, true) });
    status();
  },
  onSent(need, completion) {
    sent.push({ need, completion });
    if (sent.length > 50) sent.splice(0, sent.length - 50);
  },
});

// a trace read from an attention file has weights only: the panels that need the model say so (web/panels/file.js)
const panels = [fileInput(input), example, shortOnly(needsModel(embeddings, 'embeddings'), 'embeddings'), shortOnly(needsModel(positional, 'positional-view'), 'positional-view'), rope,
  longAttention(shownLayerHeld(streamedRollout(attention))), shortOnly(needsModel(causal, 'causal-view'), 'causal-view'), translate, shortOnly(needsModel(steps, 'steps'), 'steps'), longModel(streamedModel(fileModel(model))), shortOnly(shownLayerHeld(compare), 'compare-view')];
// (a long input's trace — web/long.js — holds summaries and the heads on screen: web/panels/long.js; only decoders run long, so the translation panel needs no wrapper)
const scheduler = createScheduler(panels, {
  context,
  prepare(ctx) {
    const { trace } = ctx;
    if (state.token >= trace.n) state.token = 0;
    // the encoder–decoder export buttons (cross-attention, the encoder's grid) exist only for traces that have them
    $('export-cross').hidden = trace.example || !trace.source || !trace.layers.some((ly) => ly.cross);
    $('export-encdec').hidden = trace.example || !trace.source?.layers;
  },
  has: (ctx, what) => traceHas(ctx.trace, state.layer, what),
  complete: completeTrace,
  computing: () => compute.busy(),
  newer: () => compute.newer(),
});

connectFileStream(compute); // a big attention file's rollout, model view and flow, streamed (web/attnfile-client.js)
const inside = createInside({ compute, state }); // panel 9: on demand, in the worker (web/inside-work.js)
const flow = createFlow({ compute, state, trace: () => data.trace, whenComplete }); // panel 9b: flow and the Q/K map
const tint = createHeadTint({ compute, state }); // the model view coloured by a head detector
createPair({ compute, state }); // english vs english-rope, in the compare panel: on demand, in the worker (web/pair-work.js)
const family = createFamily(state, (kind, f) => drawFamily(kind, f, state, (i) => store.update({ adQ: i })));
const controls = createControls(store, () => models.about());
const models = createModels(store, compute, {
  syncVisibility: () => controls.syncVisibility(),
  redraw: () => scheduler.render(),
  showError: (message) => showError(data, message),
  loaded() { // a checkpoint: the state says so already
    url.save();
    controls.sync();
    compute.schedule(0);
  },
});
const files = createFiles(store, compute, {
  opened() { // an attention file: the state says so already
    url.save();
    controls.sync();
    compute.schedule(0);
  },
});
const status = () => showStatus(data, (m) => (m === 'file' ? files.name() : models.name(m)));

/** What panels draw from: the trace and state now, the actions they may take. */
function context() {
  const { trace } = data;
  if (!trace) return null;
  return {
    trace, traceState: data.traceState, state, view, serial: data.serial, runs: data.runs, lang: document.documentElement.lang,
    checkpoint: data.info.checkpoint, // the loaded checkpoint (a new object per load)
    generation: models.generation, act, width: {},
    has: (what) => traceHas(trace, state.layer, what),
    keep: (id) => scheduler.keep(id),
    redraw: (id) => scheduler.drawNow(id),
  };
}

const act = {
  select: (i) => store.update({ token: i }),
  layer: (l, heads) => store.update(heads === undefined ? { layer: l } : { heads, layer: l }),
  heads: (heads) => store.update({ heads }, { frame: true }),
  next: (args) => compute.call('next', args).then((a) => a.value),
  rope: (args) => compute.call('rope', { args }).then((a) => a.value),
  translate: (args) => compute.call('translate', args).then((a) => a.value),
  refetch: () => compute.schedule(0), // a long trace lacks the map of a head now on screen
  ...models.act,
};

// ---- what a change triggers (web/store.js TRIGGERS)

store.on('recompute-now', () => compute.now());
store.on('link', () => url.save());
store.on('link-soon', () => url.saveSoon());
store.on('controls', () => controls.syncVisibility());
store.on('redraw', (o) => (o.frame ? requestAnimationFrame(() => scheduler.render()) : scheduler.render()));
store.on('refetch', () => { // the trace holds the shown layer's weights; its full trace is computed again
  const tr = data.trace;
  if (tr && !tr.layers[shownLayer(tr, state.layer)].full) compute.schedule(0);
});
store.on('recompute', (o) => compute.schedule(o.delay));
store.on('family:additive', () => family.request('additive'));
store.on('family:regression', () => family.request('regression'));
store.on('family-view:additive', () => family.redraw('additive'));
store.on('language', () => useLanguage(state.lang));

// ---- the worker's traces into the store

function onRun(answer, run) {
  if (run.completion) { // the same trace's missing layers
    if (run.serial !== data.serial) return;
    if (!answer.ok) {
      showError(data, answer.error.message);
      scheduler.fail();
      return;
    }
    mergeCompletion(data.trace, answer.value);
    forgetWords(data.trace);
    for (const f of afterComplete.splice(0)) f();
    return;
  }
  const finish = () => {
    data.runs += 1;
    if (answer.ok && run.state.mode === 'text' && data.info.bundled.some((m) => m.name === run.state.model)) models.heldout(run.state.model);
    if (data.runs === 1) {
      family.request('additive');
      family.request('regression');
    }
    document.documentElement.dataset.runs = String(data.runs);
    scheduler.settle(); // not while a newer input waits its turn, nor while panels of the newest trace are still to be drawn
    status();
  };
  if (!answer.ok) {
    if (!data.info.ready) data.info.failed = true; // the module could not start (the message says why)
    showError(data, answer.error.message);
    finish();
    return;
  }
  data.trace = answer.value;
  data.traceState = run.state;
  inside.trace(data.trace);
  flow.trace(data.trace);
  data.serial += 1;
  tint.trace(data.trace, data.serial);
  if (data.trace.complete) for (const f of afterComplete.splice(0)) f();
  if (data.follow) { // a token was just generated in the causal panel: show its row
    data.follow = false;
    state.token = (data.trace.nReal ?? data.trace.n) - 1;
    url.save();
  }
  clearError(data);
  scheduler.render((spent) => {
    Object.assign(data.timing, { compute: answer.ms, render: spent, total: performance.now() - run.t0 });
    finish();
  });
}

/** Asks the worker for the current trace's missing parts (every layer's weights, the shown layer in full); once per trace. */
function completeTrace() {
  const tr = data.trace;
  if (!tr || tr.complete || completing === data.serial) return;
  if (compute.complete(data.traceState, data.serial)) completing = data.serial;
}

/** Runs `fn` once the trace is complete: now, or when its completion comes. */
function whenComplete(fn) {
  if (!data.trace || data.trace.complete) return fn();
  afterComplete.push(fn);
  completeTrace();
}

// ---- the page's own buttons and events

function wire() {
  for (const b of document.querySelectorAll('button[data-export]')) {
    b.addEventListener('click', () => whenComplete(() => (data.trace?.long ? showError(data, t('long.noExport', { limit: data.trace.long.limit }))
      : exportView(data.trace, data.traceState, state, b.dataset.export, b.dataset.format, b.dataset.attention ?? 'self'))));
  }
  $('export').addEventListener('click', () => whenComplete(() => (data.trace?.long ? showError(data, t('long.noExport', { limit: data.trace.long.limit })) : exportTrace(data.trace, data.traceState))));
  $('copy-link').addEventListener('click', async () => {
    const b = $('copy-link');
    try {
      url.flush(); // a link written later (saveSoon) is written now
      await navigator.clipboard.writeText(location.href);
      b.textContent = t('header.linkCopied');
    } catch {
      b.textContent = t('header.copyFromBar');
    }
    setTimeout(() => { b.textContent = t('header.copyLink'); }, 1800);
  });
  url.onChange((next) => {
    Object.assign(state, next);
    useLanguage(detectLanguage(state.lang));
    controls.sync();
    compute.schedule(0);
    family.request('additive');
    family.request('regression');
  });
  let resizeTimer = 0;
  let lastW = window.innerWidth;
  window.addEventListener('resize', () => {
    if (window.innerWidth === lastW) return;
    lastW = window.innerWidth;
    clearTimeout(resizeTimer);
    scheduler.redrawDue();
    resizeTimer = setTimeout(() => { scheduler.render(); family.redraw('regression'); }, 150);
  });
}

onLanguageChange(() => {
  applyPageStrings();
  if (data.info.ready) models.fill();
  status();
  scheduler.render();
  for (const kind of family.drawn()) family.redraw(kind);
});

// ---- a read-only snapshot for tests and the console: window.__attnscope

Object.defineProperty(window, '__attnscope', {
  value: Object.freeze({
    get state() { return Object.freeze({ ...state }); },
    get traceState() { return data.traceState && Object.freeze({ ...data.traceState }); },
    get trace() { return data.trace; },
    get timing() { return Object.freeze({ ...data.timing }); },
    get info() { return Object.freeze({ ...data.info }); },
    get error() { return data.error; },
    get runs() { return data.runs; },
    /** what each run sent to the worker asked for: { need: { all, full }, completion } (the last 50) */
    get requests() { return sent.map((r) => Object.freeze({ need: Object.freeze({ ...r.need }), completion: r.completion })); },
    /** the attention-family views' last results and the parameters they were computed for */
    get family() { return family.snapshot(); },
    /** the compare panel's last comparison: { result: { mode, labels, U, a, b, diff } | null, error } */
    get compare() { return lastComparison(); },
    /** a big attention file's streamed rollout / model view / means (web/attnfile-client.js), or undefined */
    streamed: (op, layer) => (data.trace?.file ? streamedValue(data.trace.file, { op, layer }) : undefined),
    defaults: DEFAULTS,
    /** the compute worker's module memory, as.memoryStats(): { heapSize, allocated, … } (bench/page_soak.mjs) */
    memory: () => compute.call('memory', {}).then((r) => r.value),
    /** test hook: the compute worker dies of an uncaught error, as in a crash (the page restarts it) */
    crashWorker: () => compute.crash(),
  }),
});

// ---- boot

$('no-start').remove(); // the script runs: the note for a page whose script never ran goes
useLanguage(detectLanguage(state.lang));
// text typed into a box before this ran (the page shows them from its first paint) is kept, not replaced
const typedEarly = TEXT_IDS.filter((id) => $(id).value !== $(id).defaultValue);
for (const id of typedEarly) state[id] = $(id).value;
if (typedEarly.length) url.saveSoon();
controls.sync();
controls.wire();
wire();
// last: the worker's early messages (ready) update what the lines above set up
compute.attach(takeWorker(compute.onMessage, compute.onError));
// the first run is sent now, not from a timer: a timer's task ran only after the page's next style, layout and
// paint (and the browser's form scan at DOMContentLoaded), ~0.1-0.2 s of a warm load the worker sat waiting
compute.now();
