#!/usr/bin/env node
// `npx attnscope`: attention figures from the command line, no browser (layer: bin; a leaf over the public
// module bindings/js/index.js and the page's DOM-free renderers web/render/). Runs a model on the text, takes
// exactly the matrices a view shows and writes them as SVG, PNG (pngjs), CSV or JSON. Usage errors print one
// line on stderr and exit with code 2; `--help` documents every option.
import { open, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as chromatic from 'd3-scale-chromatic';
import pngjs from 'pngjs';
import { createAttnScope } from '../bindings/js/index.js';
import { openAttentionFile } from '../bindings/js/attention_file.js';
import { loadModule } from '../bindings/js/loader.js';
import {
  paletteFrom, figureOf, figureSvg, figureRaster, gridRaster, toCsv, toJson,
} from '../web/render/index.js';
import { gridSvg } from '../web/render/grid.js';
import { INSIDE_COMMANDS, INSIDE_HELP, INSIDE_OPTIONS, runInside } from './inside_cli.mjs';

const HELP = `attnscope — attention figures from the command line (SVG, PNG, CSV, JSON)

Usage:
  attnscope heatmap  "<text>" [options]   queries × keys weights of one layer: every head, one head or an aggregate
  attnscope lines    "<text>" [options]   bertviz-style links query → key, one colour per head, opacity = weight
  attnscope overview "<text>" [options]   every layer × head as small heatmaps (each scaled to its own maximum)
  attnscope heatmap|lines|overview --attention-file FILE [options]
                                          the same views of attention computed elsewhere (no text): a safetensors
                                          file of attentions.<i> [heads, n, n] with its tokens, as written by the
                                          Python helper attnscope.save (python/); only the header and the layers
                                          drawn are read, so files larger than memory open

Model:
  --model NAME|DIR|random   a bundled transformer (dates, reverse, english), a Hugging Face GPT-2 or BERT
                            checkpoint folder holding config.json, model.safetensors and tokenizer.json, or
                            'random' (default): a seeded random transformer configured by the options below
  --architecture A          random: encoder (default) | decoder
  --tokenizer T             random: word (default) | char
  --d-model N               random: model width (default 16)
  --heads N                 random: attention heads (default 2)
  --layers N                random: layers (default 2)
  --d-ff N                  random: feed-forward width (default 4·d-model)
  --seed N                  random: weight seed (default 0)
  --target TEXT             encoder-decoder models: the target side; default: the model's own greedy output
  --attention-file FILE     draw the attention stored in FILE instead of running a model (--model and its
                            options do not apply; --attention self|cross picks attentions.<i> or
                            cross_attentions.<i>)

What to draw:
  --layer L                 layer index from 0; negative counts from the end (-1: last); default 0
  --head H|all|mean|max|rollout
                            a head index from 0, every head (default), the mean or max over heads, or attention
                            rollout through --layer (heatmap and lines; overview always shows every layer × head)
  --attention self|cross|encoder
                            encoder-decoder models: the decoder's self-attention (default), its cross-attention
                            (target → source) or the encoder's self-attention
  --threshold T             lines: draw links with weight ≥ T (default 0.004, as the page)
  --palette P               heatmap colours: viridis (default) | cividis | magma | inferno | plasma
                            (perceptually uniform and colour-blind-safe, from d3-scale-chromatic)

Output:
  --format svg|png|csv|json default: from the -o file's extension, else svg
                            svg: vector, fonts named, colour legend; png: the same cells and links at 2× pixels,
                            without text (labels need SVG); csv/json: the numbers drawn, with tokens, ids,
                            shapes and which layer/head/aggregate each matrix is
  -o, --output FILE         write to FILE instead of standard output
  -h, --help                this text

Examples:
  attnscope heatmap "The cat sat on the mat" --head mean -o cat.svg
  attnscope lines "7 3 9 1>19375" --model reverse --layer -1 --format png -o reverse.png
  attnscope overview "November 22, 2026" --model dates --attention cross --format json

${INSIDE_HELP}
Environment: ATTNSCOPE_SIMD=true|false loads the SIMD128 or the scalar build (default: SIMD when supported);
ATTNSCOPE_DEBUG=1 adds the stack to an unexpected error's message.
Exit codes: 0 done, 2 bad arguments (the message says which), 1 anything else.
`;

class UsageError extends Error {}
const usage = (msg) => { throw new UsageError(msg); };

const VALUE_OPTIONS = new Set(['model', 'architecture', 'tokenizer', 'd-model', 'heads', 'layers', 'd-ff', 'seed',
  'target', 'layer', 'head', 'attention', 'threshold', 'palette', 'format', 'output', 'attention-file', ...INSIDE_OPTIONS]);
const COMMANDS = ['heatmap', 'lines', 'overview', ...INSIDE_COMMANDS];
const FORMATS = ['svg', 'png', 'csv', 'json'];
const PALETTES = { viridis: 'interpolateViridis', cividis: 'interpolateCividis', magma: 'interpolateMagma', inferno: 'interpolateInferno', plasma: 'interpolatePlasma' };

/** argv → { command, text, opts }; throws UsageError naming the argument. */
function parseArgs(argv) {
  const opts = {};
  const positional = [];
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k];
    if (a === '-h' || a === '--help') return { help: true };
    if (a === '-o' || a.startsWith('--')) {
      let name = a === '-o' ? 'output' : a.slice(2);
      let value;
      const eq = name.indexOf('=');
      if (eq >= 0) [name, value] = [name.slice(0, eq), name.slice(eq + 1)];
      if (!VALUE_OPTIONS.has(name)) usage(`unknown option '${a}' (see attnscope --help)`);
      if (value === undefined) {
        if (k + 1 >= argv.length) usage(`option --${name} needs a value`);
        value = argv[++k];
      }
      if (name in opts) usage(`option --${name} given twice`);
      opts[name] = value;
    } else positional.push(a);
  }
  if (positional.length === 0) usage(`a command is required: ${COMMANDS.join(', ')} (see attnscope --help)`);
  const [command, text, ...rest] = positional;
  if (!COMMANDS.includes(command)) usage(`command (${JSON.stringify(command)}) must be one of ${COMMANDS.join(', ')}`);
  if ('attention-file' in opts) {
    if (text !== undefined) usage(`${command}: no text with --attention-file (the file holds the tokens), got ${JSON.stringify(text)}`);
    return { command, opts };
  }
  const insideOnly = INSIDE_OPTIONS.filter((k) => k in opts);
  if (!INSIDE_COMMANDS.includes(command) && insideOnly.length) usage(`--${insideOnly[0]} applies only to ${INSIDE_COMMANDS.join(', ')}`);
  if (command === 'patch') {
    if (text !== undefined) usage(`patch: no text argument (give --clean and --corrupted), got ${JSON.stringify(text)}`);
    return { command, opts };
  }
  if (text === undefined) usage(`${command}: the text to run is required, e.g. attnscope ${command} "The cat sat"`);
  if (rest.length) usage(`${command}: unexpected argument ${JSON.stringify(rest[0])} (quote the text as one argument)`);
  return { command, text, opts };
}

