// blob-reader.js: reading Blob/File weights without a new ArrayBuffer per read (layer: bindings/js; used by
// pretrained.js only).
//
// Why: FileReaderSync and Blob.arrayBuffer() make a new ArrayBuffer for every read, and in the worker that runs the
// model they are collected late (its ~1 GB wasm heap counts toward V8's limit for external memory; a synchronous run
// gives no GC task a turn). Measured in the page (bench/page_memory.mjs, 4 streamed layers of the 1B shape): 0.5–0.8
// GB of 8 MiB read buffers held in the renderer during a 2,048-token run, and as many after the load. So:
//   - readInto: an async read into ONE ArrayBuffer lent to the Blob's byte stream and given back (BYOB), used by
//     the load's chunks;
//   - blobHelper: streamWeights' synchronous layer reads (FileReaderSync is the only synchronous Blob read) done by
//     a helper worker that reads with readInto and copies each piece into one SharedArrayBuffer; the model's thread
//     waits for it (Atomics.wait) and copies the piece from there into wasm memory. Needs SharedArrayBuffer (a
//     cross-origin-isolated page: COOP + COEP) and workers inside workers; without them pretrained.js reads with
//     FileReaderSync on the model's thread, as before.

export const PIECE = 8 << 20; // bytes a read at most (model/layer_stream.h kReadBytes)
// A helper that takes longer than this for one piece is given up (read() then returns null and the caller reads on
// its own thread). A safety net: the helper answers every request it gets, errors included, and says when its loop
// ended (DEAD below, seen at once); what is left is a read the browser never completes, which was not seen again.
const WAIT_MS = 30e3;
const POLL_MS = 1000; // both sides wait with a timeout and look at the state word again (a lost wake-up costs this)

// control words of the SharedArrayBuffer: state (IDLE, ASK, DONE, STOP), shard, offset (low, high 32 bits),
// length, answer length, answer kind (0 bytes, 1 an error text), the helper's phase (PHASES)
const IDLE = 0;
const ASK = 1;
const DONE = 2;
const STOP = 3;
const HEAD = 64; // bytes before the data
// what the helper is doing (control word 7), for the message of a helper given up; DEAD: its loop ended (an error
// outside a read), so the model's thread reads on its own at once instead of waiting WAIT_MS
const WAITING = 1;
const CHECKING = 2;
const STREAMING = 3;
const COPYING = 4;
const DEAD = 5;
const PHASES = ['starting', 'waiting for a request', 'checking the file (a one-byte read)', 'reading the file (its byte stream)', 'copying the bytes', 'stopped by an error'];

/**
 * Reads the bytes of `blob` (`length` of them at most) into box.buffer, an ArrayBuffer lent to the blob's byte
 * stream and given back (a BYOB reader: the same memory every time, no new ArrayBuffer a read; box.buffer is the
 * returned one). Resolves to the number of bytes read. Where a Blob's stream is not a byte stream, one arrayBuffer()
 * is copied in instead. The stream is cancelled once read (nothing of it stays open until a GC). `mark(phase)`, when
 * given, is told CHECKING and STREAMING. The helper worker's source embeds it (toString) after those two constants.
 */
export async function readInto(blob, length, box, mark) {
  if (!(box.buffer instanceof ArrayBuffer) || box.buffer.byteLength < length) box.buffer = new ArrayBuffer(length); // new, or detached by a failed read
  // a File changed since it was chosen: its stream fails with only "TypeError: network error" in Chromium, so one
  // byte is read first with FileReaderSync, which throws NotReadableError (arrayBuffer() where there is none)
  mark?.(CHECKING);
  if (typeof FileReaderSync === 'function') new FileReaderSync().readAsArrayBuffer(blob.slice(0, 1));
  else await blob.slice(0, 1).arrayBuffer();
  mark?.(STREAMING);
  let reader;
  try {
    reader = blob.stream().getReader({ mode: 'byob' });
  } catch {
    const whole = new Uint8Array(await blob.arrayBuffer());
    const n = Math.min(length, whole.byteLength);
    new Uint8Array(box.buffer, 0, n).set(whole.subarray(0, n));
    return n;
  }
  let at = 0;
  try {
    while (at < length) {
      const { value, done } = await reader.read(new Uint8Array(box.buffer, at, length - at));
      if (value) box.buffer = value.buffer;
      if (done) break;
      at += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {}); // the rest of the stream (none when all was read), and the blob read behind it
    reader.releaseLock();
  }
  return at;
}

