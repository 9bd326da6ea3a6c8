// The attention file the page shows (layer: web): the picker's box, opening the chosen file in the compute worker
// (web/attnfile.js; the File is read there and never sent anywhere), and switching the page to it. A file that
// fails to open leaves the page as it was, with the error (naming the tensor or field) in the box.
import { $ } from './dom.js';
import { t } from './i18n.js';
import { fileBox } from './views/filebox.js';

const marks = document.documentElement.dataset;
const size = (b) => (b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(1)} GB` : b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MB` : `${(b / 1024).toFixed(1)} kB`);

/** '{n} layers' and '{n} heads' in the page's language, singular for one. */
export const counts = (layers, heads) => ({
  layers: t(`input.layers.${layers === 1 ? 'one' : 'other'}`, { n: layers }),
  heads: t(`attnfile.heads.${heads === 1 ? 'one' : 'other'}`, { n: heads }),
});

/** `store`, `compute`; `page`: { opened() (the state's model is now 'file') }. Returns { name() }. */
export function createFiles(store, compute, page) {
  const { state, data } = store;
  let opening = null; // the open whose answer counts (a newer one replaces it)
  const box = fileBox({ onFile: open });
  $('attnfile-box').append(box.el);

  function open(file) {
    box.message(t('attnfile.opening', { name: file.name, size: size(file.size) }));
    marks.opening = '1';
    const p = compute.call('openFile', { file });
    opening = p;
    p.then(({ value: info, ms }) => {
      if (opening !== p) return;
      delete marks.opening;
      data.info.attnFile = info;
      data.pickingFile = false;
      box.message(t(info.whole ? 'attnfile.opened' : 'attnfile.openedLazy', {
        name: info.name, ...counts(info.numLayers, info.numHeads), n: info.n, size: size(info.size), s: (ms / 1000).toFixed(2),
      }));
      Object.assign(state, { model: 'file', heads: 'all', layer: 0, token: 0, mode: 'text' });
      page.opened();
    }, (err) => {
      if (opening !== p) return;
      delete marks.opening;
      const what = state.model === 'file' ? 'attnfile.previousStays' : 'attnfile.pageStays';
      box.message(t('attnfile.failed', { name: file.name, message: err.message, what: t(what) }), true);
    });
  }

  return {
    /** The open file as the status line names it. */
    name: () => { const f = data.info.attnFile; return f ? t('attnfile.named', { name: f.name, model: f.model ?? '—' }) : t('attnfile.none'); },
  };
}
