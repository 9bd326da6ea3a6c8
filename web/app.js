// Page wiring (layer: web): controls ⇄ state ⇄ URL hash, state → compute worker → trace → views.
// Holds no math: numbers come from the attnscope module (in ./worker.js, which imports only
// ../bindings/js/index.js), views take data and return elements (tensorflow/playground's split).
// Text from the user and from the module is only ever written with textContent.
import { takeWorker } from './boot.js'; // first: it starts the compute worker before the rest of the page runs
import {
  parse, serialize, selectedHeads, headsString, exampleEmbeddings, DEFAULTS, EXAMPLE_TOKENS,
} from './state.js';
import { h, replace, whenIdle } from './dom.js';
import { tokensView } from './views/tokens.js';
import { embeddingsView } from './views/embeddings.js';
import { positionalView } from './views/positional.js';
import { attentionView } from './views/attention.js';
import { stepsViewSliced } from './views/steps.js';
import { exampleInputs, exampleResults } from './views/example.js';
import { modelView, aggregateView } from './views/modelview.js';
import { additiveView } from './views/additive.js';
import { regressionView } from './views/regression.js';
import { checkpointBox } from './views/picker.js';
import { predictionsView } from './views/predictions.js';
import { headLegend } from './views/heads.js';
import { causalView } from './views/causal.js';
import {
  meanOverHeads, maxOverHeads, rollout, headEntropy, headDistance, filterLinks, mergeWords, wordGroups,
} from './aggregates.js';
import * as colors from './colors.js';
import {
  t, detectLanguage, setLanguage, language, onLanguageChange, applyI18n,
} from './i18n.js';
import './locales/en.js';
import './locales/zh-CN.js';
import {
  figureOf, figureSvg, figureRaster, toCsv, toJson,
} from './render/index.js';

const $ = (id) => document.getElementById(id);
const state = parse(location.hash);
const info = { simd: null, version: null, model: null, ready: false, pretrained: false, bundled: [], checkpoint: null };
if (state.model === 'checkpoint') state.model = 'random'; // the user's files are not in a link
const timing = { compute: null, render: null, total: null };
let trace = null;
let traceState = null;
let runs = 0;
let lastError = null;

// ---- the worker: latest request wins; a newer request while one runs is sent when it finishes

// started by boot.js (imported first) so that it loads while the rest of this module graph runs
let worker = null;
let seq = 0;
let inflight = null;
let pending = false;
let timer = 0;

function schedule(delay = 120) {
  clearTimeout(timer);
  document.documentElement.dataset.busy = '1';
  timer = setTimeout(request, delay);
}

function request() {
  timer = 0; // due: a run is no longer only scheduled
  if (inflight) {
    pending = true;
    return;
  }
  // only what the panels on screen draw; the rest is asked for when the page is idle (completeTrace)
  // the first run: the attention maps too, wherever they are (the page's first picture; renderAll)
  const need = { all: wanted('all'), full: !trace || wanted('full') };
  inflight = { id: ++seq, t0: performance.now(), state: { ...state }, need };
  document.documentElement.dataset.busy = '1';
  worker.postMessage({ id: inflight.id, state: inflight.state, need });
  asked(need, false);
}
const sent = []; // what each run asked for (window.__attnscope.requests; the last 50)
function asked(need, completion) {
  sent.push({ need, completion });
  if (sent.length > 50) sent.splice(0, sent.length - 50);
}

/**
 * Asks the worker for the current trace's missing parts (every layer's weights, the shown layer in full): the
 * same input run again, its layers merged into the trace when they come (onWorkerMessage). Once per trace.
 */
function completeTrace() {
  if (!trace || trace.complete || completing === traceSerial || inflight || pending || timer) return;
  completing = traceSerial;
  inflight = { id: ++seq, t0: performance.now(), state: { ...traceState }, need: { all: true, full: true }, serial: traceSerial };
  worker.postMessage({ id: inflight.id, state: inflight.state, need: inflight.need });
  asked(inflight.need, true);
}
let completing = 0; // the traceSerial a completion was asked for

/**
 * What a panel's draw needs of the trace: 'all' (every layer's weights), 'full' (the shown layer in full),
 * 'layer' (the shown layer's weights: the attention maps draw from them at once when the layer changes, and
 * its masked cells when the full trace comes).
 */
function needsOf(id) {
  if (id === 'panel-model') return ['all'];
  if (id === 'panel-attention') return view.words || state.agg === 'rollout' ? ['all', 'layer'] : ['layer'];
  if (id === 'panel-steps' || id === 'panel-causal') return ['full'];
  return [];
}
function has(tr, what) {
  if (tr.complete) return true;
  const shown = tr.layers[Math.min(state.layer, tr.layers.length - 1)];
  if (what === 'full') return !!shown?.full;
  if (what === 'layer') return !!shown?.attention?.weights;
  return tr.layers.every((ly) => ly.attention?.weights) && (!tr.source?.layers || tr.source.layers.every((ly) => ly.attention?.weights));
}
/** Whether a run now should include `what` ('all' | 'full'): some panel on or near the screen draws it. */
function wanted(what) {
  return [...document.querySelectorAll('main section.panel')].some((el) => {
    const needs = needsOf(el.id);
    if (el.hidden || !(needs.includes(what) || (what === 'full' && needs.includes('layer')))) return false;
    return onScreen(el, NEAR);
  });
}
/** Whether `el` is in the viewport, or within `margin` viewport heights of it (a hidden one counts: 0 × 0). */
function onScreen(el, margin = 0) {
  const vh = window.innerHeight;
  const r = el.getBoundingClientRect();
  return r.height === 0 || (r.bottom > -margin * vh && r.top < (1 + margin) * vh);
}

function onWorkerMessage(e) {
  const msg = e.data;
  if (msg.type === 'started') return; // the worker is up (web/boot.js waits for it)
  if (msg.type === 'ready') {
    Object.assign(info, {
      simd: msg.simd, version: msg.version, model: msg.model, ready: true, pretrained: !!msg.pretrained, bundled: msg.bundled ?? [],
    });
    document.documentElement.dataset.simd = String(msg.simd);
    fillPicker();
    showStatus();
    return;
  }
  if (msg.type === 'progress' || msg.kind) {
    onSideMessage(msg);
    return;
  }
  const req = inflight;
  inflight = null;
  if (pending) {
    pending = false;
    request(); // stale: draw only the newest
    return;
  }
  if (req.serial) { // a completion: the same trace's missing layers
    if (req.serial !== traceSerial) return;
    if (!msg.ok) {
      showError(msg.error.message);
      deferred?.fail();
      return;
    }
    mergeTrace(msg.trace);
    for (const f of afterComplete.splice(0)) f();
    return;
  }
  const finish = () => {
    runs += 1;
    if (msg.ok && req.state.mode === 'text' && info.bundled.some((m) => m.name === req.state.model)) measureHeldout(req.state.model);
    if (runs === 1) {
      familyRequest('additive');
      familyRequest('regression');
    }
    document.documentElement.dataset.runs = String(runs);
    // not while a newer input waits its turn, nor while views of the newest trace are still to be drawn
    if (!inflight && !pending && !timer && !renderOpen) delete document.documentElement.dataset.busy;
    showStatus();
  };
  if (msg.ok) {
    trace = msg.trace;
    traceSerial += 1;
    if (trace.complete) for (const f of afterComplete.splice(0)) f();
    traceState = req.state;
    causal.key = null;
    if (causal.follow) { // a token was just generated: show its row
      causal.follow = false;
      state.token = (trace.nReal ?? trace.n) - 1;
      saveHash();
    }
    clearError();
    renderAll((spent) => {
      timing.compute = msg.ms;
      timing.render = spent;
      timing.total = performance.now() - req.t0;
      finish();
    });
  } else {
    showError(msg.error.message);
    finish();
  }
}

