// Looking inside a model (issue 27, README "Looking inside"): headMeans (mean ablation values), patch (activation
// patching between a clean and a corrupted prompt), ablationSweep (every head ranked by its effect) and
// logitAttribution (direct logit attribution per head). Layer: bindings/js. JS types and unknown keys are checked
// here; values (lengths, token ids, ranges) by the core (src/model/inside.h), which names these functions.
//
// patch and ablationSweep run their sites in chunks: between chunks they give the event loop a turn, report
// progress and honour an AbortSignal, so a worker can show a progress bar and a Cancel button.
import { createOrThrow, fail, unwrap } from './errors.js';
import { live } from './handle.js';
import { isPlainObject, typeName, wellFormed } from './validate.js';

const CHUNK_MS = 40;  // run sites for about this long between turns of the event loop

function checkModel(fn, model) {
  if (model === null || typeof model !== 'object' || typeof model.run !== 'function') {
    fail('TypeError', `${fn}: model must be a model (createModel, loadPretrained or loadBundled), got ${typeName(model)}`);
  }
  return live(model, fn);
}

function text(fn, name, v) {
  if (typeof v !== 'string') fail('TypeError', `${fn}: ${name} must be a string, got ${typeName(v)}`);
  return wellFormed(v);
}

function options(fn, v, keys) {
  if (v === undefined) return {};
  if (!isPlainObject(v)) fail('TypeError', `${fn}: options must be an object, got ${typeName(v)}`);
  for (const key of Object.keys(v)) if (!keys.includes(key)) fail('TypeError', `${fn}: unknown option '${key}'`);
  return v;
}

// A token: an id (integer) or a token text (' Mary', or the vocabulary's spelling 'ĠMary').
function token(fn, name, v) {
  if (typeof v === 'string') return wellFormed(v);
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || Math.abs(v) > 0x7fffffff) fail('RangeError', `${fn}: ${name} (${v}) must be an integer id`);
    return v;
  }
  fail('TypeError', `${fn}: ${name} must be a token id or a token text, got ${typeName(v)}`);
  return undefined;
}

function tokens(fn, v, count) {
  if (!Array.isArray(v) || v.length !== count) {
    fail('TypeError', `${fn}: tokens must be an array of ${count === 1 ? 'one token' : `${count} tokens`} (ids or texts), got ${typeName(v)}`);
  }
  return v.map((t, i) => token(fn, `tokens[${i}]`, t));
}

function callbacks(fn, o) {
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') {
    fail('TypeError', `${fn}: onProgress must be a function, got ${typeName(o.onProgress)}`);
  }
  if (o.signal !== undefined && (o.signal === null || typeof o.signal.aborted !== 'boolean')) {
    fail('TypeError', `${fn}: signal must be an AbortSignal, got ${typeName(o.signal)}`);
  }
  return { onProgress: o.onProgress, signal: o.signal };
}

const turn = () => new Promise((resolve) => {
  if (typeof setImmediate === 'function') setImmediate(resolve);
  else setTimeout(resolve, 0);
});

// Runs every site of a started session in time-boxed chunks; returns { info, values }.
async function sweep(fn, model, session, { onProgress, signal }) {
  try {
    const info = session.info();
    const total = info.rows * info.cols;
    const values = new Float32Array(total);
    let done = 0;
    onProgress?.(0, total);
    while (done < total) {
      signal?.throwIfAborted();
      live(model, fn);  // the model must outlive the sweep
      const t0 = Date.now();
      while (done < total && Date.now() - t0 < CHUNK_MS) {
        values.set(unwrap(session.run(done, done + 1)), done);
        done += 1;
      }
      onProgress?.(done, total);
      if (done < total) await turn();
    }
    return { info, values };
  } finally {
    session.delete();
  }
}

/**
 * Every head's mean output (its weights · V, before W_O) over every position of `texts`: the values mean ablation
 * puts in its place. `means` is [numLayers, numHeads, headDim]; `run(text, { ablate: [{ layer, head, mean }] })`
 * takes `means.subarray(((layer * numHeads) + head) * headDim, … + headDim)`.
 */
export function headMeans(module, model, texts) {
  const h = checkModel('headMeans', model);
  if (!Array.isArray(texts)) fail('TypeError', `headMeans: texts must be an array of strings, got ${typeName(texts)}`);
  const list = texts.map((t, i) => text('headMeans', `texts[${i}]`, t));
  return unwrap(module.headMeans(h, list));
}

