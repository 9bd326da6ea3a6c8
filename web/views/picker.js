// Checkpoint picker (layer: web): pick or drop a Hugging Face checkpoint's files — config.json,
// model.safetensors and tokenizer.json (or the older vocab.json + merges.txt / vocab.txt, T5's spiece.model,
// Marian's source.spm + target.spm + vocab.json), or the folder
// holding them — with a progress bar and a message line. The files stay in the browser: they are handed
// to the compute worker as File objects and read there in chunks (as.loadPretrained); nothing is uploaded.
// Data in, element out; the caller owns loading.
import { h } from '../dom.js';
import { t } from '../i18n.js';

const base = (f) => (f.webkitRelativePath || f.name).split('/').pop();

/**
 * Sorts chosen files into a checkpoint: { files: { config, weights, tokenizer, generationConfig? }, missing: string[],
 * problem?: string }. `tokenizer` is tokenizer.json, or { source, target, vocab } (Marian's source.spm, target.spm,
 * vocab.json) / { sentencepiece } (T5's spiece.model) / { vocab, merges } (GPT-2) / { vocab, tokenizerConfig } (BERT
 * vocab.txt). `weights` is model.safetensors, or the shards model.safetensors.index.json lists, every one of
 * which must be there (their order does not matter to as.loadPretrained); `generationConfig` is
 * generation_config.json when chosen. Other files (README, pytorch_model.bin …) are ignored.
 */
export async function matchCheckpointFiles(list) {
  const byName = new Map();
  for (const f of list) byName.set(base(f), f);
  const config = byName.get('config.json');
  const shards = [...byName.keys()].filter((n) => n.endsWith('.safetensors'));
  const index = byName.get('model.safetensors.index.json');
  // one *.safetensors of another name is the weights, unless an index says they are shards
  let weights = byName.get('model.safetensors') ?? (shards.length === 1 && !index ? byName.get(shards[0]) : undefined);
  const missing = [];
  if (!weights && index) {
    const listed = await shardNames(index);
    if (typeof listed === 'string') return { files: {}, missing, problem: listed };
    const absent = listed.filter((n) => !byName.has(n));
    if (absent.length) missing.push(...absent);
    else weights = listed.map((n) => byName.get(n));
  }
  let tokenizer = byName.get('tokenizer.json');
  // Marian (opus-mt-*): its two SentencePiece models and the vocab.json mapping their pieces to ids, all three
  const marian = ['source.spm', 'target.spm', 'vocab.json'];
  const marianMissing = !tokenizer && marian.slice(0, 2).some((n) => byName.has(n)) ? marian.filter((n) => !byName.has(n)) : [];
  if (!tokenizer && marian.every((n) => byName.has(n))) {
    tokenizer = { source: byName.get('source.spm'), target: byName.get('target.spm'), vocab: byName.get('vocab.json') };
  } else if (!tokenizer && byName.has('spiece.model')) {
    tokenizer = { sentencepiece: byName.get('spiece.model') }; // T5's SentencePiece model
  } else if (!tokenizer && !marianMissing.length && byName.has('vocab.json') && byName.has('merges.txt')) {
    tokenizer = { vocab: byName.get('vocab.json'), merges: byName.get('merges.txt') };
  } else if (!tokenizer && byName.has('vocab.txt')) {
    tokenizer = { vocab: byName.get('vocab.txt'), tokenizerConfig: byName.get('tokenizer_config.json') };
  }
  if (!config) missing.push('config.json');
  if (!weights && !index) missing.push(shards.length > 1 ? t('checkpoint.needIndex') : 'model.safetensors');
  if (marianMissing.length) missing.push(t('checkpoint.needMarian', { files: marianMissing.join(t('checkpoint.listSep')) }));
  else if (!tokenizer) missing.push(t('checkpoint.needTokenizer'));
  const files = { config, weights, tokenizer };
  if (byName.has('generation_config.json')) files.generationConfig = byName.get('generation_config.json');
  return { files, missing };
}

/** The shard file names model.safetensors.index.json's weight_map lists (sorted), or a message naming the problem. */
async function shardNames(index) {
  let json;
  try {
    json = JSON.parse(await index.text());
  } catch (err) {
    return `${base(index)}: ${t('checkpoint.notJson', { message: err.message })}`;
  }
  const map = json?.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map) || !Object.values(map).every((v) => typeof v === 'string')) {
    return `${base(index)}: ${t('checkpoint.noWeightMap')}`;
  }
  return [...new Set(Object.values(map))].sort();
}

