// The "looking inside" commands of `npx attnscope` (layer: bin; bin/attnscope.mjs parses the arguments and calls
// these): lens (the logit lens as a layer × position table), ablate (knock heads out: Δ next-token top-k and Δ loss),
// patch (activation patching heatmap) and heads (head detectors and, with --sweep, the ablation sweep). Each returns
// a result object { figure?, table, json } that the caller writes as SVG/PNG (a figure), CSV (the table) or JSON.
import { heatmapGrid } from '../web/render/index.js';
import { inductionScores } from '../web/induction.js';

export const INSIDE_COMMANDS = ['lens', 'ablate', 'patch', 'heads'];
export const INSIDE_OPTIONS = ['k', 'heads-off', 'mean-texts', 'clean', 'corrupted', 'token', 'vs', 'granularity', 'score', 'sweep'];

export const INSIDE_HELP = `
Looking inside (language models; JSON by default, CSV, and SVG/PNG where there is a figure):
  attnscope lens "<text>" [--k K]         the logit lens: every layer's top-K (default 3) at every position;
                                          figure: layers × positions, each cell the top-1 token coloured by its probability
  attnscope ablate "<text>" --heads-off L.H[,L.H…] [--mean-texts "t1|t2…"]
                                          knock heads out (zero, or their mean over the texts): next-token top-k and
                                          loss before and after (no figure)
  attnscope patch --clean "<text>" --corrupted "<text>" --token T --vs T [--granularity head|residual]
                                          activation patching: logit(T) − logit(vs) at the last position with each
                                          site of the corrupted run taken from the clean run; figure: the heatmap
                                          (0 = corrupted, 1 = clean)
  attnscope heads "<text>" [--score previous|duplicate|sink|induction] [--sweep loss]
                                          per-head detectors on the text (previous-token, duplicate-token, first-token
                                          sink share), induction on the text's distinct tokens shuffled (seed 1) and
                                          repeated (web/induction.js), and with --sweep loss every head's Δ loss when
                                          ablated; figure: layers × heads of --score
  Tokens (--token, --vs) are token texts (" Mary") or ids written #123.
`;

const SCORES = { previous: 'previousToken', duplicate: 'duplicateToken', sink: 'sinkShare', induction: 'induction' };

function tokenArg(usage, name, v) {
  if (v === undefined) usage(`--${name} is required (a token text such as " Mary", or an id written #123)`);
  return /^#\d+$/.test(v) ? Number(v.slice(1)) : v;
}

/** "0.1,3.2" → [{ layer: 0, head: 1 }, …] */
function headsOff(usage, v) {
  if (v === undefined) usage('ablate: --heads-off is required, e.g. --heads-off 0.1,3.2 (layer.head)');
  return v.split(',').map((s) => {
    const m = /^(\d+)\.(\d+)$/.exec(s.trim());
    if (!m) usage(`--heads-off (${v}) must be layer.head pairs separated by commas, e.g. 0.1,3.2`);
    return { layer: Number(m[1]), head: Number(m[2]) };
  });
}

// palette → the heatmap grid spec (web/render/grid.js) of a [rows, cols] matrix
const matrixFigure = (title, rowLabels, colLabels, values, legend, domain) => (palette) => heatmapGrid({
  title, tokens: rowLabels, keyTokens: colLabels, matrix: values, rows: rowLabels.length, cols: colLabels.length,
  legend, domain, palette,
});

