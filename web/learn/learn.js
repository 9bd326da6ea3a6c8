// The guided path "Learn attention" (layer: web): ten steps, each a short text, its formulas and a live view
// computed by the attnscope module in this page, ending with a "try this" the page checks. This file wires
// them: the step and language in the URL hash (#step=5&lang=zh-CN), previous/next and ←/→, progress in
// localStorage, the language switch (web/i18n.js, catalogs in ./locales). The steps are in steps-a.js / steps-b.js.
import { createAttnScope } from '../../bindings/js/index.js';
import { h, replace } from '../dom.js';
import { t, detectLanguage, setLanguage, language, onLanguageChange, applyI18n } from '../i18n.js';
import './locales/en.js';
import './locales/zh-CN.js';
import { tryBox } from './ui.js';
import { STEPS_A } from './steps-a.js';
import { STEPS_B } from './steps-b.js';
import { STEPS_C } from './steps-c.js';

const STEPS = [...STEPS_A, ...STEPS_B, ...STEPS_C];
const STORE = 'attnscope.learn.v1';
const $ = (id) => document.getElementById(id);

// Test hook (tests/browser/learn.test.js): the step shown, how many views were drawn, the current try's answer.
const hook = { ready: false, step: 0, drawn: 0, answer: null, tol: null };
window.__learn = hook;

function loadProgress() {
  try {
    const v = JSON.parse(localStorage.getItem(STORE) ?? '{}');
    return { visited: new Set(v.visited ?? []), solved: new Set(v.solved ?? []) };
  } catch {
    return { visited: new Set(), solved: new Set() };
  }
}
const progress = loadProgress();
const saveProgress = () => {
  try {
    localStorage.setItem(STORE, JSON.stringify({ visited: [...progress.visited], solved: [...progress.solved], last: current }));
  } catch { /* storage blocked: progress lives for this visit only */ }
};

/** Step (1–10) and language from a hash like #step=5&lang=zh-CN; a missing or bad step is null. */
function parseHash(hash) {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  const n = Number(q.get('step'));
  return { step: Number.isInteger(n) && n >= 1 && n <= STEPS.length ? n : null, lang: q.get('lang') };
}

let as = null;
const models = new Map();
const stepState = STEPS.map(() => ({}));
let current = 1;
let renderSeq = 0;

const ctx = {
  get as() { return as; },
  model(name) {
    if (!models.has(name)) {
      const m = as.loadBundled(name);
      m.catch(() => models.delete(name));
      models.set(name, m);
    }
    return models.get(name);
  },
  drawn() {
    hook.drawn++;
    document.documentElement.dataset.drawn = String(hook.drawn);
  },
};

function writeHash() {
  const hash = `#step=${current}&lang=${language()}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

function drawNav() {
  replace($('step-list'), STEPS.map((s, i) => {
    const n = i + 1;
    const a = h('a', {
      href: `#step=${n}&lang=${language()}`, class: n === current ? 'l-nav-on' : null,
      'aria-current': n === current ? 'step' : null, title: t(`s${n}.title`),
    }, h('span', { class: 'l-nav-n', text: String(n) }), h('span', { class: 'l-nav-t', text: t(`s${n}.short`) }),
    progress.solved.has(s.id) ? h('span', { class: 'l-nav-ok', text: '✓', 'aria-label': t('learn.solved') }) : null);
    a.addEventListener('click', (e) => { e.preventDefault(); go(n); });
    return h('li', { class: progress.visited.has(s.id) ? 'l-visited' : null }, a);
  }));
  // keep the current step in view in the nav strip (phones scroll it sideways), without scrolling the page
  const nav = $('step-list').parentElement;
  const on = nav.querySelector('.l-nav-on');
  if (on) nav.scrollLeft = on.offsetLeft - (nav.clientWidth - on.offsetWidth) / 2;
  $('where').textContent = t('learn.where', { n: current, total: STEPS.length, done: progress.solved.size });
  $('prev').disabled = current === 1;
  $('next').disabled = current === STEPS.length;
}

async function render() {
  const seq = ++renderSeq;
  const step = STEPS[current - 1];
  const article = $('step');
  drawNav();
  if (!as) return;
  hook.ready = false;
  replace(article, h('p', { class: 'l-wait', text: t('learn.computing') }));
  try {
    const { body, task } = await step.render(ctx, stepState[current - 1]);
    if (seq !== renderSeq) return;
    const solved = () => {
      progress.solved.add(step.id);
      saveProgress();
      drawNav();
    };
    replace(article, h('h2', { text: t('learn.stepTitle', { n: current, title: t(`s${current}.title`) }) }), body, tryBox(task, solved));
    hook.answer = () => task.answer();
    hook.tol = task.tol;
    $('error').hidden = true;
  } catch (e) {
    if (seq !== renderSeq) return;
    replace(article);
    $('error').textContent = t('learn.failed', { message: e.message });
    $('error').hidden = false;
  }
  hook.step = current;
  hook.ready = true;
  ctx.drawn();
}

function go(n, focus = true) {
  current = Math.max(1, Math.min(STEPS.length, n));
  progress.visited.add(STEPS[current - 1].id);
  saveProgress();
  writeHash();
  render().then(() => { if (focus) $('step').focus({ preventScroll: true }); });
  window.scrollTo(0, 0);
}

// ---- start

const start = parseHash(location.hash);
setLanguage(detectLanguage(start.lang));
document.documentElement.lang = language();
applyI18n(document);
$('lang').value = language();
current = start.step ?? (Number(JSON.parse(localStorage.getItem(STORE) ?? '{}').last) || 1);
progress.visited.add(STEPS[current - 1].id);
writeHash();
drawNav();

$('lang').addEventListener('change', () => setLanguage($('lang').value));
onLanguageChange(() => {
  applyI18n(document);
  $('lang').value = language();
  writeHash();
  $('status').textContent = as ? t('learn.ready', { build: as.simd ? 'SIMD128' : t('learn.scalar') }) : t('learn.loading');
  render();
});
$('prev').addEventListener('click', () => go(current - 1, false));
$('next').addEventListener('click', () => go(current + 1, false));
document.addEventListener('keydown', (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
  if (e.target instanceof Element && e.target.closest('input, select, textarea, [contenteditable]')) return;
  if (e.key === 'ArrowLeft' && current > 1) go(current - 1);
  if (e.key === 'ArrowRight' && current < STEPS.length) go(current + 1);
});
window.addEventListener('hashchange', () => {
  const { step, lang } = parseHash(location.hash);
  if (lang && lang !== language()) setLanguage(lang);
  if (step && step !== current) go(step);
});

// relaxedSimd false: the same numbers as the package in Node, bit for bit (see web/worker.js)
createAttnScope({ relaxedSimd: false }).then((instance) => {
  as = instance;
  $('status').textContent = t('learn.ready', { build: as.simd ? 'SIMD128' : t('learn.scalar') });
  render();
}, (e) => {
  $('status').textContent = t('learn.loadFailed');
  $('error').textContent = t('learn.failed', { message: e.message });
  $('error').hidden = false;
});
