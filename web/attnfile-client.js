// The page's side of streaming an attention file too big to hold (layer: web; no DOM): what needs every layer —
// rollout, the model view and its export, flow's head means — is asked of the worker (web/attnfile-stream.js, the
// 'fileStream' request) and kept here by file and what was asked, so a redraw does not read the file again. One
// request per kind runs at a time: a rollout to another layer stops the one running (the worker keeps its product,
// so the next goes on from it).

let client = null; // { call(kind, args, onProgress) → promise with .id, cancel(promise) }
const done = new Map(); // key → value, the last KEEP
const running = new Map(); // op → { key, fraction, promise, listeners }
const failed = new Map(); // key → the error of its last request (a refused head, a Cancel): not read again until asked
const KEEP = 6;

/** The compute client the requests go through (web/app.js gives it once). */
export function connectFileStream(c) {
  client = c;
}

const keyOf = (file, args) => `${file.id}|${args.op}|${args.layer ?? ''}`;

/** What was streamed for `args` ({ op, layer? }) of `file` (a trace's file), or undefined. */
export const streamedValue = (file, args) => done.get(keyOf(file, args));

/** The error the last request for `args` of `file` ended with (a refused head, or Cancel), or undefined. */
export const streamFailed = (file, args) => failed.get(keyOf(file, args));

/** Forgets that error: the next stream() reads again. */
export const forgetFailure = (file, args) => failed.delete(keyOf(file, args));

/** The request of `args` running now: { fraction, error? } or null. */
export function streaming(file, args) {
  const r = running.get(args.op);
  return r && r.key === keyOf(file, args) ? r : null;
}

/**
 * Streams `args` of `file` (or joins the request already running for it); `onChange(fraction)` as heads are read.
 * Resolves to the value (kept); rejects with the worker's error (an AbortError when cancelled).
 */
export function stream(file, args, onChange) {
  const key = keyOf(file, args);
  if (done.has(key)) return Promise.resolve(done.get(key));
  const r = running.get(args.op);
  if (r?.key === key) {
    if (onChange) r.listeners.add(onChange);
    return r.promise;
  }
  if (r) { // another layer's rollout, another file's: stopped (not a failure of its own)
    r.superseded = true;
    client.cancel(r.raw);
  }
  const rec = { key, fraction: 0, listeners: new Set(onChange ? [onChange] : []) };
  rec.raw = client.call('fileStream', { args }, (f) => {
    rec.fraction = f;
    for (const l of rec.listeners) l(f);
  });
  rec.promise = rec.raw.then(({ value }) => {
    done.set(key, value);
    for (const k of [...done.keys()].slice(0, Math.max(0, done.size - KEEP))) done.delete(k);
    return value;
  }, (err) => {
    if (!rec.superseded) failed.set(key, err);
    throw err;
  }).finally(() => {
    if (running.get(args.op) === rec) running.delete(args.op);
  });
  running.set(args.op, rec);
  return rec.promise;
}

/** Stops the request running for `args` of `file` (it rejects with an AbortError). */
export function stopStream(file, args) {
  const r = streaming(file, args);
  if (r) client.cancel(r.raw);
}
