// Attention-file picker (layer: web): pick or drop one attention file (.safetensors written by attnscope.save or
// any tool following API.md "Attention files"), with a message line. The file stays in the browser: it is handed
// to the compute worker as a File and read there with Blob.slice, a head at a time; nothing is uploaded. Data in,
// element out; the caller owns opening. The same box serves the compare panel's two slots (`id` prefixes its ids).
import { h } from '../dom.js';
import { t } from '../i18n.js';

/** fileBox({ id, onFile, label? }) → { el, message(text, isError) }; `onFile(file)` gets the one file chosen or dropped. */
export function fileBox({ id = 'attnfile', onFile, label = 'attnfile.choose' }) {
  const msg = h('p', { class: 'ckpt-msg', id: `${id}-msg`, 'aria-live': 'polite' });
  const message = (text, isError = false) => {
    msg.textContent = text;
    msg.classList.toggle('error', isError);
    msg.setAttribute('role', isError ? 'alert' : 'status');
  };
  const take = (list) => {
    if (list.length !== 1) {
      message(t('attnfile.one', { count: list.length }), true);
      return;
    }
    onFile(list[0]);
  };
  const input = h('input', { type: 'file', id: `${id}-input`, accept: '.safetensors,application/octet-stream' });
  input.addEventListener('change', () => {
    take([...input.files]);
    input.value = ''; // the same file chosen again opens again
  });
  const drop = h('div', { class: 'ckpt-drop', id: `${id}-drop`, tabindex: '-1' },
    h('p', { text: t('attnfile.drop'), 'data-i18n': 'attnfile.drop' }),
    h('div', { class: 'ctl-row' },
      h('label', { class: 'btn file-btn' }, h('span', { text: t(label), 'data-i18n': label }), input)),
    h('p', { class: 'note', text: t('attnfile.about'), 'data-i18n': 'attnfile.about' }));
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    take([...(e.dataTransfer?.files ?? [])]);
  });
  return { el: h('div', { class: 'ckpt-box' }, drop, msg), message };
}
