// The page's string catalogs (web/locales/en.js, web/locales/zh-CN.js, through web/i18n.js): both languages have
// the same keys with the same {placeholders}, every key the page uses — t('…') / tr('…') calls in web/*.js and
// web/views/*.js, data-i18n and data-i18n-attr in web/index.html — exists, every catalog key is used, and the
// language detection and lookup rules hold. The guided path (web/learn/) has its own catalogs and test.
// Run: node --test tests/js/i18n.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { root } from './helpers.js';
import {
  t, keys, has, detectLanguage, normalizeLanguage, setLanguage, language,
} from '../../web/i18n.js';
import '../../web/locales/en.js';
import '../../web/locales/zh-CN.js';

const web = path.join(root, 'web');
const PAGE_JS = [
  ...readdirSync(web).filter((f) => f.endsWith('.js') && f !== 'i18n.js').map((f) => path.join(web, f)), // i18n.js: the library
  ...['views', 'panels'].flatMap((dir) => readdirSync(path.join(web, dir)).filter((f) => f.endsWith('.js')).map((f) => path.join(web, dir, f))),
];
const HTML = readFileSync(path.join(web, 'index.html'), 'utf8');
const KEY = /^[a-z][A-Za-z0-9]*(\.[A-Za-z0-9]+)+$/;

