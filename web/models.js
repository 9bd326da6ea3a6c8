// The model picker (layer: web): the bundled models and the user's checkpoint (feature-detected), a bundled
// model's paragraph, head legend and held-out score, and generation (continue the text, grow an encoder–decoder's
// output). Loading, scoring and generating are compute calls (./compute.js); the current model stays on screen
// until a new one has loaded, and a failed load leaves it there with the error in the picker. Lives beside
// app.js: config.json is fetched relative to import.meta.url, which the site's bundle keeps as web/app.js's.
import { $, h, replace } from './dom.js';
import { t, language } from './i18n.js';
import { selectedHeads, headsString } from './state.js';
import { checkpointBox } from './views/picker.js';
import { architectureLine } from './views/arch-line.js';
import { headLegend } from './views/heads.js';

const marks = document.documentElement.dataset;
const DRAWN = new Set(['encoder', 'decoder', 'encoder-decoder']); // architectures whose traces the panels draw

/**
 * `store`, `compute`; `page`: { syncVisibility(), redraw(), showError(message), loaded() (a checkpoint is the state's model) }.
 * Returns the picker's owner: fill(), about(), name(model), heldout(name), generation, act.
 */
export function createModels(store, compute, page) {
  const { state, data } = store;
  const heldout = new Map(); // name → { fraction, result, error }
  const about = new Map(); // name → what config.json adds to bundledModels (loadAbout)
  const generation = { generating: false, playing: false };
  let play = 0;
  let loading = null; // the checkpoint load whose answer counts (a newer one replaces it)
  // what stays when a choice of files fails: the model shown before, unless the page was waiting for a checkpoint
  const stays = () => t(data.info.checkpoint || state.model !== 'checkpoint' ? 'checkpoint.previousStays' : 'checkpoint.nothingLoaded');
  const box = checkpointBox({ onFiles: loadCheckpoint, onCancel: () => { if (loading) compute.cancel(loading); }, stays });
  $('checkpoint-box').append(box.el);

  /** The picker's options as the module offers them: trained models and checkpoints only when present. */
  function fill() {
    const info = data.info;
    const group = $('model-bundled');
    group.replaceChildren(...info.bundled.map((m) => {
      const name = `${m.name}${m.task ? ` — ${m.task}` : ''}`;
      return h('option', { // the model's name and task: its data
        value: m.name, disabled: !DRAWN.has(m.architecture), 'data-no-i18n': '', text: DRAWN.has(m.architecture) ? name : t('controls.notDrawn', { name }),
      });
    }));
    group.hidden = !info.bundled.length;
    $('model-own').hidden = !info.pretrained;
    const known = state.model === 'random' || (state.model === 'checkpoint' && info.checkpoint) || (state.model === 'file' && info.attnFile) || info.bundled.some((m) => m.name === state.model);
    if (!known) store.change('model', 'random', { delay: 0 });
    $('model').value = data.picking ? 'checkpoint' : data.pickingFile ? 'file' : state.model;
    page.syncVisibility();
  }

  /** A bundled model's paragraph, head legend, example prompts and held-out score (measured once per model). */
  function showAbout() {
    const m = data.info.bundled.find((x) => x.name === state.model);
    if (!m) return;
    const score = heldout.get(m.name);
    let line = '';
    if (score?.result?.metric === 'exact') {
      const { correct, total, ms } = score.result;
      line = t('heldout.exact', { correct, total, pct: (100 * correct / total).toFixed(1), s: (ms / 1000).toFixed(1) });
    } else if (score?.result?.metric === 'loss') {
      const { loss, count, texts, reference, ms } = score.result;
      line = t('heldout.loss', { loss: loss.toFixed(3), count, texts, reference: reference ?? '—', s: (ms / 1000).toFixed(1) });
    } else if (score?.error) line = t('heldout.error', { message: score.error });
    else if (score && !score.result) line = t('heldout.measuring', { pct: Math.round(100 * (score.fraction ?? 0)) });
    const more = about.get(m.name);
    if (!more) loadAbout(m.name);
    // the model's own task and description (its config.json, written in English, or in the page's language when
    // config.json's `descriptions` has it): data, not UI text
    const local = more?.descriptions?.[language()];
    replace($('model-about'), local ? h('span', { text: local, lang: language(), 'data-no-i18n': '' })
      : h('span', { text: `${m.task ? `${m.task}. ` : ''}${m.description ?? ''}`, lang: 'en', 'data-no-i18n': '' }),
    line ? h('strong', { class: 'heldout', dataset: { name: 'heldout' }, text: ` ${line}` }) : null,
    more?.heads ? headLegend({
      heads: more.heads, layer: state.layer, selected: selectedHeads(state, more.numHeads),
      onSelect: (l, hd) => { store.update({ heads: headsString([hd], more.numHeads), layer: l }); showAbout(); },
    }) : null,
    more?.examples?.length && state.mode === 'text' ? h('span', { class: 'examples' }, t('model.tryExample'), ' ',
      more.examples.map((ex) => h('button', {
        type: 'button', class: 'example', lang: more.lang ?? 'en', 'data-no-i18n': '', text: ex.replace(/\n/g, '⏎'),
        title: ex, onclick: () => { $('text').value = ex; store.change('text', ex, { delay: 0 }); },
      }))) : null);
  }

  /**
   * What a bundled model's config.json adds to its bundledModels entry, fetched once per model: its more heads
   * (`heads`, training/label_heads.py), example prompts and descriptions in other languages.
   */
  async function loadAbout(name) {
    about.set(name, {});
    try {
      const r = await fetch(new URL(`../models/${encodeURIComponent(name)}/config.json`, import.meta.url));
      const c = r.ok ? await r.json() : {};
      // examples: prompts in the model's own language (chinese-poems reads Chinese characters only), offered as
      // buttons; the text box is changed only when one is clicked
      const examples = Array.isArray(c.examples) ? c.examples.filter((x) => typeof x === 'string' && x.length <= 200).slice(0, 4) : [];
      const descriptions = Object.fromEntries(Object.entries(c.descriptions && typeof c.descriptions === 'object' ? c.descriptions : {})
        .filter(([, v]) => typeof v === 'string'));
      about.set(name, {
        heads: Array.isArray(c.heads) ? c.heads : null, numHeads: c.numHeads, examples, descriptions, lang: typeof c.lang === 'string' ? c.lang : undefined,
      });
    } catch {
      return; // no legend: the page works without it
    }
    if (state.model === name) showAbout();
  }

  /** A bundled model's held-out score, measured in the worker once per model. */
  function measureHeldout(name) {
    if (heldout.has(name)) return;
    const score = { fraction: 0 };
    heldout.set(name, score);
    compute.call('heldout', { name }, (fraction) => { score.fraction = fraction; showAbout(); })
      .then(({ value }) => { score.result = value; }, (err) => { score.error = err.message; })
      .then(showAbout);
  }

  function loadCheckpoint(files) {
    const tok = files.tokenizer instanceof Blob ? [files.tokenizer] : Object.values(files.tokenizer).filter(Boolean);
    const names = [files.config, ...[files.weights].flat(), ...tok].map((f) => f.name);
    box.message(t('checkpoint.loading', { names: names.join(', ') }));
    box.progress(0);
    marks.loading = '1';
    const load = compute.call('load', { files }, (fraction) => { if (loading === load) box.progress(fraction); showAbout(); });
    loading = load;
    load.then(({ value: c, ms }) => {
      if (loading !== load) return;
      delete marks.loading;
      box.progress(null);
      // today's decoders: the one-line architecture (views/arch-line.js); GPT-2 and BERT keep their short label
      data.info.checkpoint = {
        config: c,
        get label() { // in the language of the moment
          const line = c.rope || c.norm?.startsWith('rms') || c.architecture === 'encoder-decoder' ? architectureLine(c) : '';
          return line || t('model.checkpointLabel', { arch: c.architecture ?? '', layers: c.numLayers, heads: c.numHeads, d: c.dModel });
        },
      };
      const streamed = c.checkpoint?.streamed ? ` ${t('h28s.streamed', { gb: (c.checkpoint.bytes / 1e9).toFixed(2), budget: (c.streamBudget / 1e9).toFixed(1) })}` : '';
      box.message(t('checkpoint.loaded', { s: (ms / 1000).toFixed(1), label: data.info.checkpoint.label }) + streamed);
      data.picking = false;
      Object.assign(state, { model: 'checkpoint', heads: 'all', layer: 0, token: 0 }); // a newer checkpoint replaces the last
      page.loaded();
    }, (err) => {
      if (loading !== load) return;
      delete marks.loading;
      box.progress(null);
      if (err.name === 'AbortError') box.message(t('checkpoint.cancelled', { what: stays() }));
      else box.message(t('checkpoint.failed', { message: err.message, what: stays() }), true);
    });
  }

  /** Greedy continuation of the text by `maxNewTokens`, appended to it; `follow`: the new last token selected. */
  function generate(maxNewTokens, { follow = false } = {}) {
    generation.generating = true;
    compute.call('generate', { state: { ...state }, maxNewTokens }).then(({ value: g }) => {
      generation.generating = false;
      data.follow = follow && !!g.text;
      if (g.text) {
        $('text').value = state.text + g.text;
        store.change('text', $('text').value, { delay: 0 });
      }
    }, (err) => {
      generation.generating = false;
      data.follow = false;
      page.showError(err.message);
    }).then(page.redraw);
    if (!follow) page.redraw(); // the predictions say "generating…" (the causal panel redraws itself)
  }

  /** Shows an encoder–decoder preset's output up to k tokens (all when k reaches the end). */
  function grow(k) {
    const total = data.trace?.generated?.count ?? 0;
    store.change('grow', k >= total ? 0 : k, { delay: 0 });
  }

  function stopPlay() {
    clearInterval(play);
    play = 0;
    generation.playing = false;
  }

  /** Plays the output growing: one more token every 600 ms, from the first to the whole. */
  function togglePlay() {
    if (play) {
      stopPlay();
      page.redraw();
      return;
    }
    grow(1);
    generation.playing = true;
    play = setInterval(() => {
      const g = data.trace?.generated;
      if (!g || state.grow === 0) {
        stopPlay();
        page.redraw();
        return;
      }
      if (!compute.busy() && g.shown === state.grow) grow(state.grow + 1);
    }, 600);
  }

  return {
    fill,
    about: showAbout,
    heldout: measureHeldout,
    /** A model's name as the status line says it. */
    name(model) {
      if (model === 'checkpoint') return data.info.checkpoint ? t('model.checkpointNamed', { label: data.info.checkpoint.label }) : t('model.yourCheckpoint');
      return model;
    },
    generation,
    act: { generate, grow: (k) => { stopPlay(); grow(k); }, play: togglePlay },
  };
}
