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
    b.setAttribute('aria-label', t('export.aria', { what, format: b.dataset.format.toUpperCase() }));
  }
}

/** Switches the page to `lang` ('' follows the browser): html[lang], the picker, the guided path's link, the strings. */
export function useLanguage(lang) {
  setLanguage(lang);
  document.documentElement.lang = language();
  $('lang').value = language();
  const learn = $('learn-link'); // the guided path opens in the same language (its href: learn/ or the single file's)
  if (learn) learn.setAttribute('href', `${learn.getAttribute('href').split('#')[0]}#lang=${language()}`);
  applyPageStrings();
}