/** Merges a completion's layers (every layer's weights, the shown layer in full) into the drawn trace. */
function mergeTrace(full) {
  trace.layers = full.layers;
  if (trace.source && full.source) trace.source.layers = full.source.layers;
  trace.complete = true;
  wordTraces.delete(trace);
}
const afterComplete = []; // what waits for the trace to be complete (exports)
/** Runs `fn` once the trace is complete: now, or when its completion comes. */
function whenComplete(fn) {
  if (!trace || trace.complete) return fn();
  afterComplete.push(fn);
  completeTrace();
}

/** The compute worker boot.js started, its early messages replayed now. */
function startWorker() {
  return takeWorker(onWorkerMessage, (e) => {
    showError(t('error.worker', { message: e.message || t('error.seeConsole') }));
  });
}

// ---- the attention-family worker (additive attention, kernel regression): one request per kind in
// flight, the newest parameters sent when it returns, and at most one draw per animation frame — so
// dragging the bandwidth slider never queues stale work. Started after the first model result, so its
// module instance does not compete with the first trace for the CPU.

let family = null;
const fam = {
  additive: { busy: false, dirty: false, frame: false, result: null, error: null, runs: 0, params: null },
  regression: { busy: false, dirty: false, frame: false, result: null, error: null, runs: 0, params: null },
};
let famSeq = 0;

function familyParams(kind) {
  const s = state;
  if (kind === 'additive') {
    return { nq: s.adNq, nk: s.adNk, hidden: s.adHidden, validLen: Math.min(s.adValid, s.adNk), seed: s.adSeed };
  }
  return { w: s.krW, seed: s.krSeed };
}

function familyRequest(kind) {
  const f = fam[kind];
  if (f.busy) {
    f.dirty = true;
    return;
  }
  f.busy = true;
  f.dirty = false;
  f.params = familyParams(kind);
  document.documentElement.dataset[`${kind}Busy`] = '1';
  familyWorker().postMessage({ id: ++famSeq, kind, params: f.params });
}

function familyWorker() {
  if (family) return family;
  family = new Worker(new URL('./family-worker.js', import.meta.url), { type: 'module' });
  family.addEventListener('message', onFamilyMessage);
  family.addEventListener('error', (e) => {
    for (const kind of Object.keys(fam)) {
      fam[kind].error = t('error.familyWorker', { message: e.message || t('error.seeConsole') });
      renderFamily(kind);
    }
  });
  return family;
}

function onFamilyMessage(e) {
  const msg = e.data;
  if (msg.type === 'ready') return;
  const f = fam[msg.kind];
  f.busy = false;
  if (f.dirty) {
    familyRequest(msg.kind); // stale: draw only the newest
    return;
  }
  f.result = msg.ok ? msg.result : f.result;
  f.error = msg.ok ? null : msg.error.message;
  if (f.frame) return; // a draw is already due this frame: it draws this newer result
  f.frame = true;
  requestAnimationFrame(() => {
    f.frame = false;
    renderFamily(msg.kind);
    f.runs += 1;
    document.documentElement.dataset[`${msg.kind}Runs`] = String(f.runs);
    if (!f.busy) delete document.documentElement.dataset[`${msg.kind}Busy`];
  });
}

function renderFamily(kind) {
  const f = fam[kind];
  const el = $(`${kind}-view`);
  const parts = [];
  if (f.error) parts.push(h('div', { class: 'error', role: 'alert' }, h('strong', { text: t('error.prefix') }), f.error));
  if (f.result) {
    parts.push(kind === 'additive'
      ? additiveView({ result: f.result, query: state.adQ, onQuery: (i) => { state.adQ = i; saveHash(); renderFamily('additive'); } })
      : regressionView({ result: f.result, width: widthOf('regression-view') }));
  }
  replace(el, parts);
  el.classList.toggle('stale', !!f.error);
}

// ---- the model picker: bundled models and the user's checkpoint (feature-detected), generation.
// Loading and generating go to the compute worker as their own requests; the current model stays on
// screen until a new one has loaded, and a failed load leaves it there with the error in the picker.

let picking = false; // "your own checkpoint…" chosen, no checkpoint loaded yet
const side = { id: 0, load: null, generating: false, play: 0, heldout: new Map(), about: new Map() }; // heldout: name -> { id, fraction, result, error }; about: name -> what config.json adds to bundledModels (loadAbout)
const box = checkpointBox({ onFiles: loadCheckpoint });
$('checkpoint-box').append(box.el);

function modelName(name) {
  if (name === 'checkpoint') return info.checkpoint ? t('model.checkpointNamed', { label: info.checkpoint.label }) : t('model.yourCheckpoint');
  return name;
}

/** The picker's options as the module offers them: trained models and checkpoints only when present. */
function fillPicker() {
  const group = $('model-bundled');
  const drawable = new Set(['encoder', 'decoder', 'encoder-decoder']); // transformer traces the views draw
  group.replaceChildren(...info.bundled.map((m) => h('option', {
    value: m.name, disabled: !drawable.has(m.architecture), 'data-no-i18n': '', // the model's name and task: its data
    text: drawable.has(m.architecture) ? `${m.name}${m.task ? ` — ${m.task}` : ''}` : t('controls.notDrawn', { name: `${m.name}${m.task ? ` — ${m.task}` : ''}` }),
  })));
  group.hidden = !info.bundled.length;
  $('model-own').hidden = !info.pretrained;
  const known = state.model === 'random' || (state.model === 'checkpoint' && info.checkpoint) || info.bundled.some((m) => m.name === state.model);
  if (!known) change('model', 'random', 0);
  $('model').value = picking ? 'checkpoint' : state.model;
  syncVisibility();
}

/** A bundled model's paragraph and its held-out score, measured in the page once per model. */
function showAbout() {
  const about = info.bundled.find((m) => m.name === state.model);
  if (!about) return;
  const score = side.heldout.get(about.name);
  let line = '';
  if (score?.result?.metric === 'exact') {
    const { correct, total, ms } = score.result;
    line = t('heldout.exact', { correct, total, pct: (100 * correct / total).toFixed(1), s: (ms / 1000).toFixed(1) });
  } else if (score?.result?.metric === 'loss') {
    const { loss, count, texts, reference, ms } = score.result;
    line = t('heldout.loss', { loss: loss.toFixed(3), count, texts, reference: reference ?? '—', s: (ms / 1000).toFixed(1) });
  } else if (score?.error) line = t('heldout.error', { message: score.error });
  else if (score && !score.result) line = t('heldout.measuring', { pct: Math.round(100 * (score.fraction ?? 0)) });
  const more = side.about.get(about.name);
  if (!more) loadAbout(about.name);
  // the model's own task and description (its config.json, written in English, or in the page's language when
  // config.json's `descriptions` has it): data, not UI text
  const local = more?.descriptions?.[language()];
  replace($('model-about'), local ? h('span', { text: local, lang: language(), 'data-no-i18n': '' })
    : h('span', { text: `${about.task ? `${about.task}. ` : ''}${about.description ?? ''}`, lang: 'en', 'data-no-i18n': '' }),
    line ? h('strong', { class: 'heldout', dataset: { name: 'heldout' }, text: ` ${line}` }) : null,
    more?.heads ? headLegend({
      heads: more.heads, layer: state.layer, selected: selectedHeads(state, more.numHeads),
      onSelect: (l, hd) => { state.heads = headsString([hd], more.numHeads); showLayer(l); showAbout(); },
    }) : null,
    more?.examples?.length && state.mode === 'text' ? h('span', { class: 'examples' }, t('model.tryExample'), ' ',
      more.examples.map((ex) => h('button', {
        type: 'button', class: 'example', lang: more.lang ?? 'en', 'data-no-i18n': '', text: ex.replace(/\n/g, '⏎'),
        title: ex, onclick: () => { $('text').value = ex; change('text', ex, 0); },
      }))) : null);
}

