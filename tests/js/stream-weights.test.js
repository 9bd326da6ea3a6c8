// stream-weights.test.js: when the page streams a checkpoint's layers (web/stream-weights.js): checkpoints whose
// model_type the module streams (as.streamableModelTypes, asked of the module, not a list kept in the page) above the
// budget, in a context that can read a File synchronously; the budget is 1 GB or a quarter of the device's memory,
// whichever is less.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAs } from './helpers.js';
import { STREAM_ABOVE, streamBudget, streamChoice } from '../../web/stream-weights.js';

const as = await loadAs();
const types = as.streamableModelTypes;
const file = (size) => ({ size });
const config = (type) => JSON.stringify({ model_type: type });

test('streamChoice: a checkpoint the module streams, above the budget, streams, in a worker only', () => {
  const budget = STREAM_ABOVE;
  const llama = config('llama');
  assert.deepEqual(streamChoice(llama, file(2.47e9), { types, budget, canReadSync: true }), { stream: true, bytes: 2.47e9, budget });
  assert.equal(streamChoice(llama, file(STREAM_ABOVE), { types, budget, canReadSync: true }).stream, false); // at the budget: resident
  assert.equal(streamChoice(llama, [file(6e8), file(6e8)], { types, budget, canReadSync: true }).stream, true); // shards add up
  assert.equal(streamChoice(llama, file(2.47e9), { types, budget, canReadSync: false }).stream, false); // no FileReaderSync
  for (const type of ['t5', 'bart', 'gpt2', 'bert']) {
    assert.equal(streamChoice(config(type), file(3e9), { types, budget, canReadSync: true }).stream, false, type);
  }
  // every type the module lists streams; the page keeps no list of its own (a build without the list: none)
  for (const type of types) assert.equal(streamChoice(config(type), file(3e9), { types, budget, canReadSync: true }).stream, true, type);
  assert.equal(streamChoice(llama, file(3e9), { types: ['qwen2'], budget, canReadSync: true }).stream, false);
  assert.equal(streamChoice(llama, file(3e9), { types: undefined, budget, canReadSync: true }).stream, false);
  assert.equal(streamChoice('{not json', file(3e9), { types, budget, canReadSync: true }).stream, false);
  assert.equal(streamChoice(llama, file(3e9), { types, budget }).stream, false); // Node has no FileReaderSync
});

test('streamBudget: 1 GB, or a quarter of the device memory when that is less', () => {
  assert.equal(streamBudget({}), 1e9);
  assert.equal(streamBudget(undefined), 1e9);
  assert.equal(streamBudget({ deviceMemory: 8 }), 1e9);
  assert.equal(streamBudget({ deviceMemory: 2 }), 5e8);
  assert.equal(streamBudget({ deviceMemory: 0.5 }), 1.25e8);
});
