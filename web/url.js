// The link (layer: web): the one owner of location.hash. The store's state is written to it (only what differs
// from the defaults, web/state.js serialize), now or in a task of its own; a hash the user typed or a link
// followed in the same page is read back (onChange), the page's own writes are not.
import { parse, serialize } from './state.js';

/** The link of `state` (a live object: read when written). */
export function createUrl(state) {
  let written = location.hash;
  let timer = 0;

  /** Writes the link now. */
  function save() {
    clearTimeout(timer);
    timer = 0;
    const hash = serialize(state);
    written = hash;
    history.replaceState(null, '', hash || `${location.pathname}${location.search}`);
  }

  return {
    save,
    /** Writes the link in a task of its own: with a long text replaceState takes 10–20 ms, kept out of a click's task. */
    saveSoon() {
      if (!timer) timer = setTimeout(save, 0);
    },
    /** Writes a link still due now (before it is copied). */
    flush() {
      if (timer) save();
    },
    /** Calls `fn(state)` with the state of a hash the page did not write itself. */
    onChange(fn) {
      window.addEventListener('hashchange', () => {
        if (location.hash === written) return;
        written = location.hash;
        fn(parse(location.hash));
      });
    },
  };
}
