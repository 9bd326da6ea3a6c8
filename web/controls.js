// The controls (layer: web): the form's boxes written from the state (sync) and read into the store (wire), each
// value checked against web/state.js's ranges as a link's is; what a change then does is the store's table.
import { $ } from './dom.js';
import { inRange, exampleEmbeddings, EXAMPLE_TOKENS } from './state.js';
import { exampleInputs } from './views/example.js';


export const NUMBER_IDS = ['dModel', 'numHeads', 'numLayers', 'dFF', 'seed', 'base', 'pePositions', 'padTo'];
const SELECT_IDS = ['tokenizer', 'arch', 'attention', 'positional', 'activation'];
const VIEW_IDS = ['agg', 'thr', 'topk']; // change only how the trace is drawn: no recompute
const FAMILY_IDS = ['adNq', 'adNk', 'adHidden', 'adValid', 'adSeed', 'krSeed'];
export const TEXT_IDS = ['text', 'source', 'target'];

/** `store`; `about()` redraws the picked model's paragraph (web/models.js). */
export function createControls(store, about) {
  const { state, data } = store;

  /** Shows the boxes the state uses and hides the rest; the worked example's inputs are built when it shows. */
  function syncVisibility() {
    const ex = state.mode === 'example';
    for (const el of document.querySelectorAll('[data-when]')) el.hidden = (el.dataset.when === 'example') !== ex;
    for (const el of document.querySelectorAll('[data-when-attn]')) el.hidden = state.attention !== el.dataset.whenAttn;
    for (const el of document.querySelectorAll('[data-when-pe]')) el.hidden = state.positional !== el.dataset.whenPe;
    for (const el of document.querySelectorAll('[data-when-model]')) if (state.model !== el.dataset.whenModel) el.hidden = true;
    $('checkpoint-box').hidden = ex || !(state.model === 'checkpoint' || data.picking);
    $('attnfile-box').hidden = ex || data.picking || !(state.model === 'file' || data.pickingFile);
    $('model-about').hidden = ex || data.picking || !data.info.bundled.some((m) => m.name === state.model);
    about();
    $('single-input').hidden = (state.arch === 'encoder-decoder' && state.model === 'random') || state.model === 'file';
    $('pair-input').hidden = state.arch !== 'encoder-decoder' || state.model !== 'random';
    $('padTo').disabled = !state.padding;
    const box = $('example-inputs');
    if (!ex) box.replaceChildren();
    else if (!box.firstChild) {
      box.append(exampleInputs({
        embeddings: exampleEmbeddings(state),
        tokens: EXAMPLE_TOKENS,
        onEdit: (rows) => store.update({ ex: rows.flat().join(',') }, { delay: 30 }),
        onReset: () => {
          box.replaceChildren();
          store.update({ ex: '' }, { delay: 0 });
          syncVisibility(); // builds the inputs again, from the published embeddings
        },
      }));
    }
  }

  /** Writes every box from the state. */
  function sync() {
    for (const r of document.querySelectorAll('input[name=mode]')) r.checked = r.value === state.mode;
    for (const id of SELECT_IDS) $(id).value = state[id];
    $('model').value = data.picking ? 'checkpoint' : data.pickingFile ? 'file' : state.model;
    for (const id of [...NUMBER_IDS, ...VIEW_IDS, ...FAMILY_IDS, 'krW']) $(id).value = String(state[id]);
    $('krW-out').textContent = state.krW.toFixed(1);
    $('normFirst').checked = state.normFirst;
    $('padding').checked = state.padding;
    $('causal').checked = state.arch === 'decoder';
    $('causal').disabled = state.arch === 'encoder-decoder';
    for (const id of TEXT_IDS) if ($(id).value !== state[id]) $(id).value = state[id];
    syncVisibility();
  }

  /** A number box's value when it is one the state may take, else undefined (the box is left as typed). */
  const numberIn = (id) => {
    const v = Number($(id).value);
    return $(id).value.trim() !== '' && inRange(id, v) ? v : undefined;
  };

  /** Listens to every box: its value into the store. */
  function wire() {
    const change = (id, v, delay = 0) => store.change(id, v, { delay });
    for (const r of document.querySelectorAll('input[name=mode]')) r.addEventListener('change', () => change('mode', r.value));
    for (const id of SELECT_IDS) $(id).addEventListener('change', () => change(id, $(id).value));
    for (const id of NUMBER_IDS) {
      $(id).addEventListener('input', () => {
        const v = numberIn(id);
        if (v !== undefined) change(id, v, 250);
      });
    }
    $('agg').addEventListener('change', () => store.update({ agg: $('agg').value }));
    $('merge-words').addEventListener('change', () => store.update({ words: $('merge-words').checked }));
    $('hide-sink').addEventListener('change', () => store.update({ nosink: $('hide-sink').checked }));
    for (const id of ['thr', 'topk', ...FAMILY_IDS]) {
      $(id).addEventListener('input', () => {
        const v = numberIn(id);
        if (v !== undefined) store.update({ [id]: v });
      });
    }
    $('krW').addEventListener('input', () => {
      const w = Number($('krW').value);
      $('krW-out').textContent = w.toFixed(1);
      store.update({ krW: w });
    });
    $('model').addEventListener('change', () => {
      const v = $('model').value;
      data.picking = v === 'checkpoint' && !data.info.checkpoint; // choose files first; the current model stays meanwhile
      data.pickingFile = v === 'file' && !data.info.attnFile; // likewise an attention file
      if (!data.picking && !data.pickingFile) change('model', v);
      else syncVisibility();
    });
    $('normFirst').addEventListener('change', () => change('normFirst', $('normFirst').checked));
    $('padding').addEventListener('change', () => change('padding', $('padding').checked));
    $('causal').addEventListener('change', () => { change('arch', $('causal').checked ? 'decoder' : 'encoder'); $('arch').value = state.arch; });
    $('arch').addEventListener('change', () => { $('causal').checked = state.arch === 'decoder'; $('causal').disabled = state.arch === 'encoder-decoder'; });
    // no delay: a key is sent at once when the worker is idle; keys typed while it computes collapse into one run
    // of the newest text, sent when the running one returns (web/compute.js: the newest wins)
    for (const id of TEXT_IDS) $(id).addEventListener('input', () => change(id, $(id).value));
    $('controls').addEventListener('submit', (e) => e.preventDefault());
    $('lang').addEventListener('change', () => store.update({ lang: $('lang').value }));
  }

  return { sync, syncVisibility, wire };
}
