// Argument checks for every public function, run before anything reaches wasm. One policy for the whole
// layer (model.js, pretrained.js and bundled.js follow it too): JS checks what only JS can see — the
// argument's JS type, required and unknown keys, that an integer fits the core's int, and that each array
// has the length its dimensions give (the marshalling: what is copied into wasm memory, and the element limit
// on what is copied out). Every rule about values — positive dimensions, finiteness of numbers and tensors,
// divisibility, ranges such as validLen <= nk — has one owner, the C++ core (src/ops/validate.h,
// src/core/check.h), whose messages read `${fn}: ${arg} (${value}) must be …`. A spec maps each option name to
// a checker; unknown options throw.
import { fail } from './errors.js';

const MAX_ELEMENTS = 2 ** 26; // largest tensor (256 MiB of float32) one call may produce or take

function show(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number') return Object.is(v, -0) ? '0' : String(v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an Array';
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  return typeof v;
}

// ---- the JS-type rules every module of the layer shares (one owner each)

/** A value's type as messages name it: 'null', 'Array', 'Float32Array', 'Blob', or typeof. */
export function typeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'Array';
  if (ArrayBuffer.isView(v)) return v.constructor.name;
  if (typeof Blob !== 'undefined' && v instanceof Blob) return v.constructor.name;
  if (typeof v === 'object') {
    const tag = Object.prototype.toString.call(v).slice(8, -1); // Map, Date, RegExp, ArrayBuffer, Promise, …
    if (tag !== 'Object') return tag;
  }
  return typeof v;
}

/**
 * An options/config object: `{ … }` or a class instance, not an array, typed array, Blob, Map, Date, RegExp,
 * ArrayBuffer or any other built-in with its own tag (a Map given as options would otherwise read as no options).
 * The tag test, not a prototype test, so that objects from another realm (a vm context, an iframe) still count.
 */
export const isPlainObject = (v) => v !== null && typeof v === 'object' && Object.prototype.toString.call(v) === '[object Object]';

/**
 * JS strings may hold lone surrogates; the core takes UTF-8, so they are replaced (one code unit each, offsets
 * unchanged) as TextEncoder would.
 */
export const wellFormed = (s) => (typeof s.toWellFormed === 'function' ? s.toWellFormed() : s);

// ---- checkers: (fn, name, value, args) -> normalised value (or undefined for an absent optional)

/**
 * An integer argument (a dimension): a number, an integer, at most `max`. Its range (positive, non-negative)
 * is the core's check; a dimension that is not positive skips the length checks that use it (see f32), so
 * the core's message about the dimension is the one the caller sees.
 */
export const int = ({ optional = false, max = MAX_ELEMENTS } = {}) => scalar((fn, name, v) => {
  if (v === undefined) {
    if (optional) return undefined;
    fail('TypeError', `${fn}: ${name} is required`);
  }
  if (typeof v !== 'number') fail('TypeError', `${fn}: ${name} must be a number, got ${typeName(v)}`);
  if (!Number.isInteger(v)) fail('RangeError', `${fn}: ${name} (${show(v)}) must be an integer`);
  if (Math.abs(v) > max) fail('RangeError', `${fn}: ${name} (${show(v)}) must be at most ${max}`);
  return v;
});

/** A number argument; whether it must be finite or positive is the core's check. */
export const num = ({ optional = true } = {}) => scalar((fn, name, v) => {
  if (v === undefined) {
    if (optional) return undefined;
    fail('TypeError', `${fn}: ${name} is required`);
  }
  if (typeof v !== 'number') fail('TypeError', `${fn}: ${name} must be a number, got ${typeName(v)}`);
  return v;
});

export const bool = () => scalar((fn, name, v) => {
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') fail('TypeError', `${fn}: ${name} must be a boolean, got ${typeName(v)}`);
  return v;
});

export const oneOf = (...values) => scalar((fn, name, v) => {
  if (v === undefined) return undefined;
  if (!values.includes(v)) {
    fail(typeof v === 'string' ? 'RangeError' : 'TypeError',
      `${fn}: ${name} (${show(v)}) must be one of ${values.map((x) => `'${x}'`).join(', ')}`);
  }
  return v;
});

function isNumberArrayLike(v) {
  return (ArrayBuffer.isView(v) && !(v instanceof DataView) && typeof v[Symbol.iterator] === 'function') || Array.isArray(v);
}

/**
 * A float32 tensor. `len(args)` gives the expected length and `shape(args)` its description, e.g.
 * 'nq*dk = 3*4'; the length is checked only when every dimension is positive (NaN otherwise: the core then
 * reports the dimension). Plain arrays and other typed arrays are converted to a fresh Float32Array. The
 * elements' finiteness is the core's check, vectorized and worded `${fn}: ${name}[i] (NaN) must be finite`
 * (softmax: `… must be finite or -Infinity`).
 */