/**
 * What a bundled model's config.json adds to its bundledModels entry, fetched once per model: its more heads
 * (`heads`, training/label_heads.py), example prompts and descriptions in other languages.
 */
async function loadAbout(name) {
  side.about.set(name, {});
  try {
    const r = await fetch(new URL(`../models/${encodeURIComponent(name)}/config.json`, import.meta.url));
    const c = r.ok ? await r.json() : {};
    // examples: prompts in the model's own language (chinese-poems reads Chinese characters only), offered as
    // buttons; the text box is changed only when one is clicked
    const examples = Array.isArray(c.examples) ? c.examples.filter((x) => typeof x === 'string' && x.length <= 200).slice(0, 4) : [];
    const descriptions = Object.fromEntries(Object.entries(c.descriptions && typeof c.descriptions === 'object' ? c.descriptions : {})
      .filter(([, v]) => typeof v === 'string'));
    side.about.set(name, {
      heads: Array.isArray(c.heads) ? c.heads : null, numHeads: c.numHeads, examples, descriptions, lang: typeof c.lang === 'string' ? c.lang : undefined,
    });
  } catch {
    return; // no legend: the page works without it
  }
  if (state.model === name) showAbout();
}

function measureHeldout(name) {
  if (side.heldout.has(name)) return;
  const id = ++side.id;
  side.heldout.set(name, { id, fraction: 0 });
  worker.postMessage({ id, kind: 'heldout', name });
}

function loadCheckpoint(files) {
  side.load = ++side.id;
  const names = [files.config, files.weights, files.tokenizer instanceof Blob ? files.tokenizer : files.tokenizer.vocab].map((f) => f.name);
  box.message(t('checkpoint.loading', { names: names.join(', ') }));
  box.progress(0);
  document.documentElement.dataset.loading = '1';
  worker.postMessage({ id: side.load, kind: 'load', files });
}

/** Shows an encoder–decoder preset's output up to k tokens (all when k reaches the end). */
function grow(k) {
  const total = trace?.generated?.count ?? 0;
  change('grow', k >= total ? 0 : k, 0);
}

function stopPlay() {
  clearInterval(side.play);
  side.play = 0;
}

/** Plays the output growing: one more token every 600 ms, from the first to the whole. */
function togglePlay() {
  if (side.play) {
    stopPlay();
    renderAll();
    return;
  }
  grow(1);
  side.play = setInterval(() => {
    const g = trace?.generated;
    if (!g || state.grow === 0) {
      stopPlay();
      renderAll();
      return;
    }
    if (!inflight && !pending && g.shown === state.grow) grow(state.grow + 1);
  }, 600);
}

function generate() {
  side.generating = true;
  worker.postMessage({ id: ++side.id, kind: 'generate', state: { ...state }, maxNewTokens: 8 });
  renderAll();
}

function onSideMessage(msg) {
  const score = [...side.heldout.values()].find((x) => x.id === msg.id);
  if (msg.type === 'progress') {
    if (msg.id === side.load) box.progress(msg.fraction);
    if (score) score.fraction = msg.fraction;
    showAbout();
    return;
  }
  if (msg.kind === 'heldout') {
    if (msg.ok) score.result = msg.result;
    else score.error = msg.error.message;
    showAbout();
    return;
  }
  if (msg.kind === 'load') {
    if (msg.id !== side.load) return;
    delete document.documentElement.dataset.loading;
    box.progress(null);
    if (!msg.ok) {
      box.message(t('checkpoint.failed', { message: msg.error.message, what: t(info.checkpoint || state.model !== 'checkpoint' ? 'checkpoint.previousStays' : 'checkpoint.nothingLoaded') }), true);
      return;
    }
    const c = msg.config;
    info.checkpoint = { config: c, label: t('model.checkpointLabel', { arch: c.architecture ?? '', layers: c.numLayers, heads: c.numHeads, d: c.dModel }) };
    box.message(t('checkpoint.loaded', { s: (msg.ms / 1000).toFixed(1), label: info.checkpoint.label }));
    picking = false;
    Object.assign(state, { model: 'checkpoint', heads: 'all', layer: 0, token: 0 }); // a newer checkpoint replaces the last
    saveHash();
    syncControls();
    schedule(0);
  } else if (msg.kind === 'next') {
    if (msg.id !== causal.asked) return;
    causal.next = msg.ok ? msg.next : { position: causal.position, error: msg.error.message };
    renderCausal();
  } else if (msg.kind === 'generate') {
    side.generating = false;
    causal.follow = msg.ok && !!msg.generated.text && msg.id === causal.generateId;
    if (!msg.ok) showError(msg.error.message);
    else if (msg.generated.text) {
      $('text').value = state.text + msg.generated.text;
      change('text', $('text').value, 0);
    }
    renderAll();
  }
}

// ---- status, errors

function showStatus() {
  const parts = [];
  if (!info.ready) parts.push(t('status.loading'));
  else parts.push(t('status.build', { build: t(info.simd ? 'status.simd' : 'status.scalar'), version: info.version }));
  if (traceState?.mode === 'text' && traceState.model !== 'random') parts.push(modelName(traceState.model));
  if (timing.compute != null) {
    parts.push(t('status.timing', { compute: timing.compute.toFixed(1), render: timing.render.toFixed(1) }));
  }
  $('status').textContent = parts.join(' · ');
}

function showError(message) {
  lastError = message;
  const el = $('error');
  replace(el, h('strong', { text: t('error.prefix') }), h('span', { 'data-no-i18n': '', text: message }),
    h('span', { class: 'error-hint', text: t('error.hint') }));
  el.hidden = false;
  document.documentElement.dataset.error = '1';
  $('content').classList.add('stale');
}

function clearError() {
  lastError = null;
  $('error').hidden = true;
  delete document.documentElement.dataset.error;
  $('content').classList.remove('stale');
}

// ---- rendering: every view from (trace, state); no view keeps its own state

const widthOf = (id) => Math.max(240, $(id).clientWidth);

function select(i) {
  state.token = i;
  saveHashSoon();
  renderAll();
}

/** Everything the attention panel's maps depend on: they are redrawn when it changes. */
function attentionKey(width) {
  return [traceSerial, view.words, width, state.layer, selectedHeads(state, trace.numHeads).join(','), state.agg, state.thr, state.topk,
    document.documentElement.lang].join('|');
}

