// web/store.js (the page's state and the one table of what each key triggers) and web/protocol.js (the compute
// worker's messages): both DOM-free.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createStore, TRIGGERS, EFFECTS } from '../../web/store.js';
import { DEFAULTS } from '../../web/state.js';
import * as msg from '../../web/protocol.js';

/** A store whose every effect appends its name (and options) to `log`. */
function logged(hash = '') {
  const store = createStore(hash);
  const log = [];
  for (const e of EFFECTS) store.on(e, (o) => log.push(o && Object.keys(o).length ? `${e} ${JSON.stringify(o)}` : e));
  return { store, log };
}

test('TRIGGERS: every state key (and the words view flag) triggers known effects', () => {
  for (const k of [...Object.keys(DEFAULTS), 'words']) {
    assert.ok(Array.isArray(TRIGGERS[k]) && TRIGGERS[k].length, `${k} has a row`);
    for (const e of TRIGGERS[k]) assert.ok(EFFECTS.includes(e), `${k}: ${e}`);
  }
  // what changes only the drawing never recomputes; what changes the model always does
  for (const k of ['agg', 'thr', 'topk', 'token', 'heads', 'words']) assert.ok(!TRIGGERS[k].some((e) => e.startsWith('recompute')), k);
  for (const k of ['text', 'model', 'dModel', 'seed', 'tokenizer']) assert.ok(TRIGGERS[k].some((e) => e.startsWith('recompute')), k);
});

test('createStore: the link\'s state; a link naming the user\'s checkpoint shows the seeded model', () => {
  assert.equal(createStore('#dModel=8').state.dModel, 8);
  assert.equal(createStore('#model=checkpoint').state.model, 'random');
});

test('store.change: a keystroke is sent before the link is written; a number waits its delay', () => {
  const { store, log } = logged();
  store.change('text', 'hello');
  assert.deepEqual(log, ['recompute-now', 'link-soon', 'controls']);
  log.length = 0;
  store.change('dModel', 8, { delay: 250 });
  assert.deepEqual(log, ['link {"delay":250}', 'controls {"delay":250}', 'recompute {"delay":250}']);
  log.length = 0;
  store.change('dModel', 8, { delay: 250 });
  assert.deepEqual(log, [], 'an unchanged value triggers nothing');
});

test('store.change: a new model starts at layer 0 with every head, and shows its output whole', () => {
  const { store } = logged('#layer=1&heads=0,2&grow=3');
  store.change('numHeads', 2);
  assert.deepEqual([store.state.layer, store.state.heads, store.state.grow], [0, 'all', 0]);
  const s2 = logged('#layer=3&numLayers=6').store;
  s2.change('numLayers', 2);
  assert.equal(s2.state.layer, 0, 'a layer beyond the new count');
});

test('store.update: several keys, their effects once each in EFFECTS order, even for unchanged values', () => {
  const { store, log } = logged();
  store.update({ heads: '1', layer: 0 });
  assert.deepEqual(log, ['link', 'link-soon', 'redraw', 'refetch']);
  assert.equal(store.state.heads, '1');
  log.length = 0;
  store.update({ words: true });
  assert.deepEqual(log, ['redraw']);
  assert.equal(store.view.words, true);
  assert.equal('words' in store.state, false, 'a view flag is not in the link');
  assert.throws(() => store.on('nothing', () => {}), /store.on: effect \(nothing\) must be one of/);
});

test('protocol: requests carry exactly their kind\'s arguments; answers name their id and kind', () => {
  assert.deepEqual(msg.request('heldout', 7, { name: 'x' }), { id: 7, kind: 'heldout', name: 'x' });
  assert.throws(() => msg.request('fly', 1, {}), /request: kind \(fly\) must be one of run, openFile, fileStream, load, next, generate, heldout, inside, cancel, rope, translate, pair, memory, crash/);
  assert.throws(() => msg.request('run', 1, { state: {}, need: {}, extra: 1 }), /request: run takes state, need, not extra/);
  assert.deepEqual(msg.done(3, 'run', 'v', 2), { type: 'done', id: 3, kind: 'run', ok: true, value: 'v', ms: 2 });
  assert.deepEqual(msg.failed(3, 'next', new RangeError('bad')), { type: 'done', id: 3, kind: 'next', ok: false, error: { name: 'RangeError', message: 'bad' } });
});