/** Runs one inside command; returns { figure?: palette → grid spec, csv: rows of cells, json: object }. */
export async function runInside(as, model, command, text, opts, { usage, integer }) {
  const lm = model.config.architecture !== 'encoder';
  if (command !== 'heads' && !lm) usage(`${command} needs a language model (this model is an encoder)`);
  if (command === 'lens') {
    const k = integer('k', opts.k, 1) ?? 3;
    const r = model.run(text, { trace: 'none', lens: k });
    const L = r.layers.length;
    const top = r.layers.map((l) => Array.from({ length: r.n }, (_, p) => l.lens.probs[p * l.lens.k]));
    const values = Float32Array.from(top.flat());
    const csv = [['layer', 'position', 'token', 'rank', 'id', 'prob']];
    const layers = r.layers.map((l, i) => {
      const rows = [];
      for (let p = 0; p < r.n; p++) {
        const cells = [];
        for (let j = 0; j < l.lens.k; j++) {
          const id = l.lens.ids[p * l.lens.k + j];
          cells.push({ id, prob: l.lens.probs[p * l.lens.k + j] });
          csv.push([i, p, r.tokens[p], j + 1, id, l.lens.probs[p * l.lens.k + j]]);
        }
        rows.push(cells);
      }
      return rows;
    });
    return {
      figure: matrixFigure(`logit lens · top-1 probability (${r.n} tokens × ${L} layers)`,
        r.layers.map((_, i) => `layer ${i}`), r.tokens, values, 'top-1 probability', [0, 1]),
      csv, json: { command, text, k, tokens: r.tokens, layers },
    };
  }
  if (command === 'ablate') {
    const heads = headsOff(usage, opts['heads-off']);
    let ablate = heads;
    if (opts['mean-texts'] !== undefined) {
      const m = as.headMeans(model, opts['mean-texts'].split('|'));
      ablate = heads.map(({ layer, head }) => {
        if (layer >= m.numLayers || head >= m.numHeads) usage(`--heads-off ${layer}.${head} is outside the model (${m.numLayers} layers × ${m.numHeads} heads)`);
        const at = (layer * m.numHeads + head) * m.headDim;
        return { layer, head, mean: m.means.subarray(at, at + m.headDim) };
      });
    }
    const loss = (r) => (r.logProbs.length ? -r.logProbs.reduce((s, x) => s + x, 0) / r.logProbs.length : null);
    const before = model.run(text, { trace: 'none', logProbs: true, topK: 10 });
    let after;
    try {
      after = model.run(text, { trace: 'none', logProbs: true, topK: 10, ablate });
    } catch (e) {
      usage(e.message);
    }
    const probOf = (r, id) => { const i = Array.from(r.next.ids).indexOf(id); return i < 0 ? null : r.next.probs[i]; };
    const ids = [...new Set([...before.next.ids, ...after.next.ids])];
    const rows = ids.map((id) => {
      const tok = before.next.tokens[Array.from(before.next.ids).indexOf(id)] ?? after.next.tokens[Array.from(after.next.ids).indexOf(id)];
      return { id, token: tok, before: probOf(before, id), after: probOf(after, id) };
    });
    const csv = [['id', 'token', 'prob_before', 'prob_after'], ...rows.map((x) => [x.id, x.token, x.before ?? '', x.after ?? ''])];
    csv.push(['loss', '', loss(before) ?? '', loss(after) ?? '']);
    return {
      csv,
      json: { command, text, heads: heads.map(({ layer, head }) => ({ layer, head })), mean: opts['mean-texts'] !== undefined,
        next: rows, loss: { before: loss(before), after: loss(after) } },
    };
  }
  if (command === 'patch') {
    if (text !== undefined) usage('patch takes --clean and --corrupted, not a text argument');
    for (const k of ['clean', 'corrupted']) if (opts[k] === undefined) usage(`patch: --${k} "<text>" is required`);
    const granularity = opts.granularity ?? 'head';
    if (!['head', 'residual'].includes(granularity)) usage(`--granularity (${granularity}) must be one of head, residual`);
    let r;
    try {
      r = await as.patch(model, {
        clean: opts.clean, corrupted: opts.corrupted, tokens: [tokenArg(usage, 'token', opts.token), tokenArg(usage, 'vs', opts.vs)], granularity,
      });
    } catch (e) {
      usage(e.message);
    }
    const rowLabels = Array.from({ length: r.numLayers }, (_, i) => `layer ${i}`);
    const colLabels = granularity === 'head' ? Array.from({ length: r.cols }, (_, h) => `head ${h}`) : r.tokens;
    const csv = [['layer', granularity === 'head' ? 'head' : 'position', 'logit_diff', 'normalized']];
    for (let i = 0; i < r.values.length; i++) csv.push([Math.floor(i / r.cols), i % r.cols, r.values[i], r.normalized[i]]);
    const lo = Math.min(0, ...r.normalized);
    const hi = Math.max(1, ...r.normalized);
    return {
      figure: matrixFigure(`activation patching · ${granularity} · logit difference, 0 = corrupted, 1 = clean`, rowLabels, colLabels,
        r.normalized, 'normalized logit difference', [lo, hi]),
      csv,
      json: { command, clean: opts.clean, corrupted: opts.corrupted, granularity, ids: r.ids, tokens: r.tokens,
        cleanLogitDiff: r.clean, corruptedLogitDiff: r.corrupted, numLayers: r.numLayers, cols: r.cols,
        values: Array.from(r.values), normalized: Array.from(r.normalized) },
    };
  }
  // heads: detectors on the text (previous-token, duplicate-token, sink share) and induction on its repeated tokens
  const score = opts.score ?? 'previous';
  if (!(score in SCORES)) usage(`--score (${score}) must be one of ${Object.keys(SCORES).join(', ')}`);
  if (opts.sweep !== undefined && opts.sweep !== 'loss') usage(`--sweep (${opts.sweep}) must be loss`);
  const r = model.run(text, { trace: 'weights' });
  const H = model.config.numHeads;
  const s = as.headScores({ weights: r.layers.map((l) => l.attention.weights), numHeads: H, n: r.n, ids: r.ids });
  const L = s.numLayers;
  // induction: null (and the reason in the JSON) when the text gives no repeated sequence the model reads as one
  let ind = null;
  let inductionError = null;
  try {
    ind = inductionScores(as, model, text);
  } catch (e) {
    if (score === 'induction') usage(e.message);
    inductionError = e.message;
  }
  const table = { previousToken: s.previousToken, duplicateToken: s.duplicateToken, sinkShare: s.sinkShare, induction: ind?.induction };
  let sweep = null;
  if (opts.sweep === 'loss') {
    if (!lm) usage('--sweep loss needs a language model');
    sweep = await as.ablationSweep(model, text);
  }
  const csv = [['layer', 'head', 'previous', 'duplicate', 'sink', 'induction', ...(sweep ? ['delta_loss'] : [])]];
  const heads = [];
  for (let i = 0; i < L * H; i++) {
    const row = {
      layer: Math.floor(i / H), head: i % H, previous: table.previousToken[i], duplicate: table.duplicateToken[i], sink: table.sinkShare[i],
      induction: ind ? ind.induction[i] : null,
    };
    if (sweep) row.deltaLoss = sweep.delta[i];
    heads.push(row);
    csv.push([row.layer, row.head, row.previous, row.duplicate, row.sink, row.induction ?? '', ...(sweep ? [row.deltaLoss] : [])]);
  }
  const values = table[SCORES[score]];
  return {
    figure: matrixFigure(`head detectors · ${score}`, Array.from({ length: L }, (_, i) => `layer ${i}`),
      Array.from({ length: H }, (_, h) => `head ${h}`), values, `${score} score`, [0, 1]),
    csv,
    json: {
      command, text, tokens: r.tokens, numLayers: L, numHeads: H, heads, ...(sweep ? { baseLoss: sweep.base } : {}),
      ...(ind ? { inductionProbe: ind.probe, inductionPeriod: ind.period } : { inductionError }),
    },
  };
}
