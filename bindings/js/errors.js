// The single throw site for engine errors (STYLE 4.5, sql.js `handleError`): a binding returns either a
// result or `{ error: { kind, message } }`; `unwrap` turns the descriptor into a TypeError / RangeError /
// Error with the engine's message unchanged. Argument errors found by validate.js use `fail` below.

const KINDS = { TypeError, RangeError, Error };

/** Throws `new Kind(message)` (Kind: 'TypeError' | 'RangeError' | 'Error'). */
export function fail(kind, message) {
  throw new (KINDS[kind] ?? Error)(message);
}

/**
 * Makes a wasm object that loads in two steps (`new module.X()`, then a call returning null or an error
 * descriptor): returns it loaded, or frees it and throws the engine's error.
 * @example createOrThrow(module.BpeHandle, (h) => h.load(vocab, merges))
 */
export function createOrThrow(Handle, load) {
  const handle = new Handle();
  const err = load(handle);
  if (err !== null) {
    handle.delete();
    unwrap(err);
  }
  return handle;
}

/** Returns `result` unless it is an error descriptor, which is thrown as a JS error. */
export function unwrap(result) {
  if (result !== null && typeof result === 'object' && result.error !== undefined) {
    const { kind, message } = result.error;
    fail(kind, message);
  }
  return result;
}