let renderGen = 0;
let renderOpen = false; // the newest render still has views to draw (busy stays set until they are drawn)
let deferred = null; // the newest render's panels still to draw: { gen, later: Map(panel id -> draw), run(id), fail() }

/** Above or below the viewport by more than this many viewport heights: drawn later (renderAll). */
const NEAR = 0.5;

/**
 * Draws every view from (trace, state), the panels on screen first — as many per animation frame as fit in
 * ~12 ms, a long one (the step-by-step view) in slices; a newer render abandons an older one. When those are
 * drawn html[data-shown] is set; the panels off screen follow one slice per idle period once no newer input is
 * waiting (a keystroke's new trace replaces them instead), or at once when scrolled near; then
 * html[data-drawn] is set (tests wait on it; html[data-drawing] is set until then) and `done(ms)` gets the
 * main-thread JavaScript time spent.
 */
function renderAll(done) {
  if (!trace) return;
  const gen = ++renderGen;
  renderOpen = true;
  document.documentElement.dataset.drawing = '1'; // until every view of this render is drawn (or a newer one starts)
  delete document.documentElement.dataset.redraw;
  const s = state;
  const ex = !!trace.example;
  const n = trace.n;
  if (s.token >= n) s.token = 0;
  // widths and panel positions first: reading layout after the first replace would force a layout per view
  const width = Object.fromEntries(['positional-view', 'embeddings', 'attention-view', 'causal-view', 'steps', 'model-view'].map((id) => [id, widthOf(id)]));
  const H = trace.numHeads;
  const heads = selectedHeads(s, H);
  // the encoder–decoder export buttons (cross-attention, the encoder's grid) exist only for traces that have them
  const encdec = !ex && !!trace.source?.layers;
  $('export-cross').hidden = !encdec;
  $('export-encdec').hidden = !encdec;
  const lang = document.documentElement.lang;
  // the token chips, positional and embedding maps are redrawn for a new trace, width or language; a click on
  // a token only moves their selection (class 'selected', heatmap.selectRow)
  const fresh = (id, key) => {
    if (drawnKeys.get(id) === key && !ex) return false;
    drawnKeys.set(id, key);
    return true;
  };
  const selectRows = (selector, row = s.token) => { for (const c of document.querySelectorAll(selector)) c.closest('.hm')?.selectRow?.(row); };
  const stages = [[ex ? 'panel-example' : 'panel-input', () => {
    if (ex) {
      replace($('example-results'), exampleResults({ trace }));
      return;
    }
    if (!fresh('tokens', [traceSerial, lang].join('|'))) {
      for (const el of selectable.tokens?.querySelectorAll('.chip[data-i], .span[data-i]') ?? []) el.classList.toggle('selected', Number(el.dataset.i) === s.token);
      if (traceState.model !== 'random') {
        replace($('predictions'), predictionsView({
          trace, canGenerate: trace.config?.architecture !== 'encoder-decoder' && !!trace.next?.tokens?.length,
          generating: side.generating, onGenerate: generate, playing: !!side.play, onGrow: (k) => { stopPlay(); grow(k); }, onPlay: togglePlay,
        }));
      }
      return;
    }
    const texts = trace.texts;
    const text = texts.target ?? texts.text;
    selectable.tokens = tokensView({ text, tokens: trace.tokens, ids: trace.ids, offsets: trace.offsets, selected: s.token, onSelect: select });
    const parts = [selectable.tokens];
    if (trace.source) {
      parts.unshift(h('p', { class: 'sub', text: t('input.sourceTokens') }),
        tokensView({ text: texts.source, tokens: trace.source.tokens, ids: trace.source.ids, offsets: trace.source.offsets }),
        h('p', { class: 'sub', text: t('input.targetTokens') }));
    }
    const pad = trace.nReal != null && trace.nReal !== n ? t('input.padSummary', { real: trace.nReal, pad: n - trace.nReal }) : '';
    const headsText = t(`input.heads.${trace.numHeads > 1 ? 'other' : 'one'}`, { n: trace.numHeads, d: trace.headDim });
    const layers = t(`input.layers.${trace.layers.length > 1 ? 'other' : 'one'}`, { n: trace.layers.length });
    parts.push(h('p', { class: 'note', text: t('input.summary', { n, pad, dModel: trace.dModel, heads: headsText, layers }) }));
    replace($('tokens'), parts);
    // a loaded model's predictions (the seeded random model's next-token guesses mean nothing)
    if (traceState.model === 'random') $('predictions').replaceChildren();
    else replace($('predictions'), predictionsView({
      trace, canGenerate: traceState.model !== 'random' && trace.config?.architecture !== 'encoder-decoder' && !!trace.next?.tokens?.length,
      generating: side.generating, onGenerate: generate, playing: !!side.play, onGrow: (k) => { stopPlay(); grow(k); }, onPlay: togglePlay,
    }));
  }], ['panel-embeddings', () => {
    if (fresh('embeddings', [traceSerial, width.embeddings, lang].join('|'))) {
      replace($('embeddings'), embeddingsView({ trace, width: width.embeddings, selected: s.token, onSelect: select }));
    } else selectRows('#embeddings canvas[data-name="embeddings"]');
  }], ['panel-positional', () => {
    if (ex) return; // the worked example has no positional panel (data-when="text")
    if (fresh('positional', [traceSerial, width['positional-view'], lang].join('|'))) {
      replace($('positional-view'), positionalView({ trace, state: traceState, width: width['positional-view'], selected: s.token, onSelect: select }));
    } else selectRows('#positional-view canvas[data-name="e"], #positional-view canvas[data-name="pe"], #positional-view canvas[data-name="input"]');
  }], ['panel-attention', () => {
    // redrawn when what it shows changes; a click on a token only moves the selected row (heatmap.selectRow)
    const key = attentionKey(width['attention-view']);
    if (drawnKeys.get('attention-view') !== key) {
      drawnKeys.set('attention-view', key);
      const shown = aggregated(s, width['attention-view']);
      replace($('attention-view'), attentionView({
        trace: shown, layer: s.layer, heads, token: shownToken(shown), width: width['attention-view'],
        onLayer: showLayer,
        // the maps and lines were changed in place (setHeads): the key says so, and the step-by-step and causal
        // views follow from the next frame, drawn now if on screen, else when idle (renderAll)
        onHeads: (next) => {
          state.heads = headsString(next, H);
          saveHashSoon();
          drawnKeys.set('attention-view', attentionKey(width['attention-view']));
          requestAnimationFrame(() => renderAll());
        },
        onSelect: (i) => selectShown(shown, i),
      }));
    }
    selectRows('#attention-view canvas[data-kind="attention"], #aggregate-view canvas[data-kind="aggregate"]', shownToken(shownTrace()));
  }], ['panel-causal', () => {
    renderCausal(width['causal-view']);
  }], ['panel-steps', () => {
    // built in slices of ~12 ms (at 512 keys the whole view is ~70 ms of DOM); the key is kept once it is whole
    const key = [traceSerial, Math.min(s.layer, trace.layers.length - 1), heads[0], Math.min(s.token, n - 1), width.steps, lang].join('|');
    if (drawnKeys.get('steps') === key) return null;
    drawnKeys.delete('steps');
    const v = stepsFor(width.steps);
    replace($('steps'), v.el);
    const more = () => {
      if (v.more(12)) return more;
      drawnKeys.set('steps', key);
      return null;
    };
    return more();
  }], ['panel-model', () => {
    // redrawn for a new trace, width or language; the shown layer and heads are marks moved in place
    drawOnce('model-view', [traceSerial, view.words, width['model-view'], lang].join('|'), () => modelFor(width['model-view']));
    $('model-view').firstChild?.setSelection?.(Math.min(s.layer, trace.layers.length - 1), selectedHeads(s, trace.numHeads));
  }]];
  // on screen (or near it, or hidden: a hidden panel's draw decides whether it shows, and costs nothing)
  const near = (id) => onScreen($(id)); // in the viewport (those near it are drawn as they scroll in: panelWatch)
  // drawn now: the panels on screen whose data the trace has (request() asked for what they draw)
  const ready = (id) => needsOf(id).every((what) => has(trace, what));
  // the first trace's attention maps are drawn right after the tokens, on screen or not: what the page is for,
  const first = stages.filter(([id]) => (near(id) || (runs === 0 && id === 'panel-attention')) && ready(id));
  // and before the embedding and positional maps: on a cold load each frame's layout is slow (~100 ms), and in
  // page order the attention maps came two frames after the tokens
  const k = runs === 0 ? first.findIndex(([id]) => id === 'panel-attention') : -1;
  if (k > 1) first.splice(1, 0, ...first.splice(k, 1));
  const later = new Map(stages.filter((st) => !first.includes(st)));
  let spent = 0;
  let ended = false;
  // a draw returns null when done, or a function that draws the rest (the step-by-step view's next slice)
  const run = (draw) => {
    const t0 = performance.now();
    const rest = draw();
    spent += performance.now() - t0;
    return typeof rest === 'function' ? rest : null;
  };
  const end = (complete) => {
    if (ended) return;
    ended = true;
    if (complete) {
      renderOpen = false;
      delete document.documentElement.dataset.drawing;
      document.documentElement.dataset.drawn = String(gen); // every view is drawn (tests wait on this)
      if (!inflight && !pending && !timer) delete document.documentElement.dataset.busy;
    }
    done?.(spent); // superseded: the newer render draws the rest
  };
  const d = {
    gen,
    later,
    run(id) {
      if (gen !== renderGen) return end(false);
      const draw = later.get(id);
      if (!draw) return;
      if (!ready(id)) {
        completeTrace(); // the pump draws it when the completion has come
        return;
      }
      later.delete(id);
      const rest = run(draw);
      if (rest) { // its next slice goes first
        const others = [...later];
        later.clear();
        later.set(id, rest);
        for (const [k, v] of others) later.set(k, v);
      }
      if (!later.size) end(true);
    },
    fail() { // the completion failed (its error is shown): what needs it stays as it was
      if (gen !== renderGen) return;
      later.clear();
      end(true);
    },
  };
  deferred = d;
  const pump = () => whenIdle(() => {
    if (gen !== renderGen) return end(false);
    if (!later.size) return;
    // a newer input is being computed: its trace replaces this one, so drawing these now would only delay it
    if ((inflight && !inflight.serial) || pending || timer) return setTimeout(pump, 30);
    const id = [...later.keys()].find(ready); // page order, among those the trace has the data for
    if (id) d.run(id);
    else completeTrace(); // the rest need the trace completed: asked once, drawn when it comes
    if (later.size) (id ? pump() : setTimeout(pump, 30));
  });
  const shown = () => {
    document.documentElement.dataset.shown = String(gen); // every view on screen is drawn
    if (!later.size) end(true);
    else pump();
  };
  const queue = [...first];
  const step = () => {
    if (gen !== renderGen) return end(false);
    // one task draws panels while they are quick (a frame's worth), the next panel (or slice) waits for the next frame
    const t0 = performance.now();
    do {
      const [id, draw] = queue.shift();
      const rest = run(draw);
      if (rest) queue.unshift([id, rest]);
    } while (queue.length && performance.now() - t0 < 12);
    if (queue.length) requestAnimationFrame(step);
    else shown();
  };
  if (queue.length) step();
  else shown();
}

