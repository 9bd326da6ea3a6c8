// The UI language (layer: web; strings in web/i18n.js): the link's lang=, else the browser's; a switch rewrites
// the page's strings in place, no reload (what else redraws listens with i18n's onLanguageChange).
import { $ } from './dom.js';
import { t, setLanguage, language, applyI18n } from './i18n.js';


/** Strings that are not plain [data-i18n] text: the document's title, the export buttons' names. */
export function applyPageStrings() {
  applyI18n(document);
  document.title = t('page.title');
  for (const b of document.querySelectorAll('button[data-export]')) {
    const what = b.dataset.attention ? t(`export.what.${b.dataset.export}.${b.dataset.attention}`) : t(`export.what.${b.dataset.export}`);
    const label = t('export.aria', { what, format: b.dataset.format.toUpperCase() });
    if (b.getAttribute('aria-label') !== label) b.setAttribute('aria-label', label); // (unchanged: not written, as applyI18n)
  }
}

/** Switches the page to `lang` ('' follows the browser): html[lang], the picker, the guided path's link, the strings. */
export function useLanguage(lang) {
  setLanguage(lang);
  if (document.documentElement.lang !== language()) document.documentElement.lang = language(); // a new lang restyles the page
  $('lang').value = language();
  const learn = $('learn-link'); // the guided path opens in the same language (its href: learn/ or the single file's)
  if (learn) learn.setAttribute('href', `${learn.getAttribute('href').split('#')[0]}#lang=${language()}`);
  applyPageStrings();
}
