// DOM helpers for the page (layer: web). Elements are built with createElement and text with
// textContent / text nodes only — user text never passes through an HTML parser (STYLE 4.5).

/** The element with id `id`. */
export const $ = (id) => document.getElementById(id);

/** h('div', { class, text, dataset, style, onclick, ...attrs }, ...children) → HTMLElement. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** SVG element with attributes (strings) and children. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null) continue;
    if (k === 'text') el.textContent = String(v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function setProps(el, props) {
  for (const [k, v] of Object.entries(props)) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style') Object.assign(el.style, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Removes every child and appends the new ones. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * Makes `wanted` (elements) the children of `el`, in order, moving only what must move: children that stay are not
 * detached (detaching a view of 512 token labels and attaching it again restyled and relaid out all of them).
 */
export function syncChildren(el, wanted) {
  const keep = new Set(wanted);
  for (const c of [...el.children]) if (!keep.has(c)) c.remove();
  wanted.forEach((w, i) => {
    const at = el.children[i] ?? null;
    if (at !== w) el.insertBefore(w, at);
  });
  return el;
}

/** Runs `fn` when the page is next idle (within `timeout` ms at the latest). */
export function whenIdle(fn, timeout = 300) {
  return typeof requestIdleCallback === 'function' ? requestIdleCallback(fn, { timeout }) : setTimeout(fn, 16);
}

/** A number to `digits` decimals; −∞ for masked scores. */
export function fmt(v, digits = 4) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Number.isNaN(v)) return '—';
  const t = v.toFixed(digits);
  return t.startsWith('-') ? `−${t.slice(1)}` : t;
}

/** A token as a short visible label: spaces and newlines made visible, long tokens cut. */
export function tokenLabel(t, max = 14) {
  let v = String(t).replace(/\n/g, '⏎').replace(/\t/g, '⇥').replace(/\r/g, '');
  if (/^\s|\s$/.test(v) || v === '') v = v.replace(/ /g, '␣');
  if (v === '') v = '∅';
  const chars = Array.from(v);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : v;
}