/**
 * Activation patching: the corrupted prompt's run with one site taken from the clean prompt's run, for every site.
 * granularity 'head': sites [numLayers, numHeads] (a head's weights · V at every position); 'residual':
 * [numLayers, n] (the input of layer l at position p). Metric: logit[tokens[0]] − logit[tokens[1]] at the last
 * position. Each site is one forward from its layer on, from the cached runs.
 */
export async function patch(module, model, args) {
  const fn = 'patch';
  const h = checkModel(fn, model);
  const o = options(fn, args, ['clean', 'corrupted', 'tokens', 'granularity', 'onProgress', 'signal']);
  if (args === undefined) fail('TypeError', `${fn}: expected { clean, corrupted, tokens }`);
  const granularity = o.granularity ?? 'head';
  if (granularity !== 'head' && granularity !== 'residual') {
    fail(typeof granularity === 'string' ? 'RangeError' : 'TypeError', `${fn}: granularity (${JSON.stringify(granularity)}) must be 'head' or 'residual'`);
  }
  const native = {
    kind: 'patch', clean: text(fn, 'clean', o.clean), corrupted: text(fn, 'corrupted', o.corrupted),
    metric: 'logitDiff', tokens: tokens(fn, o.tokens, 2), residual: granularity === 'residual',
  };
  const cb = callbacks(fn, o);
  cb.signal?.throwIfAborted();
  const session = createOrThrow(module.InsideHandle, (s) => s.start(h, native));
  const { info, values } = await sweep(fn, model, session, cb);
  const span = info.clean - info.base;
  return {
    granularity, numLayers: info.rows, cols: info.cols, values,
    // 0 = the corrupted run, 1 = the clean run
    normalized: values.map((v) => (span === 0 ? 0 : (v - info.base) / span)),
    clean: info.clean, corrupted: info.base, ids: info.ids, tokens: info.tokens,
  };
}

/**
 * Ablates every head in turn and measures the effect: metric 'loss' (the text's loss) or 'logit' (the logit of
 * tokens[0] at the last position). means (from headMeans) makes it mean ablation. Returns values (the metric with
 * each head ablated, [numLayers, numHeads]), base, delta = values − base and ranking (heads by |delta|, largest
 * first).
 */
export async function ablationSweep(module, model, input, args) {
  const fn = 'ablationSweep';
  const h = checkModel(fn, model);
  const o = options(fn, args, ['metric', 'tokens', 'means', 'onProgress', 'signal']);
  const metric = o.metric ?? 'loss';
  if (metric !== 'loss' && metric !== 'logit') {
    fail(typeof metric === 'string' ? 'RangeError' : 'TypeError', `${fn}: metric (${JSON.stringify(metric)}) must be 'loss' or 'logit'`);
  }
  if (o.means !== undefined && !(o.means instanceof Float32Array)) {
    fail('TypeError', `${fn}: means must be a Float32Array (headMeans(...).means), got ${typeName(o.means)}`);
  }
  if (metric === 'loss' && o.tokens !== undefined) fail('TypeError', `${fn}: tokens is for metric 'logit'`);
  const native = {
    kind: 'ablate', text: text(fn, 'text', input), metric,
    tokens: metric === 'logit' ? tokens(fn, o.tokens, 1) : [], means: o.means,
  };
  const cb = callbacks(fn, o);
  cb.signal?.throwIfAborted();
  const session = createOrThrow(module.InsideHandle, (s) => s.start(h, native));
  const { info, values } = await sweep(fn, model, session, cb);
  const delta = values.map((v) => v - info.base);
  const ranking = Array.from(delta, (d, i) => ({ layer: Math.floor(i / info.cols), head: i % info.cols, delta: d }))
    .sort((a, b) => Math.abs(b.delta) - Math.abs(a.delta) || a.layer - b.layer || a.head - b.head);
  return { metric, numLayers: info.rows, numHeads: info.cols, values, base: info.base, delta, ranking, tokens: info.tokens };
}

/**
 * Direct logit attribution at the last position toward `tok` (an id or a token text): values [numLayers,
 * numHeads], each head's output through W_O and the final norm with its scale frozen (TransformerLens's
 * apply_ln_to_stack), dotted with the token's unembedding; also the token's logit and the frozen scale.
 */
export function logitAttribution(module, model, input, tok) {
  const fn = 'logitAttribution';
  const h = checkModel(fn, model);
  return unwrap(module.logitAttribution(h, text(fn, 'text', input), token(fn, 'token', tok)));
}
