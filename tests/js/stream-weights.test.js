// stream-weights.test.js: when the page streams a checkpoint's layers (web/stream-weights.js): decoder checkpoints
// above the budget, in a context that can read a File synchronously; the budget is 1 GB or a quarter of the
// device's memory, whichever is less.
import test from 'node:test';
import assert from 'node:assert/strict';
import { STREAM_ABOVE, streamBudget, streamChoice } from '../../web/stream-weights.js';

const llama = JSON.stringify({ model_type: 'llama' });
const file = (size) => ({ size });

test('streamChoice: a decoder checkpoint above the budget streams, in a worker only', () => {
  const budget = STREAM_ABOVE;
  assert.deepEqual(streamChoice(llama, file(2.47e9), { budget, canReadSync: true }), { stream: true, bytes: 2.47e9, budget });
  assert.equal(streamChoice(llama, file(STREAM_ABOVE), { budget, canReadSync: true }).stream, false); // at the budget: resident
  assert.equal(streamChoice(llama, [file(6e8), file(6e8)], { budget, canReadSync: true }).stream, true); // shards add up
  assert.equal(streamChoice(llama, file(2.47e9), { budget, canReadSync: false }).stream, false); // no FileReaderSync
  for (const type of ['t5', 'bart', 'gpt2', 'bert']) {
    assert.equal(streamChoice(JSON.stringify({ model_type: type }), file(3e9), { budget, canReadSync: true }).stream, false, type);
  }
  assert.equal(streamChoice('{not json', file(3e9), { budget, canReadSync: true }).stream, false);
  assert.equal(streamChoice(llama, file(3e9), { budget }).stream, false); // Node has no FileReaderSync
});

test('streamBudget: 1 GB, or a quarter of the device memory when that is less', () => {
  assert.equal(streamBudget({}), 1e9);
  assert.equal(streamBudget(undefined), 1e9);
  assert.equal(streamBudget({ deviceMemory: 8 }), 1e9);
  assert.equal(streamBudget({ deviceMemory: 2 }), 5e8);
  assert.equal(streamBudget({ deviceMemory: 0.5 }), 1.25e8);
});