// a panel whose draw was put off is drawn as soon as it comes near the viewport
const panelWatch = typeof IntersectionObserver === 'function' ? new IntersectionObserver((entries) => {
  for (const e of entries) {
    const d = deferred;
    if (e.isIntersecting && d?.later.has(e.target.id)) requestAnimationFrame(() => d.run(e.target.id)); // or asks for the data
  }
}, { rootMargin: `${100 * NEAR}% 0px` }) : null;
for (const el of document.querySelectorAll('main section.panel')) panelWatch?.observe(el);

/**
 * The attention panel's view-model: the aggregate map (mean / max over heads, rollout) drawn into
 * #aggregate-view, and the trace the per-head maps draw — the same object unless a threshold or top-k
 * filter hides weak links, then a copy whose current layer's weights are filtered (web/aggregates.js).
 */
function aggregated(s, width, trace = shownTrace()) {
  const n = trace.n;
  const layer = Math.min(s.layer, trace.layers.length - 1);
  const A = trace.layers[layer].attention;
  const H = A.weights.length / (n * n);
  const opts = { threshold: s.thr, topK: s.topk };
  const filtering = s.thr > 0 || s.topk > 0;
  let agg = null;
  if (s.agg === 'mean') agg = meanOverHeads(A.weights, H, n);
  else if (s.agg === 'max') agg = maxOverHeads(A.weights, H, n);
  else if (s.agg === 'rollout') agg = rollout(trace.layers.slice(0, layer + 1).map((ly) => ly.attention.weights), H, n)[layer];
  if (agg) {
    const f = filterLinks(agg, n, n, opts);
    replace($('aggregate-view'), aggregateView({
      values: f.values, hidden: f.hidden, agg: s.agg, layer, tokens: trace.tokens, thr: s.thr, topk: s.topk,
      width, token: shownToken(trace), onSelect: (i) => selectShown(trace, i),
    }));
  } else $('aggregate-view').replaceChildren();
  if (!filtering) return trace;
  const filt = (w, rows, cols) => {
    const out = new Float32Array(w.length);
    for (let hd = 0; hd < H; hd++) out.set(filterLinks(w.subarray(hd * rows * cols, (hd + 1) * rows * cols), rows, cols, opts).values, hd * rows * cols);
    return out;
  };
  const L = trace.layers[layer];
  const copy = { ...L, attention: { ...A, weights: filt(A.weights, n, n) } };
  if (L.cross && trace.source) copy.cross = { ...L.cross, weights: filt(L.cross.weights, n, trace.source.n ?? trace.source.tokens.length) };
  return { ...trace, layers: trace.layers.map((ly, l) => (l === layer ? copy : ly)) };
}

// ---- words, not pieces: with "merge sub-words into words" on, the attention panel and the model view draw
// the trace merged into words (web/aggregates.js wordGroups + mergeWords), computed once per trace

const view = { words: false };
const wordTraces = new WeakMap();

/** The trace the attention panel and the model view draw: the module's, or merged into words. */
function shownTrace() {
  if (!view.words || trace.example) return trace;
  let w = wordTraces.get(trace);
  if (!w) {
    w = wordTrace(trace);
    wordTraces.set(trace, w);
  }
  return w;
}

