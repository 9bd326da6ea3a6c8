// web/state.js's RANGES are the page's only ranges: every number box of web/index.html whose id is a state key has
// exactly that key's min and max (the box's spinner and the link's clamp agree), and inRange() is the check the
// page's controls apply to what is typed.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { RANGES, inRange, parse } from '../../web/state.js';

const html = readFileSync(new URL('../../web/index.html', import.meta.url), 'utf8');
const inputs = [...html.matchAll(/<input\b[^>]*>/g)].map(([tag]) => Object.fromEntries(
  [...tag.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, k, v]) => [k, v]),
));

test('index.html: each ranged box has min and max equal to state.js RANGES', () => {
  const ranged = inputs.filter((a) => a.id in RANGES);
  assert.ok(ranged.length >= 15, `${ranged.length} ranged boxes found`);
  for (const a of ranged) {
    assert.deepEqual([Number(a.min), Number(a.max)], RANGES[a.id], `#${a.id} min/max`);
    assert.ok(a.type === 'number' || a.type === 'range', `#${a.id} is a number or range box`);
  }
});

test('inRange: integers for integer keys, real numbers for real ones, both ends included', () => {
  assert.equal(inRange('dModel', 1), true);
  assert.equal(inRange('dModel', 1024), true);
  assert.equal(inRange('dModel', 1025), false);
  assert.equal(inRange('dModel', 0), false);
  assert.equal(inRange('dModel', 2.5), false);
  assert.equal(inRange('base', 0.5), true);
  assert.equal(inRange('base', 0), false);
  assert.equal(inRange('thr', 1), true);
  assert.equal(inRange('thr', Number.NaN), false);
  assert.equal(inRange('seed', 2 ** 31), false);
});

test('parse: a link clamps to the same ranges the boxes accept', () => {
  for (const [key, [lo, hi]] of Object.entries(RANGES)) {
    assert.equal(parse(`#${key}=${hi * 2 + 1}`)[key], hi, `${key} above`);
    assert.equal(parse(`#${key}=${lo - 1}`)[key], lo, `${key} below`);
  }
});