function integer(name, v, min = -Infinity) {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v) || Number(v) < min) usage(`--${name} (${v}) must be an integer${min > -Infinity ? ` ≥ ${min}` : ''}`);
  return Number(v);
}

function oneOfOpt(name, v, allowed, dflt) {
  if (v === undefined) return dflt;
  if (!allowed.includes(v)) usage(`--${name} (${v}) must be one of ${allowed.join(', ')}`);
  return v;
}

/** The model named by --model: bundled, a checkpoint folder, or seeded random. Returns { model, name }. */
async function loadModel(as, opts) {
  const name = opts.model ?? 'random';
  const randomOnly = ['architecture', 'tokenizer', 'd-model', 'heads', 'layers', 'd-ff', 'seed'].filter((k) => k in opts);
  if (name === 'random') {
    const config = {
      architecture: oneOfOpt('architecture', opts.architecture, ['encoder', 'decoder'], 'encoder'),
      tokenizer: oneOfOpt('tokenizer', opts.tokenizer, ['word', 'char'], 'word'),
      dModel: integer('d-model', opts['d-model'], 1) ?? 16,
      numHeads: integer('heads', opts.heads, 1) ?? 2,
      numLayers: integer('layers', opts.layers, 1) ?? 2,
      seed: integer('seed', opts.seed, 0) ?? 0,
    };
    const dFF = integer('d-ff', opts['d-ff'], 1);
    if (dFF !== undefined) config.dFF = dFF;
    try {
      return { model: as.createModel(config), name: `random (d-model ${config.dModel}, ${config.numHeads} heads, ${config.numLayers} layers, seed ${config.seed})` };
    } catch (e) {
      return usage(e.message); // the core's message names the option ("createModel: dModel (10) must be divisible …")
    }
  }
  if (randomOnly.length) usage(`--${randomOnly[0]} applies only to --model random`);
  const bundled = as.bundledModels.find((m) => m.name === name);
  if (bundled) {
    if (!['encoder', 'decoder', 'encoder-decoder'].includes(bundled.architecture)) {
      usage(`--model ${name} is a ${bundled.architecture} model without transformer layers; these views need one of ${as.bundledModels.filter((m) => ['decoder', 'encoder-decoder'].includes(m.architecture)).map((m) => m.name).join(', ')}`);
    }
    return { model: await as.loadBundled(name), name };
  }
  if (!name.includes('/') && !name.includes(path.sep) && !name.startsWith('.')) {
    usage(`--model (${name}) must be 'random', a bundled model (${as.bundledModels.map((m) => m.name).join(', ')}) or a checkpoint folder path`);
  }
  const read = async (file, text) => {
    try {
      return await readFile(path.join(name, file), text ? 'utf8' : undefined);
    } catch (e) {
      return usage(`--model ${name}: cannot read ${file} (${e.code ?? e.message}); a checkpoint folder holds config.json, model.safetensors and tokenizer.json`);
    }
  };
  const [config, weights, tokenizer] = [await read('config.json', true), await read('model.safetensors'), await read('tokenizer.json', true)];
  try {
    return { model: await as.loadPretrained({ config, weights: new Uint8Array(weights.buffer, weights.byteOffset, weights.byteLength), tokenizer }), name: path.basename(path.resolve(name)) };
  } catch (e) {
    return usage(`--model ${name}: ${e.message}`);
  }
}