// The helper (a classic worker from a Blob URL): gets { blobs, names, sab }, says 'ready', then serves reads until
// STOP. It waits with Atomics.waitAsync and reads with readInto where it can (its event loop runs, nothing is left
// to collect), else with Atomics.wait and FileReaderSync (its garbage is collected within a few reads: a small heap).
// Every request gets an answer: the bytes, or a text saying what failed (whatever was thrown); a failure outside a
// request ends the loop with the phase DEAD, which the model's thread sees at once.
const SOURCE = `'use strict';
const CHECKING = ${CHECKING};
const STREAMING = ${STREAMING};
const readInto = ${readInto.toString()};
onmessage = async (e) => {
  const { blobs, names, sab } = e.data;
  const ctl = new Int32Array(sab, 0, 8);
  const data = new Uint8Array(sab, ${HEAD});
  const box = { buffer: null };
  const waitAsync = typeof Atomics.waitAsync === 'function';
  const mark = (phase) => { ctl[7] = phase; };
  postMessage('ready');
  try {
    for (;;) {
      mark(${WAITING});
      let st;
      while ((st = Atomics.load(ctl, 0)) !== ${ASK} && st !== ${STOP}) {
        if (!waitAsync) Atomics.wait(ctl, 0, st, ${POLL_MS});
        else {
          const w = Atomics.waitAsync(ctl, 0, st, ${POLL_MS});
          if (w.async) await w.value;
        }
      }
      if (st === ${STOP}) { close(); return; }
      const shard = ctl[1];
      const at = (ctl[2] >>> 0) + (ctl[3] >>> 0) * 4294967296; // (Int32 words: read unsigned)
      const length = ctl[4];
      let text = null;
      try {
        const part = blobs[shard].slice(at, at + length);
        let got;
        if (waitAsync) {
          got = await readInto(part, length, box, mark);
          mark(${COPYING});
          if (got === length) data.set(new Uint8Array(box.buffer, 0, length));
        } else {
          mark(${STREAMING});
          const buf = new FileReaderSync().readAsArrayBuffer(part);
          got = buf.byteLength;
          mark(${COPYING});
          if (got === length) data.set(new Uint8Array(buf));
        }
        if (got !== length) text = "the file '" + names[shard] + "' gave " + got + ' of ' + length + ' bytes (was it changed?)';
      } catch (err) { // a File changed or removed since it was chosen: NotReadableError
        let why = 'an error';
        try { why = String(err?.name ?? 'Error') + ': ' + String(err?.message ?? err); } catch { /* a value without a text */ }
        text = "the file '" + names[shard] + "' could not be read (" + why + '); was it changed or removed since it was chosen?';
      }
      if (text === null) {
        ctl[5] = length;
        ctl[6] = 0;
      } else { // (encodeInto refuses a view of shared memory)
        const bytes = new TextEncoder().encode(text).subarray(0, data.length);
        data.set(bytes);
        ctl[5] = bytes.length;
        ctl[6] = 1;
      }
      Atomics.store(ctl, 0, ${DONE});
      Atomics.notify(ctl, 0);
    }
  } catch {
    mark(${DEAD});
    Atomics.notify(ctl, 0);
  }
};`;

/** Whether this context can use the helper: a worker with SharedArrayBuffer (cross-origin isolated) and Worker. */
export function canHelp() {
  return typeof FileReaderSync === 'function' && typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated === true &&
    typeof Worker === 'function' && typeof Atomics?.wait === 'function' && typeof URL?.createObjectURL === 'function';
}

/**
 * A helper reading `blobs` (Blobs/Files; `names` for messages), once it has started: { read(shard, begin, end) → a
 * Uint8Array over the shared buffer (valid until the next read), a string saying what failed, or null once the helper
 * stopped answering (the caller then reads on its own thread), close() }; null when this context cannot use one or it
 * did not start.
 */
export async function blobHelper(blobs, names) {
  if (!canHelp()) return null;
  const sab = new SharedArrayBuffer(HEAD + PIECE);
  const ctl = new Int32Array(sab, 0, 8);
  const data = new Uint8Array(sab, HEAD);
  const url = URL.createObjectURL(new Blob([SOURCE], { type: 'text/javascript' }));
  let worker = null;
  try {
    worker = new Worker(url);
    const started = new Promise((resolve) => {
      worker.onmessage = () => resolve(true);
      worker.onerror = () => resolve(false);
      worker.onmessageerror = () => resolve(false);
    });
    worker.postMessage({ blobs, names, sab });
    if (!(await started)) {
      worker.terminate();
      return null;
    }
  } catch {
    worker?.terminate();
    return null;
  } finally {
    URL.revokeObjectURL(url);
  }
  let closed = false;
  let broken = false;
  const decode = (n) => new TextDecoder().decode(data.slice(0, n));
  /** One piece of at most PIECE bytes. */
  const piece = (shard, at, length) => {
    ctl[1] = shard;
    ctl[2] = at % 4294967296;
    ctl[3] = Math.floor(at / 4294967296);
    ctl[4] = length;
    Atomics.store(ctl, 0, ASK);
    Atomics.notify(ctl, 0);
    const t0 = Date.now();
    while (Atomics.load(ctl, 0) === ASK) {
      const dead = Atomics.load(ctl, 7) === DEAD;
      if (dead || Date.now() - t0 > WAIT_MS) {
        // the caller reads on its own thread from now on (FileReaderSync: the same bytes)
        console.warn(`loadPretrained: streamWeights: the helper worker reading '${names[shard]}' ${dead ? 'stopped' : `did not answer within ${WAIT_MS / 1e3} s`} (it was ${PHASES[Atomics.load(ctl, 7)] ?? 'starting'}); reading on this thread from now on`);
        broken = true;
        worker.terminate();
        return null;
      }
      Atomics.wait(ctl, 0, ASK, POLL_MS);
    }
    const answer = ctl[6] === 0 ? data.subarray(0, length) : decode(ctl[5]);
    Atomics.store(ctl, 0, IDLE);
    return answer;
  };
  return {
    read(shard, begin, end) {
      if (broken) return null;
      if (closed) return `the file '${names[shard]}' could not be read (its reader was closed)`;
      if (end - begin <= PIECE) return piece(shard, begin, end - begin);
      const out = new Uint8Array(end - begin); // larger than a piece (not a layer read): copied out piece by piece
      for (let at = begin; at < end; at += PIECE) {
        const r = piece(shard, at, Math.min(PIECE, end - at));
        if (r === null || typeof r === 'string') return r;
        out.set(r, at - begin);
      }
      return out;
    },
    close() {
      if (closed) return;
      closed = true;
      Atomics.store(ctl, 0, STOP);
      Atomics.notify(ctl, 0);
      worker.terminate();
    },
  };
}
