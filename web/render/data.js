// The numbers behind a view as CSV and JSON (layer: web/render; no DOM): exactly the matrices a view draws,
// with the tokens, ids, shapes and which layer / head / aggregate each matrix is. Values are the module's
// float32 numbers written in full (shortest decimal that reads back to the same double), never rounded.
//
// figure: { view: 'heatmap' | 'lines' | 'overview', model?, text?, attention?: 'self' | 'cross' | 'encoder',
//           tokens, ids?, keyTokens = tokens, keyIds = ids, rows, cols,
//           panels: [{ layer, head: number | null, aggregate: 'head' | 'mean' | 'max' | 'rollout',
//                      values [rows·cols], domain?: [lo, hi], masked?: [rows·cols] (1 = blocked) }] }
import { checkMatrix, checkTokens } from './common.js';

function checkFigure(fn, f) {
  if (!f || typeof f !== 'object') throw new TypeError(`${fn}: figure must be an object`);
  checkTokens(fn, 'tokens', f.tokens, f.rows);
  checkTokens(fn, 'keyTokens', f.keyTokens ?? f.tokens, f.cols);
  if (!Array.isArray(f.panels) || f.panels.length === 0) throw new RangeError(`${fn}: panels must be a non-empty array`);
  f.panels.forEach((p, k) => checkMatrix(fn, `panels[${k}].values`, p.values, f.rows, f.cols));
}

/** One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF, or starts/ends with a space. */
function field(v) {
  const s = String(v);
  return /[",\r\n]|^\s|\s$/.test(s) || s === '' ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * CSV: a header `layer,head,query_index,query_token,<key token 0>,…,<key token cols−1>`, then one line per
 * panel and query row; `head` is the head index, or the aggregate's name (mean, max, rollout). CRLF lines.
 */
export function toCsv(f) {
  checkFigure('toCsv', f);
  const keys = f.keyTokens ?? f.tokens;
  const lines = [['layer', 'head', 'query_index', 'query_token', ...keys].map(field).join(',')];
  for (const p of f.panels) {
    const head = p.aggregate && p.aggregate !== 'head' ? p.aggregate : p.head;
    for (let i = 0; i < f.rows; i++) {
      const row = [p.layer, head, i, f.tokens[i]].map(field);
      for (let j = 0; j < f.cols; j++) row.push(String(Number(p.values[i * f.cols + j])));
      lines.push(row.join(','));
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}

const nested = (values, rows, cols) => Array.from({ length: rows }, (_, i) => Array.from(values.slice(i * cols, (i + 1) * cols), Number));

/** JSON (2-space indented): the figure with each matrix as nested rows, its shape and its domain. */
export function toJson(f) {
  checkFigure('toJson', f);
  const out = {
    format: 'attnscope-figure',
    version: 1,
    view: f.view,
    model: f.model,
    text: f.text,
    attention: f.attention,
    tokens: f.tokens,
    ids: f.ids ? Array.from(f.ids) : undefined,
    keyTokens: f.keyTokens ?? f.tokens,
    keyIds: f.keyIds ? Array.from(f.keyIds) : (f.ids ? Array.from(f.ids) : undefined),
    panels: f.panels.map((p) => ({
      layer: p.layer,
      head: p.head ?? null,
      aggregate: p.aggregate ?? 'head',
      shape: [f.rows, f.cols],
      domain: p.domain,
      values: nested(p.values, f.rows, f.cols),
      masked: p.masked && Array.prototype.includes.call(p.masked, 1) ? nested(p.masked, f.rows, f.cols) : undefined,
    })),
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}