function run(model, text, opts, command) {
  const isEncDec = model.config.architecture === 'encoder-decoder';
  const attention = oneOfOpt('attention', opts.attention, ['self', 'cross', 'encoder'], 'self');
  if (!isEncDec && attention !== 'self') usage(`--attention ${attention} needs an encoder-decoder model (this one has self-attention only)`);
  if (opts.target !== undefined && !isEncDec) usage('--target applies only to encoder-decoder models');
  if (command === 'overview' && opts.layer !== undefined) usage('--layer does not apply to overview (it shows every layer)');
  if (command === 'overview' && opts.head !== undefined) usage('--head does not apply to overview (it shows every head)');
  if (command !== 'lines' && opts.threshold !== undefined) usage('--threshold applies only to lines');
  let input = text;
  if (isEncDec) input = { source: text, target: opts.target ?? model.generate(text).text };
  const probe = model.run(input, { trace: 'none' });
  const nLayers = attention === 'encoder' ? probe.source.layers.length : probe.layers.length;
  if (nLayers === 0) usage('this model has no attention layers to draw');
  let layer = integer('layer', opts.layer) ?? 0;
  if (layer < -nLayers || layer >= nLayers) usage(`--layer (${layer}) must be in [${-nLayers}, ${nLayers - 1}] (this model has ${nLayers} layers)`);
  if (layer < 0) layer += nLayers;
  // the shown layer in full (its scores mark masked cells grey, as the page), every other layer's weights only
  const trace = model.run(input, { trace: 'weights', [attention === 'encoder' ? 'fullSource' : 'full']: [layer] });
  return { trace, layer, attention, input };
}