/** The argument text of every t( / tr( call in `src` (parentheses and quotes balanced). */
function callArgs(src) {
  const out = [];
  for (const m of src.matchAll(/(?<![\w.$])(?:t|tr)\(/g)) {
    let depth = 1;
    let k = m.index + m[0].length;
    let quote = null;
    for (; k < src.length && depth > 0; k++) {
      const c = src[k];
      if (quote) {
        if (c === '\\') k++;
        else if (c === quote) quote = null;
      } else if (c === '\'' || c === '"' || c === '`') quote = c;
      else if (c === '(') depth++;
      else if (c === ')') depth--;
    }
    out.push(src.slice(m.index + m[0].length, k - 1));
  }
  return out;
}

/**
 * Keys used by the page: { exact: Map key -> file, prefixes: Map prefix -> file (template keys `a.b.${x}`),
 * mentioned: Set of every key-shaped literal in the code (tables of keys such as web/views/heads.js's) }.
 */
function usedKeys() {
  const exact = new Map();
  const prefixes = new Map();
  const mentioned = new Set();
  for (const file of PAGE_JS) {
    const src = readFileSync(file, 'utf8');
    const rel = path.relative(root, file);
    for (const s of src.matchAll(/'([^'\\\n]*)'/g)) if (KEY.test(s[1])) mentioned.add(s[1]);
    for (const args of callArgs(src)) {
      for (const s of args.matchAll(/'([^'\\]*)'/g)) if (KEY.test(s[1])) exact.set(s[1], rel);
      for (const s of args.matchAll(/`([a-z][\w.]*\.)\$\{/g)) prefixes.set(s[1], rel);
    }
  }
  for (const m of HTML.matchAll(/data-i18n="([^"]+)"/g)) exact.set(m[1], 'web/index.html');
  for (const m of HTML.matchAll(/data-i18n-attr="([^"]+)"/g)) {
    for (const pair of m[1].split(';')) exact.set(pair.split(':')[1].trim(), 'web/index.html');
  }
  return { exact, prefixes, mentioned };
}

const placeholders = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test('i18n: English and Simplified Chinese have the same keys, each a non-empty string', () => {
  const en = keys('en').sort();
  const zh = keys('zh-CN').sort();
  assert.ok(en.length > 250, `the page has its strings in the catalog (${en.length} keys)`);
  assert.deepEqual(en.filter((k) => !has('zh-CN', k)), [], 'every English key has a Chinese string');
  assert.deepEqual(zh.filter((k) => !has('en', k)), [], 'every Chinese key has an English string');
  setLanguage('en');
  for (const k of en) assert.ok(t(k).trim().length > 0, `en ${k} is not empty`);
  setLanguage('zh-CN');
  for (const k of zh) assert.ok(t(k).trim().length > 0, `zh-CN ${k} is not empty`);
  setLanguage('en');
});

test('i18n: every key has the same {placeholders} in both languages', () => {
  const bad = [];
  for (const k of keys('en')) {
    setLanguage('en');
    const a = placeholders(t(k));
    setLanguage('zh-CN');
    const b = placeholders(t(k));
    if (a.join() !== b.join()) bad.push(`${k}: en {${a}} zh-CN {${b}}`);
  }
  setLanguage('en');
  assert.deepEqual(bad, []);
});

test('i18n: the Chinese strings are Chinese (no catalog value left in English)', () => {
  // a zh-CN value equal to the English one must be a symbol or a name (d_model, GPT-2 BPE, {build} wasm …)
  const same = [];
  for (const k of keys('en')) {
    setLanguage('en');
    const a = t(k);
    setLanguage('zh-CN');
    const b = t(k);
    if (a === b && /[a-z]{4,}/i.test(a.replace(/\{\w+\}/g, ''))) same.push(`${k}: ${a}`);
  }
  setLanguage('en');
  assert.deepEqual(same, ['status.build: {build} wasm · v{version}', 'status.simd: SIMD128'], 'only names stay as they are');
});

test('i18n: every key web/ uses exists, and every catalog key is used', () => {
  const { exact, prefixes, mentioned } = usedKeys();
  assert.ok(exact.size > 250, `keys found in the page's code (${exact.size})`);
  const missing = [...exact].filter(([k]) => !has('en', k)).map(([k, f]) => `${k} (${f})`);
  assert.deepEqual(missing, [], 'keys used in web/ but not in web/locales');
  for (const [p, f] of prefixes) assert.ok(keys('en').some((k) => k.startsWith(p)), `a key starts with ${p} (${f})`);
  // the export buttons' names: export.what.<view> for every data-export of index.html
  for (const m of HTML.matchAll(/data-export="(\w+)"/g)) assert.ok(has('en', `export.what.${m[1]}`), `export.what.${m[1]}`);
  const unused = keys('en').filter((k) => !exact.has(k) && !mentioned.has(k) && ![...prefixes.keys()].some((p) => k.startsWith(p)));
  assert.deepEqual(unused, [], 'catalog keys no code uses');
});

test('i18n: the language follows the URL, then the browser, then English; t() fills placeholders', () => {
  assert.equal(detectLanguage('zh-CN', ['en-US']), 'zh-CN');
  assert.equal(detectLanguage('', ['zh-TW', 'zh-Hans-CN', 'en']), 'zh-CN', 'zh-Hans is Simplified Chinese');
  assert.equal(detectLanguage(undefined, ['fr-FR', 'zh']), 'zh-CN');
  assert.equal(detectLanguage('xx', ['de', 'fr']), 'en');
  assert.equal(detectLanguage('en', ['zh-CN']), 'en', 'an explicit choice wins over the browser');
  assert.equal(normalizeLanguage('zh-TW'), null, 'Traditional Chinese is not offered as Simplified');
  setLanguage('zh-CN');
  assert.equal(language(), 'zh-CN');
  assert.equal(t('status.timing', { compute: '1.5', render: '2.0' }), '计算 1.5 ms，绘制 2.0 ms');
  assert.equal(t('heatmap.cell', { row: '查询', i: 0, rowToken: ' “猫”', col: '键', j: 2, colToken: ' “垫”', value: '0.2500' }),
    '查询 0 “猫” · 键 2 “垫”：0.2500');
  assert.equal(t('no.such.key'), 'no.such.key', 'a missing key shows itself, never blank');
  setLanguage('en');
  assert.equal(t('input.summary', { n: 3, pad: '', dModel: 16, heads: t('input.heads.other', { n: 4, d: 4 }), layers: t('input.layers.one', { n: 1 }) }),
    '3 tokens · dModel 16 · 4 heads of 4 dims · 1 layer');
});