/**
 * checkpointBox({ onFiles, onCancel, stays }) → { el, progress(fraction | null), message(text, isError) }.
 * `onFiles(files)` gets the matched { config, weights, tokenizer, generationConfig? } once they are all there;
 * `onCancel()` is the Cancel button's, shown with the progress bar; `stays()` says what the page keeps when the
 * chosen files cannot be used (an unreadable model.safetensors.index.json), as a failed load says it.
 */
export function checkpointBox({ onFiles, onCancel = () => {}, stays = () => t('checkpoint.previousStays') }) {
  const msg = h('p', { class: 'ckpt-msg', id: 'ckpt-msg', 'aria-live': 'polite' });
  const bar = h('progress', { id: 'ckpt-progress', max: 1, value: 0, hidden: true, 'aria-label': t('checkpoint.progressAria'), 'data-i18n-attr': 'aria-label:checkpoint.progressAria' });
  const message = (text, isError = false) => {
    msg.textContent = text;
    msg.classList.toggle('error', isError);
    msg.setAttribute('role', isError ? 'alert' : 'status');
  };
  const cancel = h('button', { type: 'button', class: 'btn', id: 'ckpt-cancel', hidden: true, text: t('checkpoint.cancel'), 'data-i18n': 'checkpoint.cancel' });
  cancel.addEventListener('click', () => onCancel());
  const progress = (f) => {
    bar.hidden = f == null;
    cancel.hidden = f == null;
    if (f != null) bar.value = f;
  };
  const take = async (list) => {
    const { files, missing, problem } = await matchCheckpointFiles(list);
    if (problem) {
      message(t('checkpoint.failed', { message: problem, what: stays() }), true);
      return;
    }
    if (missing.length) {
      message(t('checkpoint.missing', { files: missing.join(t('checkpoint.listSep')) }), list.length > 0);
      return;
    }
    onFiles(files);
  };
  const files = h('input', { type: 'file', id: 'ckpt-files', multiple: true, accept: '.json,.safetensors,.txt,.model,.spm' });
  const folder = h('input', { type: 'file', id: 'ckpt-folder', webkitdirectory: '' });
  files.addEventListener('change', () => take([...files.files]));
  folder.addEventListener('change', () => take([...folder.files]));
  const drop = h('div', { class: 'ckpt-drop', id: 'ckpt-drop', tabindex: '-1' },
    // data-i18n: the box is built once, so a language switch (applyI18n) rewrites its strings in place
    h('p', { text: t('checkpoint.drop'), 'data-i18n': 'checkpoint.drop' }),
    h('div', { class: 'ctl-row' },
      h('label', { class: 'btn file-btn' }, h('span', { text: t('checkpoint.files'), 'data-i18n': 'checkpoint.files' }), files),
      h('label', { class: 'btn file-btn' }, h('span', { text: t('checkpoint.folder'), 'data-i18n': 'checkpoint.folder' }), folder)),
    h('p', { class: 'note', text: t('checkpoint.about'), 'data-i18n': 'checkpoint.about' }),
    h('p', { class: 'note', text: t('checkpoint.aboutModern'), 'data-i18n': 'checkpoint.aboutModern' }),
    h('p', { class: 'note', text: t('checkpoint.aboutEncDec'), 'data-i18n': 'checkpoint.aboutEncDec' }));
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    take(await droppedFiles(e.dataTransfer));
  });
  const el = h('div', { class: 'ckpt-box' }, drop, h('div', { class: 'ctl-row' }, bar, cancel), msg);
  return { el, progress, message };
}

/** Files from a drop, folders walked (webkitGetAsEntry); plain files when entries are not available. */
async function droppedFiles(dt) {
  const entries = [...(dt.items ?? [])].map((it) => it.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.length) return [...(dt.files ?? [])];
  const out = [];
  const walk = async (entry) => {
    if (entry.isFile) {
      out.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (!batch.length) break;
        for (const child of batch) await walk(child);
      }
    }
  };
  for (const entry of entries) await walk(entry);
  return out;
}