const headOpt = (opts) => (opts.head === undefined ? 'all' : /^\d+$/.test(opts.head) ? Number(opts.head) : opts.head);
// figureOf's messages in the CLI's words (its options)
const figureMessage = (e) => e.message.replace(/^figureOf: (\w+) \(/, '--$1 (').replace(/^figureOf: head rollout needs self-attention \(attention /, '--head rollout needs self-attention (--attention ');

/** The figure (web/render/figure.js) a command draws; figureOf's messages name the CLI's options. */
function figure(command, r, opts, modelName) {
  const head = headOpt(opts);
  try {
    return figureOf(r.trace, {
      view: command, layer: command === 'overview' ? undefined : r.layer, head, attention: r.attention, model: modelName, text: r.input,
    });
  } catch (e) {
    return usage(figureMessage(e));
  }
}

/** The bytes or text of the figure in `format`. */
function render(f, format, opts) {
  if (format === 'csv') return toCsv(f);
  if (format === 'json') return toJson(f);
  const paletteName = oneOfOpt('palette', opts.palette, Object.keys(PALETTES), 'viridis');
  const style = { palette: paletteFrom(chromatic[PALETTES[paletteName]]), headColors: chromatic.schemeTableau10 };
  if (opts.threshold !== undefined) {
    style.threshold = Number(opts.threshold);
    if (!(style.threshold >= 0 && style.threshold <= 1) || opts.threshold.trim() === '') usage(`--threshold (${opts.threshold}) must be a number in [0, 1]`);
  }
  if (format === 'svg') return figureSvg(f, style);
  const img = figureRaster(f, style, 2);
  const png = new pngjs.PNG({ width: img.width, height: img.height });
  png.data = Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength);
  return pngjs.PNG.sync.write(png);
}

async function writeOut(out, opts, stdout) {
  if (opts.output) await writeFile(opts.output, out);
  else await new Promise((resolve, reject) => stdout.write(out, (e) => (e ? reject(e) : resolve())));
}

/**
 * The figure of an attention file (--attention-file): the file is opened lazily (bindings/js/attention_file.js):
 * its header, then only the layers the view draws (heatmap and lines: --layer; rollout: layers 0 to --layer;
 * overview: every layer), each checked by the core as it is read.
 */
async function fileFigure(command, opts, simd) {
  const file = opts['attention-file'];
  const modelOnly = ['model', 'architecture', 'tokenizer', 'd-model', 'heads', 'layers', 'd-ff', 'seed', 'target'].filter((k) => k in opts);
  if (modelOnly.length) usage(`--${modelOnly[0]} does not apply with --attention-file (the file holds the attention)`);
  const attention = oneOfOpt('attention', opts.attention, ['self', 'cross'], 'self');
  if (command === 'overview' && opts.layer !== undefined) usage('--layer does not apply to overview (it shows every layer)');
  if (command === 'overview' && opts.head !== undefined) usage('--head does not apply to overview (it shows every head)');
  if (command !== 'lines' && opts.threshold !== undefined) usage('--threshold applies only to lines');
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    return usage(`--attention-file ${file}: cannot read it (${e.code ?? e.message})`);
  }
  let af = null;
  try {
    const { size } = await fh.stat();
    const read = async (begin, end) => {
      const buf = new Uint8Array(end - begin);
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await fh.read(buf, got, buf.length - got, begin + got)
          .catch((e) => usage(`--attention-file ${file}: cannot read it (${e.code ?? e.message})`));
        if (bytesRead === 0) break;  // a short file: the core reports the truncated head
        got += bytesRead;
      }
      return buf.subarray(0, got);
    };
    const { module } = await loadModule(simd, 1, false);
    const bad = (e) => usage(`--attention-file ${file}: ${e.message}`);
    af = await openAttentionFile(module, { size, read }).catch(bad);
    const L = af.layers.length;
    const key = attention === 'cross' ? 'crossHeads' : 'numHeads';
    if (attention === 'cross' && !af.sourceTokens) usage(`--attention cross needs cross_attentions in the file (${file} has self-attention only)`);
    let layer = integer('layer', opts.layer) ?? 0;
    if (layer < -L || layer >= L) usage(`--layer (${layer}) must be in [${-L}, ${L - 1}] (this file has ${L} layers)`);
    if (layer < 0) layer += L;
    const head = headOpt(opts);
    // the layers the view draws; figureOf reads one head count for all of them
    const wanted = command === 'overview' ? [...Array(L).keys()] : head === 'rollout' ? [...Array(layer + 1).keys()] : [layer];
    const heads = wanted.map((l) => af.layers[l][key]);
    if (heads.some((h) => h === undefined)) usage(`--attention cross: layer ${wanted[heads.indexOf(undefined)]} has no cross_attentions in ${file}`);
    if (heads.some((h) => h !== heads[0])) {
      usage(`${command === 'overview' ? 'overview' : '--head rollout'} needs the same head count in every layer it draws; ${file} has ${heads.join(', ')} heads: draw one layer with heatmap --layer L`);
    }
    const layers = [];
    for (const l of wanted) layers.push({ [attention === 'cross' ? 'cross' : 'attention']: await af.layer(l, attention).catch(bad) });
    const trace = { tokens: af.tokens, layers };
    if (attention === 'cross') trace.source = { tokens: af.sourceTokens, layers: [] };
    const name = af.model ?? path.basename(file);
    // one drawn layer is passed as the trace's only layer: put its index back into the panels and the title
    const one = wanted.length === 1 && command !== 'overview';
    let f;
    try {
      f = figureOf(trace, { view: command, layer: one ? 0 : layer, head, attention, model: name, text: undefined });
    } catch (e) {
      return usage(figureMessage(e));
    }
    if (one && layer !== 0) {
      for (const p of f.panels) p.layer = layer;
      f.title = f.title.replace(' · layer 0 · ', ` · layer ${layer} · `);
    }
    return f;
  } finally {
    af?.close();
    await fh.close();
  }
}