export const f32 = ({ len, shape, optional = false } = {}) => (fn, name, v, args) => {
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail('TypeError', `${fn}: ${name} is required`);
  }
  if (!isNumberArrayLike(v) || typeof v[0] === 'bigint') {
    fail('TypeError', `${fn}: ${name} must be a Float32Array, got ${typeName(v)}`);
  }
  let a = v;
  if (!(v instanceof Float32Array)) {
    if (Array.isArray(v)) {
      const bad = v.findIndex((x) => typeof x !== 'number');
      if (bad >= 0) fail('TypeError', `${fn}: ${name}[${bad}] must be a number, got ${typeName(v[bad])}`);
    }
    a = Float32Array.from(v);
  }
  if (a.length > MAX_ELEMENTS) fail('RangeError', `${fn}: ${name} has ${a.length} elements, more than the limit ${MAX_ELEMENTS}`);
  if (len) {
    const want = len(args);
    if (want > 0 && a.length !== want) {
      fail('RangeError', `${fn}: ${name} must have length ${want} (${shape(args)}), got ${a.length}`);
    }
  }
  return a;
};

/** A 0/1 mask of `len(args)` entries; accepts Uint8Array, other integer arrays and boolean arrays. */
export const mask = ({ len, shape } = {}) => (fn, name, v, args) => {
  if (v === undefined || v === null) return undefined;
  if (!isNumberArrayLike(v)) fail('TypeError', `${fn}: ${name} must be a Uint8Array, got ${typeName(v)}`);
  const want = len(args);
  if (want > 0 && v.length !== want) fail('RangeError', `${fn}: ${name} must have length ${want} (${shape(args)}), got ${v.length}`);
  const out = new Uint8Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (x === 1 || x === true) out[i] = 1;
    else if (x !== 0 && x !== false) fail('RangeError', `${fn}: ${name}[${i}] (${show(x)}) must be 0 or 1`);
  }
  return out;
};

/** A nested object of tensors checked with `spec` (layer parameters); names read `params.wq`. */
export const object = (spec, { optional = false } = {}) => (fn, name, v, args) => {
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail('TypeError', `${fn}: ${name} is required`);
  }
  if (typeof v !== 'object' || isNumberArrayLike(v)) fail('TypeError', `${fn}: ${name} must be an object, got ${typeName(v)}`);
  return checkObject(fn, spec, v, args, `${name}.`);
};

function checkObject(fn, spec, obj, args, prefix) {
  for (const key of Object.keys(obj)) {
    if (!Object.hasOwn(spec, key)) fail('TypeError', `${fn}: unknown option '${prefix}${key}'`);
  }
  const out = {};
  for (const [key, check] of Object.entries(spec)) {
    const value = check(fn, `${prefix}${key}`, obj[key], args);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Validates the single argument object of `fn`: it must be a plain object, every key known, then
 * integers first (so lengths can be computed), then everything else in spec order. `defaults(args)`
 * fills defaults that depend on other arguments before arrays are checked; `after(args)` runs
 * cross-argument checks of JS types. Returns the normalised object.
 */
export function validate(fn, spec, input, { defaults, after, outputs } = {}) {
  if (!isPlainObject(input)) {
    fail('TypeError', `${fn}: expected one argument object, got ${typeName(input)}`);
  }
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(spec, key)) fail('TypeError', `${fn}: unknown option '${key}'`);
  }
  const args = {};
  const entries = Object.entries(spec);
  // Scalars (ints/numbers/bools/enums) first, so tensor lengths can use them.
  for (const [key, check] of entries.filter(([, c]) => c.scalar)) {
    const value = check(fn, key, input[key], args);
    if (value !== undefined) args[key] = value;
  }
  if (defaults) defaults(args, input);
  if (after) after(args);
  if (outputs) {
    for (const [name, size, shape] of outputs(args)) {
      if (size > MAX_ELEMENTS) {
        fail('RangeError', `${fn}: ${name} would have ${size} elements (${shape}), more than the limit ${MAX_ELEMENTS}`);
      }
    }
  }
  for (const [key, check] of entries.filter(([, c]) => !c.scalar)) {
    const value = check(fn, key, input[key], args);
    if (value !== undefined) args[key] = value;
  }
  return args;
}

/** Marks a checker as scalar (checked before tensors). */
export function scalar(check) {
  check.scalar = true;
  return check;
}

/** ids as an Int32Array: an Int32Array, typed array or array of integers in [0, 2^31). */
export function idArray(fn, name, v) {
  if (!(Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView)))) {
    fail('TypeError', `${fn}: ${name} must be an Int32Array or an array of integers`);
  }
  for (let i = 0; i < v.length; i++) {
    if (!Number.isInteger(v[i]) || v[i] < 0 || v[i] > 0x7fffffff) {
      fail('RangeError', `${fn}: ${name}[${i}] (${v[i]}) must be a non-negative integer id`);
    }
  }
  return Int32Array.from(v);
}

export function checkString(fn, name, v) {
  if (typeof v !== 'string') fail('TypeError', `${fn}: ${name} must be a string, got ${typeName(v)}`);
  return v;
}

/** An encoder-decoder's `{ source, target }`: no other key, two strings; returned well-formed. */
export function sourceTarget(fn, input) {
  for (const key of Object.keys(input)) {
    if (key !== 'source' && key !== 'target') fail('TypeError', `${fn}: unknown option '${key}'`);
  }
  checkString(fn, 'source', input.source);
  checkString(fn, 'target', input.target);
  return { source: wellFormed(input.source), target: wellFormed(input.target) };
}
