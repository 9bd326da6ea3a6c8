// Attention files in the page (layer: web, runs in the compute worker; no DOM): the user's file (a File, read here
// with Blob.slice and never sent anywhere) opened lazily with as.openAttentionFile, and the trace the views draw
// from it. The core reads the header and checks each head's bytes as they are read (src/io/attention_file.h: the
// probability-row rule has one owner); this file only decides which heads to read.
//
// A file whose weights fit in HOLD bytes as float32 is read whole when it opens (so every head is checked before the
// page shows it, and every view that needs all layers works); a bigger one (32 layers x 32 heads x 1024 tokens is
// 4 GiB as F32) is read one layer at a time, head by head, when that layer is shown: its trace holds the shown layer
// only, and what needs every layer (rollout, flow, the model view and its export) streams the file head by head on
// request (web/attnfile-stream.js, kept per file here). Words merge the shown layer.

/** Float32 bytes of weights held for a whole file; above it, one layer at a time. */
export const HOLD = 192 * 2 ** 20;
/** Layers of a big file kept read (the shown one and the one before it). */
const KEEP = 2;

/** What one layer of `f` weighs as float32. */
const layerBytes = (f, ly) => 4 * f.n * (f.n * ly.numHeads + (ly.crossHeads ? f.sourceTokens.length * ly.crossHeads : 0));

export class AttentionFiles {
  constructor(as) {
    this.as = as;
    this.open_ = null; // { f, id, name, size, whole, cache: Map(layer → { attention, cross? }), rollout?, model? }
    this.opened = 0;
  }

  /**
   * Opens `file` (a Blob): its header, and every head when the whole file is held (else the first layer). The file
   * open before stays until this one has opened and checked. Returns what the page says about it.
   */
  async open(file) {
    if (typeof this.as.openAttentionFile !== 'function') throw new Error('this build of attnscope cannot read attention files (no as.openAttentionFile)');
    const f = await this.as.openAttentionFile(file);
    const bytes = f.layers.reduce((s, ly) => s + layerBytes(f, ly), 0);
    const next = { f, id: this.opened + 1, name: file.name ?? '', size: file.size, whole: bytes <= HOLD, cache: new Map(), bytes };
    try {
      for (let l = 0; l < (next.whole ? f.layers.length : 1); l++) next.cache.set(l, await readLayer(f, l));
    } catch (err) {
      f.close();
      throw err;
    }
    if (this.open_) {
      this.open_.f.close();
      this.open_.closed = true; // a stream still reading it stops (web/attnfile-stream.js)
    }
    this.open_ = next;
    this.opened = next.id;
    return this.info();
  }

  /** The open file's summary: { name, size, model, n, m, numLayers, numHeads, whole, bytes }. */
  info() {
    const o = this.open_;
    if (!o) return null;
    return {
      name: o.name, size: o.size, model: o.f.model ?? null, n: o.f.n, m: o.f.sourceTokens?.length ?? 0,
      numLayers: o.f.layers.length, numHeads: o.f.numHeads, whole: o.whole, bytes: o.bytes,
    };
  }

  /** The open file's reader and what is kept of it (web/attnfile-stream.js reads through it), or null. */
  current() {
    return this.open_;
  }

  /** One layer's weights, read (or kept) for a big file. */
  async layer(l) {
    const o = this.open_;
    if (!o.cache.has(l)) {
      const ly = await readLayer(o.f, l);
      o.cache.set(l, ly);
      for (const k of [...o.cache.keys()]) if (o.cache.size > KEEP && k !== l) o.cache.delete(k);
    }
    return o.cache.get(l);
  }

  /**
   * The trace of the open file for page state `s`: every layer (whole files) or the shown one (big files), as fresh
   * copies (the worker moves a run's buffers to the page). It is complete: nothing more can be computed for it.
   */
  async run(s) {
    const o = this.open_;
    if (!o) throw new Error('no attention file is open: choose one (a .safetensors file written by attnscope.save)');
    const { f } = o;
    const shown = Math.max(0, Math.min(s.layer, f.layers.length - 1));
    const layers = [];
    for (let l = 0; l < f.layers.length; l++) {
      const ly = o.whole || l === shown ? await this.layer(l) : null;
      if (!ly) {
        layers.push({ full: false, attention: { weights: null } });
        continue;
      }
      const copy = { full: true, attention: { weights: ly.attention.weights.slice() } };
      if (ly.cross) copy.cross = { weights: ly.cross.weights.slice() };
      layers.push(copy);
    }
    const trace = {
      tokens: [...f.tokens], n: f.n, numHeads: f.numHeads, layers, complete: true,
      file: {
        id: o.id, name: o.name, size: o.size, model: f.model ?? null, whole: o.whole, bytes: o.bytes,
        heads: f.layers.map((ly) => ly.numHeads), crossHeads: f.layers.map((ly) => ly.crossHeads ?? 0),
      },
      config: { architecture: 'file' },
    };
    if (f.sourceTokens) trace.source = { tokens: [...f.sourceTokens], n: f.sourceTokens.length };
    return trace;
  }
}

async function readLayer(f, l) {
  const out = { attention: await f.layer(l, 'self') };
  if (f.layers[l].crossHeads) out.cross = await f.layer(l, 'cross');
  return out;
}
