// The lifecycle and create-or-throw rules every wasm-backed class shares (bindings/js/handle.js, errors.js
// createOrThrow), checked on stand-in Embind objects: no wasm needed.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Handle, live } from '../../bindings/js/handle.js';
import { createOrThrow } from '../../bindings/js/errors.js';
import { isPlainObject, typeName, wellFormed } from '../../bindings/js/validate.js';

class Counted {
  static freed = 0;
  delete() { Counted.freed += 1; }
}

class Thing extends Handle {
  constructor(handle) { super(handle, 'thing'); }
  run() { return live(this, 'run'); }
}

test('Handle: live until delete(), then "<fn>: this <what> has been deleted"; delete() frees once', () => {
  const before = Counted.freed;
  const h = new Counted();
  const t = new Thing(h);
  assert.equal(t.run(), h);
  t.delete();
  t.delete();
  assert.equal(Counted.freed - before, 1);
  assert.throws(() => t.run(), (e) => e.constructor === Error && e.message === 'run: this thing has been deleted');
  assert.deepEqual(Object.keys(t), [], 'the handle is not an enumerable property');
});

test('Handle: an object without delete() (held, not owned) is only marked deleted', () => {
  const t = new Thing({});
  t.delete();
  assert.throws(() => t.run(), /run: this thing has been deleted/);
});

test('createOrThrow: returns the loaded object, or frees it and throws the engine error', () => {
  const before = Counted.freed;
  const ok = createOrThrow(Counted, () => null);
  assert.ok(ok instanceof Counted);
  assert.equal(Counted.freed, before);
  const failing = () => ({ error: { kind: 'RangeError', message: 'f: x (0) must be positive' } });
  assert.throws(() => createOrThrow(Counted, failing),
    (e) => e instanceof RangeError && e.message === 'f: x (0) must be positive');
  assert.equal(Counted.freed, before + 1);
});

test('typeName, isPlainObject, wellFormed: the shared JS-type rules', () => {
  assert.equal(typeName(null), 'null');
  assert.equal(typeName([]), 'Array');
  assert.equal(typeName(new Float32Array(1)), 'Float32Array');
  assert.equal(typeName(new Blob([])), 'Blob');
  assert.equal(typeName(1), 'number');
  assert.ok(isPlainObject({}));
  for (const v of [null, [], new Uint8Array(1), 'x']) assert.ok(!isPlainObject(v));
  assert.equal(wellFormed('a\ud800b'), 'a\ufffdb');
});