/** A trace-shaped copy with words for tokens and every weight map merged (sum over keys, mean over queries). */
function wordTrace(tr) {
  const merge = (weights, rows, cols, gq, gk) => mergeWords(weights, rows, cols, gq, gk, weights.length / (rows * cols)).values;
  const g = wordGroups(tr.tokens, undefined, { text: tr.texts?.target ?? tr.texts?.text, offsets: tr.offsets });
  const n = tr.n;
  const first = [];
  g.groups.forEach((w, i) => { first[w] ??= i; });
  const out = {
    ...tr, tokens: g.words, n: g.words.length, groups: g.groups, first,
    nReal: tr.nReal != null && tr.nReal > 0 ? g.groups[tr.nReal - 1] + 1 : undefined,
  };
  let src = null;
  const m = tr.source ? (tr.source.n ?? tr.source.tokens.length) : 0;
  if (tr.source) {
    src = wordGroups(tr.source.tokens, undefined, { text: tr.texts?.source, offsets: tr.source.offsets });
    out.source = {
      ...tr.source, tokens: src.words, n: src.words.length,
      layers: tr.source.layers?.map((ly) => ({ attention: { weights: merge(ly.attention.weights, m, m, src.groups, src.groups) } })),
    };
  }
  out.layers = tr.layers.map((ly) => ({
    kind: ly.kind, full: ly.full,
    attention: { weights: merge(ly.attention.weights, n, n, g.groups, g.groups) },
    ...(ly.cross && src ? { cross: { weights: merge(ly.cross.weights, n, m, g.groups, src.groups) } } : {}),
  }));
  return out;
}

/** The selected token's row in a drawn trace: its word when merged. */
const shownToken = (tr) => (tr.groups ? tr.groups[Math.min(state.token, tr.groups.length - 1)] : state.token);
/** A row clicked in a drawn trace: a word selects its first piece. */
const selectShown = (tr, i) => select(tr.first ? tr.first[i] : i);

/** headEntropy / headDistance of one layer's weights, computed once per weights array (a new trace has new ones). */
const metrics = new WeakMap();
function perHead(fn, w, H, rows, cols) {
  let m = metrics.get(w);
  if (!m) metrics.set(w, (m = new Map()));
  if (!m.has(fn)) m.set(fn, fn(w, H, rows, cols));
  return m.get(fn);
}

/**
 * Redraws container `id` only when `key` (everything its view depends on) differs from what it shows: a click
 * on a token, which the model view does not show, leaves its 144 thumbnails alone.
 */
const drawnKeys = new Map();
function drawOnce(id, key, build) {
  if (drawnKeys.get(id) === key) return;
  drawnKeys.set(id, key);
  replace($(id), build());
}
let traceSerial = 0; // one number per trace received, for drawOnce keys
const selectable = { tokens: null }; // the drawn token chips of the current trace (their selection moves)

/**
 * The model view: every layer × head, with per-head entropy and mean distance (web/aggregates.js);
 * encoder–decoder models get three grids: encoder self-attention, decoder self-attention, cross-attention.
 */
function modelFor(width, trace = shownTrace()) {
  const n = trace.n;
  const H = trace.layers[0].attention.weights.length / (n * n);
  const section = (key, title, weights, rows, cols, open) => ({
    key, title, weights, H, n: rows, m: cols, open,
    entropy: weights.map((w) => perHead(headEntropy, w, H, rows, cols)),
    distance: rows === cols && key !== 'cross' ? weights.map((w) => perHead(headDistance, w, H, rows, cols)) : null,
  });
  const sections = [];
  const src = trace.source;
  if (src?.layers) sections.push(section('encoder', t('model.encoder'), src.layers.map((ly) => ly.attention.weights), src.n, src.n, false));
  sections.push(section('self', t(src ? 'model.decoder' : 'model.self'), trace.layers.map((ly) => ly.attention.weights), n, n, true));
  if (src && trace.layers[0].cross) sections.push(section('cross', t('model.cross'), trace.layers.map((ly) => ly.cross.weights), n, src.n, true));
  return modelView({
    sections, width, layer: Math.min(state.layer, trace.layers.length - 1), heads: selectedHeads(state, H),
    onOpen: (l, hd) => {
      state.heads = headsString([hd], H);
      showLayer(l);
      $('panel-attention').scrollIntoView({ block: 'start' });
    },
  });
}

/**
 * Shows layer `l` in the attention detail and the step-by-step view: drawn at once from the weights every
 * layer has, and computed again when the trace does not hold this layer in full (the page asks the core
 * for the full trace of the shown layer only, web/pipeline.js).
 */
function showLayer(l) {
  state.layer = l;
  saveHash();
  renderAll();
  if (!trace.layers[Math.min(l, trace.layers.length - 1)].full) schedule(0);
}

// ---- the causal decoding view (decoders): the triangular pattern, the selected row, the next-token top-k
// there (the full run's `next` for the last token; else the worker runs the prefix with the model's topK
// option), and "generate next token" (model.generate, one token)

const causal = { k: 5, key: null, next: null, asked: 0, position: -1, follow: false, generateId: 0 };
const CAUSAL_KS = [5, 10, 20];

function renderCausal(width = widthOf('causal-view')) {
  const panel = $('panel-causal');
  if (!has(trace, 'full')) return; // drawn when the completion comes (renderAll's pump)
  const decoder = !trace.example && trace.config?.architecture === 'decoder';
  panel.hidden = !decoder;
  if (!decoder) {
    $('causal-view').replaceChildren();
    return;
  }
  const n = trace.n;
  const last = (trace.nReal ?? n) - 1;
  const i = Math.min(state.token, last);
  const random = traceState.model === 'random';
  const k = random ? 5 : causal.k;
  const key = `${i}:${k}`;
  if (causal.key !== key) { // a new trace, position or k: the trace's own `next` if it answers, else ask the worker
    causal.key = key;
    causal.position = i;
    causal.asked = 0;
    if (i === last && trace.next && (random || trace.next.tokens.length === k)) causal.next = { position: i, ...trace.next };
    else if (random) causal.next = { position: i, error: t('causal.randomOnlyLast') };
    else {
      causal.next = null;
      causal.asked = ++side.id;
      worker.postMessage({
        id: causal.asked, kind: 'next', state: { ...traceState }, position: i, ids: Array.from(trace.ids.subarray(0, i + 1)),
        end: trace.offsets[2 * i + 1], topK: k,
      });
    }
  }
  const H = trace.numHeads;
  replace($('causal-view'), causalView({
    trace, layer: state.layer, heads: selectedHeads(state, H), token: i, next: causal.next, k, ks: random ? [5] : CAUSAL_KS,
    canGenerate: !random && !!trace.next, generating: side.generating, width,
    onSelect: select,
    onK: random ? null : (v) => { causal.k = v; renderCausal(); },
    onGenerate: () => {
      side.generating = true;
      causal.generateId = ++side.id;
      worker.postMessage({ id: causal.generateId, kind: 'generate', state: { ...state }, maxNewTokens: 1 });
      renderCausal();
    },
  }));
}

function stepsFor(width) {
  const n = trace.n;
  const layer = Math.min(state.layer, trace.layers.length - 1);
  return stepsViewSliced({
    trace, layer, head: selectedHeads(state, trace.numHeads)[0], token: Math.min(state.token, n - 1), width, onSelect: select,
  });
}

// ---- controls ⇄ state

