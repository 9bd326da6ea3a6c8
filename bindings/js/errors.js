// The single throw site for engine errors (STYLE 4.5, sql.js `handleError`): a binding returns either a
// result or `{ error: { kind, message } }`; `unwrap` turns the descriptor into a TypeError / RangeError /
// Error with the engine's message unchanged. Argument errors found by validate.js use `fail` below.

const KINDS = { TypeError, RangeError, Error };

/** Throws `new Kind(message)` (Kind: 'TypeError' | 'RangeError' | 'Error'). */
export function fail(kind, message) {
  throw new (KINDS[kind] ?? Error)(message);
}

/** Returns `result` unless it is an error descriptor, which is thrown as a JS error. */
export function unwrap(result) {
  if (result !== null && typeof result === 'object' && result.error !== undefined) {
    const { kind, message } = result.error;
    fail(kind, message);
  }
  return result;
}
