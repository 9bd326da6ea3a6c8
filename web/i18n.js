// i18n (layer: web): the page's UI strings in English and Simplified Chinese — one owner for the language choice
// and for looking a string up. No DOM access except applyI18n(root).
//
//   import { t, register, language, setLanguage, onLanguageChange, applyI18n } from './i18n.js';
//   register('en', { 'controls.mode': 'Mode', 'status.ready': 'ready: {simd} build' });
//   register('zh-CN', { 'controls.mode': '模式', 'status.ready': '就绪：{simd} 版本' });
//   t('status.ready', { simd: 'SIMD' })      // the current language's string, {name} filled from vars
//   <span data-i18n="controls.mode"></span>  // applyI18n(document) sets its textContent
//   <input data-i18n-attr="placeholder:text.placeholder;aria-label:text.label">
//
// The language: an explicit choice (setLanguage, e.g. from the URL's `lang=`) wins, else the first of the
// browser's languages we have (navigator.languages: zh, zh-CN, zh-Hans… → zh-CN; en-* → en), else English.
// A key missing in the current language falls back to English, then to the key itself (so a missing string
// is visible, never blank). Values are plain text: callers write them with textContent only.

export const LANGUAGES = Object.freeze(['en', 'zh-CN']);
export const LANGUAGE_NAMES = Object.freeze({ en: 'English', 'zh-CN': '简体中文' });

const catalogs = { en: Object.create(null), 'zh-CN': Object.create(null) };
const listeners = new Set();
let current = 'en';

/** The supported language a BCP 47 tag maps to, or null: zh, zh-CN, zh-Hans, zh-SG → zh-CN; en-* → en. */
export function normalizeLanguage(tag) {
  if (typeof tag !== 'string') return null;
  const t = tag.trim().toLowerCase();
  if (t === 'zh' || t.startsWith('zh-cn') || t.startsWith('zh-hans') || t.startsWith('zh-sg')) return 'zh-CN';
  if (t === 'en' || t.startsWith('en-')) return 'en';
  return null;
}

/** The language to start in: `explicit` (e.g. the URL's lang=) if supported, else the browser's, else 'en'. */
export function detectLanguage(explicit, preferred = globalThis.navigator?.languages ?? []) {
  const chosen = normalizeLanguage(explicit);
  if (chosen) return chosen;
  for (const tag of preferred) {
    const lang = normalizeLanguage(tag);
    if (lang) return lang;
  }
  return 'en';
}

/** Adds strings to a language's catalog (later registrations override earlier ones for the same key). */
export function register(lang, entries) {
  if (!catalogs[lang]) throw new Error(`i18n.register: language ("${lang}") must be one of ${LANGUAGES.join(', ')}`);
  for (const [key, value] of Object.entries(entries)) {
    if (typeof value !== 'string') throw new TypeError(`i18n.register: ${lang} "${key}" must be a string`);
    catalogs[lang][key] = value;
  }
}

/** The string for `key` in the current language (English, then the key, as fallbacks), {name} from vars. */
export function t(key, vars) {
  const s = catalogs[current][key] ?? catalogs.en[key] ?? key;
  if (!vars) return s;
  return s.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
}

/** Whether `key` has a string in `lang` (tests use it to find untranslated keys). */
export function has(lang, key) { return Boolean(catalogs[lang]) && key in catalogs[lang]; }

/** Every key registered in `lang`. */
export function keys(lang) { return Object.keys(catalogs[lang] ?? {}); }

export function language() { return current; }

/** Switches the language; listeners run only on a change. Unsupported tags are ignored (returns false). */
export function setLanguage(tag) {
  const lang = normalizeLanguage(tag);
  if (!lang) return false;
  if (lang === current) return true;
  current = lang;
  if (globalThis.document?.documentElement) globalThis.document.documentElement.lang = lang;
  for (const fn of listeners) fn(lang);
  return true;
}

/** Calls fn(lang) after each language change; returns a function that unsubscribes it. */
export function onLanguageChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Fills [data-i18n] textContent and [data-i18n-attr] attributes ("attr:key;attr:key") under root. */
export function applyI18n(root) {
  // only what differs is written: the page's start in English rewrote every string with itself, which made the
  // browser lay the whole page out again before the first run could be sent (a warm load's trace)
  for (const el of root.querySelectorAll('[data-i18n]')) {
    const text = t(el.dataset.i18n);
    if (el.textContent !== text) el.textContent = text;
  }
  for (const el of root.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of el.dataset.i18nAttr.split(';')) {
      const [attr, key] = pair.split(':').map((s) => s.trim());
      if (attr && key && el.getAttribute(attr) !== t(key)) el.setAttribute(attr, t(key));
    }
  }
}