/** lens | ablate | patch | heads (bin/inside_cli.mjs): JSON by default, CSV, or SVG/PNG of the command's figure. */
async function inside(command, text, opts, simd, stdout) {
  const ext = opts.output ? path.extname(opts.output).slice(1).toLowerCase() : '';
  const format = oneOfOpt('format', opts.format, FORMATS, FORMATS.includes(ext) ? ext : 'json');
  for (const k of ['layer', 'head', 'attention', 'threshold', 'target', 'attention-file']) {
    if (k in opts) usage(`--${k} does not apply to ${command}`);
  }
  const as = await createAttnScope({ simd });
  const { model } = await loadModel(as, opts);
  try {
    let r;
    try {
      r = await runInside(as, model, command, text, opts, { usage, integer });
    } catch (e) {
      if (e instanceof UsageError) throw e;
      usage(e.message);  // the core's message about the text or the tokens
    }
    let out;
    if (format === 'json') out = `${JSON.stringify(r.json, null, 1)}\n`;
    else if (format === 'csv') out = `${r.csv.map((row) => row.map(csvCell).join(',')).join('\n')}\n`;
    else {
      if (!r.figure) usage(`${command} has no figure: use --format json or csv`);
      const paletteName = oneOfOpt('palette', opts.palette, Object.keys(PALETTES), 'viridis');
      const spec = r.figure(paletteFrom(chromatic[PALETTES[paletteName]]));
      if (format === 'svg') out = gridSvg(spec);
      else {
        if (!opts.output && stdout.isTTY) usage('refusing to write PNG to a terminal: add -o FILE or redirect the output');
        const img = gridRaster(spec, 2);
        const png = new pngjs.PNG({ width: img.width, height: img.height });
        png.data = Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength);
        out = pngjs.PNG.sync.write(png);
      }
    }
    await writeOut(out, opts, stdout);
    return 0;
  } finally {
    model.delete();
  }
}

const csvCell = (v) => {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

async function main(argv, { stdout = process.stdout, stderr = process.stderr } = {}) {
  let model = null;
  try {
    const parsed = parseArgs(argv);
    if (parsed.help) {
      stdout.write(HELP);
      return 0;
    }
    const { command, text, opts } = parsed;  // text: undefined with --attention-file
    const ext = opts.output ? path.extname(opts.output).slice(1).toLowerCase() : '';
    const format = oneOfOpt('format', opts.format, FORMATS, FORMATS.includes(ext) ? ext : 'svg');
    if (format === 'png' && !opts.output && stdout.isTTY) usage('refusing to write PNG to a terminal: add -o FILE or redirect the output');
    const simdEnv = process.env.ATTNSCOPE_SIMD;
    const simd = simdEnv === 'true' ? true : simdEnv === 'false' ? false : 'auto';
    if (INSIDE_COMMANDS.includes(command)) return await inside(command, text, opts, simd, stdout);
    if (text === undefined) {
      await writeOut(render(await fileFigure(command, opts, simd), format, opts), opts, stdout);
      return 0;
    }
    const as = await createAttnScope({ simd });
    const loaded = await loadModel(as, opts);
    model = loaded.model;
    let r;
    try {
      r = run(model, text, opts, command);
    } catch (e) {
      if (e instanceof UsageError) throw e;
      usage(e.message); // the core's message about the text ("run: text has no tokens", maxTokens, …)
    }
    await writeOut(render(figure(command, r, opts, loaded.name), format, opts), opts, stdout);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      stderr.write(`attnscope: ${e.message}\n`);
      return 2;
    }
    stderr.write(`attnscope: ${e.message}${process.env.ATTNSCOPE_DEBUG ? `\n${e.stack}` : ''}\n`);
    return 1;
  } finally {
    model?.delete();
  }
}

process.exitCode = await main(process.argv.slice(2));