const NUMBER_IDS = ['dModel', 'numHeads', 'numLayers', 'dFF', 'seed', 'base', 'pePositions', 'padTo'];
const SELECT_IDS = ['tokenizer', 'arch', 'attention', 'positional', 'activation'];
const VIEW_IDS = ['agg', 'thr', 'topk']; // change only how the trace is drawn: no recompute
const FAMILY_IDS = { adNq: 'additive', adNk: 'additive', adHidden: 'additive', adValid: 'additive', adSeed: 'additive', krSeed: 'regression' };

function syncControls() {
  for (const r of document.querySelectorAll('input[name=mode]')) r.checked = r.value === state.mode;
  for (const id of SELECT_IDS) $(id).value = state[id];
  $('model').value = picking ? 'checkpoint' : state.model;
  for (const id of NUMBER_IDS) $(id).value = String(state[id]);
  for (const id of [...VIEW_IDS, ...Object.keys(FAMILY_IDS), 'krW']) $(id).value = String(state[id]);
  $('krW-out').textContent = state.krW.toFixed(1);
  $('normFirst').checked = state.normFirst;
  $('padding').checked = state.padding;
  $('causal').checked = state.arch === 'decoder';
  $('causal').disabled = state.arch === 'encoder-decoder';
  if ($('text').value !== state.text) $('text').value = state.text;
  if ($('source').value !== state.source) $('source').value = state.source;
  if ($('target').value !== state.target) $('target').value = state.target;
  syncVisibility();
}

function syncVisibility() {
  const ex = state.mode === 'example';
  for (const el of document.querySelectorAll('[data-when]')) el.hidden = (el.dataset.when === 'example') !== ex;
  for (const el of document.querySelectorAll('[data-when-attn]')) el.hidden = state.attention !== el.dataset.whenAttn;
  for (const el of document.querySelectorAll('[data-when-pe]')) el.hidden = state.positional !== el.dataset.whenPe;
  for (const el of document.querySelectorAll('[data-when-model]')) if (state.model !== el.dataset.whenModel) el.hidden = true;
  $('checkpoint-box').hidden = ex || !(state.model === 'checkpoint' || picking);
  $('model-about').hidden = ex || picking || !info.bundled.some((m) => m.name === state.model);
  showAbout();
  $('single-input').hidden = state.arch === 'encoder-decoder' && state.model === 'random';
  $('pair-input').hidden = state.arch !== 'encoder-decoder' || state.model !== 'random';
  $('padTo').disabled = !state.padding;
  if (ex) {
    const box = $('example-inputs');
    if (!box.firstChild) {
      box.append(exampleInputs({
        embeddings: exampleEmbeddings(state),
        tokens: EXAMPLE_TOKENS,
        onEdit: (rows) => { state.ex = rows.flat().join(','); saveHash(); schedule(30); },
        onReset: () => { state.ex = ''; saveHash(); box.replaceChildren(); syncVisibility(); schedule(0); },
      }));
    }
  } else $('example-inputs').replaceChildren();
}

let writtenHash = location.hash;
let hashTimer = 0;
function saveHash() {
  clearTimeout(hashTimer);
  hashTimer = 0;
  const hash = serialize(state);
  writtenHash = hash;
  history.replaceState(null, '', hash || `${location.pathname}${location.search}`);
}
/** saveHash in a task of its own: with a long text replaceState takes 10–20 ms, kept out of a click's task. */
function saveHashSoon() {
  if (!hashTimer) hashTimer = setTimeout(saveHash, 0);
}

function change(key, value, delay = 120) {
  if (state[key] === value) return;
  state[key] = value;
  if (key !== 'grow' && state.grow) state.grow = 0; // a new input or model: its output shown whole
  if (key === 'mode' || key === 'numHeads' || key === 'attention' || key === 'model') {
    state.heads = 'all';
    state.layer = 0;
  }
  if (key === 'numLayers' && state.layer >= value) state.layer = 0;
  if (delay === 0 && TEXT_IDS.includes(key)) {
    // a keystroke: sent to the worker first (or queued behind the running request), the link written after
    // (replaceState takes 10–20 ms with a long text) and nothing else waits on it
    clearTimeout(timer);
    timer = 0;
    document.documentElement.dataset.busy = '1';
    request();
    saveHashSoon();
    syncVisibility();
    return;
  }
  saveHash();
  syncVisibility();
  schedule(delay);
}
const TEXT_IDS = ['text', 'source', 'target'];

/**
 * Export buttons (issue 14): downloads the attention view (its heatmap or lines) or the model view as SVG,
 * PNG (2×), CSV or JSON — the figure web/render/figure.js builds from the trace: the shown layer, the selected
 * heads or the aggregate, the same colour domain and masked cells, and the attention view's threshold / top-k
 * filter applied as on screen (web/aggregates.js filterLinks; the model view shows every weight).
 */
function exportView(view, format, attention = 'self') {
  if (!trace?.layers?.length) return;
  if (attention !== 'self' && !trace.source) return;
  const n = trace.n;
  const layer = Math.min(state.layer, trace.layers.length - 1);
  const H = trace.layers[layer].attention.weights.length / (n * n);
  const head = state.agg === 'heads' ? selectedHeads(state, H) : state.agg;
  const f = figureOf(trace, {
    view, attention, layer, head: view === 'overview' ? undefined : head, model: traceState?.model, text: trace.texts,
  });
  if (view !== 'overview' && (state.thr > 0 || state.topk > 0)) {
    for (const p of f.panels) p.values = filterLinks(p.values, f.rows, f.cols, { threshold: state.thr, topK: state.topk }).values;
  }
  const style = { palette: colors.weights, headColors: colors.heads };
  const save = (blob) => {
    const a = h('a', { href: URL.createObjectURL(blob), download: `attnscope-${view}${attention === 'self' ? '' : `-${attention}`}${view === 'overview' ? '' : `-layer${layer}`}.${format}` });
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  };
  if (format === 'png') {
    // the SVG drawn by the browser at 2×, so the PNG has the tokens, title and legend text as well; should the
    // image not load, the renderer's own raster (cells, colour bar and links, no text; the CLI's PNG)
    const svgUrl = URL.createObjectURL(new Blob([figureSvg(f, style)], { type: 'image/svg+xml' }));
    const img = new Image();
    const draw = (w, h0, paint) => {
      const canvas = h('canvas');
      canvas.width = w;
      canvas.height = h0;
      paint(canvas.getContext('2d'));
      canvas.toBlob(save, 'image/png');
      URL.revokeObjectURL(svgUrl);
    };
    img.addEventListener('load', () => draw(2 * img.naturalWidth, 2 * img.naturalHeight, (ctx) => ctx.drawImage(img, 0, 0, 2 * img.naturalWidth, 2 * img.naturalHeight)));
    img.addEventListener('error', () => {
      const r = figureRaster(f, style, 2);
      draw(r.width, r.height, (ctx) => ctx.putImageData(new ImageData(r.data, r.width, r.height), 0, 0));
    });
    img.src = svgUrl;
  } else {
    const text = format === 'svg' ? figureSvg(f, style) : format === 'csv' ? toCsv(f) : toJson(f);
    save(new Blob([text], { type: { svg: 'image/svg+xml', csv: 'text/csv', json: 'application/json' }[format] }));
  }
}

function wire() {
  for (const b of document.querySelectorAll('button[data-export]')) {
    b.addEventListener('click', () => whenComplete(() => exportView(b.dataset.export, b.dataset.format, b.dataset.attention ?? 'self')));
  }
  for (const r of document.querySelectorAll('input[name=mode]')) r.addEventListener('change', () => change('mode', r.value, 0));
  for (const id of SELECT_IDS) $(id).addEventListener('change', () => change(id, $(id).value, 0));
  for (const id of NUMBER_IDS) {
    $(id).addEventListener('input', () => {
      const v = Number($(id).value);
      if ($(id).value.trim() === '' || !Number.isFinite(v)) return;
      if (id !== 'base' && !Number.isInteger(v)) return;
      if (v < Number($(id).min) || ($(id).max && v > Number($(id).max))) return; // the box's range, as a link's (state.js)
      change(id, v, 250);
    });
  }
  $('agg').addEventListener('change', () => { state.agg = $('agg').value; saveHash(); renderAll(); });
  $('merge-words').addEventListener('change', () => { view.words = $('merge-words').checked; renderAll(); });
  for (const id of ['thr', 'topk']) {
    $(id).addEventListener('input', () => {
      const v = Number($(id).value);
      if ($(id).value.trim() === '' || !Number.isFinite(v) || v < 0 || (id === 'topk' && !Number.isInteger(v)) || (id === 'thr' && v > 1)) return;
      state[id] = v;
      saveHash();
      renderAll();
    });
  }
  for (const [id, kind] of Object.entries(FAMILY_IDS)) {
    $(id).addEventListener('input', () => {
      const v = Number($(id).value);
      if ($(id).value.trim() === '' || !Number.isInteger(v) || v < Number($(id).min) || ($(id).max && v > Number($(id).max))) return;
      state[id] = v;
      saveHash();
      familyRequest(kind);
    });
  }
  $('krW').addEventListener('input', () => {
    state.krW = Number($('krW').value);
    $('krW-out').textContent = state.krW.toFixed(1);
    saveHash();
    familyRequest('regression');
  });
  $('model').addEventListener('change', () => {
    const v = $('model').value;
    picking = v === 'checkpoint' && !info.checkpoint; // choose files first; the current model stays meanwhile
    if (!picking) change('model', v, 0);
    else syncVisibility();
  });
  $('normFirst').addEventListener('change', () => change('normFirst', $('normFirst').checked, 0));
  $('padding').addEventListener('change', () => change('padding', $('padding').checked, 0));
  $('causal').addEventListener('change', () => { change('arch', $('causal').checked ? 'decoder' : 'encoder', 0); $('arch').value = state.arch; });
  $('arch').addEventListener('change', () => { $('causal').checked = state.arch === 'decoder'; $('causal').disabled = state.arch === 'encoder-decoder'; });
  // no delay: a key is sent at once when the worker is idle; keys typed while it computes collapse into one
  // request for the newest text, sent when the running one returns (request(): latest wins)
  for (const id of TEXT_IDS) $(id).addEventListener('input', () => change(id, $(id).value, 0));
  $('controls').addEventListener('submit', (e) => e.preventDefault());
  $('lang').addEventListener('change', () => {
    state.lang = $('lang').value;
    saveHash();
    useLanguage(state.lang);
  });
  window.addEventListener('hashchange', () => {
    if (location.hash === writtenHash) return;
    writtenHash = location.hash;
    Object.assign(state, parse(location.hash));
    useLanguage(detectLanguage(state.lang));
    syncControls();
    schedule(0);
    familyRequest('additive');
    familyRequest('regression');
  });
  let resizeTimer = 0;
  let lastW = window.innerWidth;
  window.addEventListener('resize', () => {
    if (window.innerWidth === lastW) return;
    lastW = window.innerWidth;
    clearTimeout(resizeTimer);
    document.documentElement.dataset.redraw = '1'; // a redraw is due (tests wait for it: harness afterDraw)
    resizeTimer = setTimeout(() => { renderAll(); renderFamily('regression'); }, 150);
  });
  $('copy-link').addEventListener('click', async () => {
    const b = $('copy-link');
    try {
      if (hashTimer) saveHash(); // a link written later (saveHashSoon) is written now
      await navigator.clipboard.writeText(location.href);
      b.textContent = t('header.linkCopied');
    } catch {
      b.textContent = t('header.copyFromBar');
    }
    setTimeout(() => { b.textContent = t('header.copyLink'); }, 1800);
  });
  $('export').addEventListener('click', () => whenComplete(() => {
    if (!trace) return;
    const blob = new Blob([JSON.stringify({ state: traceState, trace: toPlain(trace) }, null, 1)], { type: 'application/json' });
    const url = URL.createObjectURL(blob);
    const a = h('a', { href: url, download: 'attnscope-trace.json' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }));
}

function toPlain(v) {
  if (ArrayBuffer.isView(v)) return Array.from(v, (x) => (Number.isFinite(x) ? x : null));
  if (Array.isArray(v)) return v.map(toPlain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPlain(x)]));
  return v;
}

// ---- the UI language (web/i18n.js): the link's lang=, else the browser's; a switch redraws in place, no reload

/** Strings that are not plain [data-i18n] text: the document's title, the export buttons' names. */
function applyPageStrings() {
  applyI18n(document);
  document.title = t('page.title');
  for (const b of document.querySelectorAll('button[data-export]')) {
    const what = b.dataset.attention ? t(`export.what.${b.dataset.export}.${b.dataset.attention}`) : t(`export.what.${b.dataset.export}`);
    b.setAttribute('aria-label', t('export.aria', { what, format: b.dataset.format.toUpperCase() }));
  }
}

function useLanguage(lang) {
  setLanguage(lang);
  document.documentElement.lang = language();
  $('lang').value = language();
  const learn = $('learn-link'); // the guided path opens in the same language (its href: learn/ or the single file's)
  if (learn) learn.setAttribute('href', `${learn.getAttribute('href').split('#')[0]}#lang=${language()}`);
  applyPageStrings();
}

onLanguageChange(() => {
  applyPageStrings();
  if (info.ready) fillPicker();
  showStatus();
  renderAll();
  for (const kind of Object.keys(fam)) if (fam[kind].result || fam[kind].error) renderFamily(kind);
});

// ---- a read-only snapshot for tests and the console: window.__attnscope

Object.defineProperty(window, '__attnscope', {
  value: Object.freeze({
    get state() { return Object.freeze({ ...state }); },
    get traceState() { return traceState && Object.freeze({ ...traceState }); },
    get trace() { return trace; },
    get timing() { return Object.freeze({ ...timing }); },
    get info() { return Object.freeze({ ...info }); },
    get error() { return lastError; },
    get runs() { return runs; },
    /** what each run sent to the worker asked for: { need: { all, full }, completion } (the last 50) */
    get requests() { return sent.map((r) => Object.freeze({ need: Object.freeze({ ...r.need }), completion: r.completion })); },
    /** the attention-family views' last results and the parameters they were computed for */
    get family() {
      return Object.freeze(Object.fromEntries(Object.entries(fam).map(([k, f]) => [k, Object.freeze({
        result: f.result, params: f.params, error: f.error, runs: f.runs,
      })])));
    },
    defaults: DEFAULTS,
  }),
});

useLanguage(detectLanguage(state.lang));
// text typed into a box before this ran (the page shows them from its first paint) is kept, not replaced
const typedEarly = TEXT_IDS.filter((id) => $(id).value !== $(id).defaultValue);
for (const id of typedEarly) state[id] = $(id).value;
if (typedEarly.length) saveHashSoon();
syncControls();
wire();
worker = startWorker(); // last: its early messages (ready) update what the lines above set up
schedule(0);
