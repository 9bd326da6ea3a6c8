// The lifecycle every wrapper of a wasm object shares (STYLE 4.6): it holds the object, every method reaches it
// through live(this, fn) — which throws "<fn>: this <what> has been deleted" once delete() has run — and
// delete() frees it once (a second call is harmless). Layer: bindings/js.
import { fail } from './errors.js';

let liveHandle;

export class Handle {
  #handle;
  #what;

  /** `handle`: the Embind object (freed with its delete(), if it has one); `what`: how messages name this. */
  constructor(handle, what) {
    this.#handle = handle;
    this.#what = what;
  }

  /** Frees the wasm memory behind this object; later calls throw. Calling it twice is harmless. */
  delete() {
    if (this.#handle !== null) {
      this.#handle.delete?.();
      this.#handle = null;
    }
  }

  static {
    // Module-private: subclasses reach the handle through live(); it is not part of the public surface.
    liveHandle = (self, fn) => {
      // another object in a Handle's place (e.g. { run() {} } as a model): named, not "Cannot read private member"
      if (self === null || typeof self !== 'object' || !(#handle in self)) fail('TypeError', `${fn}: expected an attnscope object (a model, tokenizer or file from this package), got another object`);
      if (self.#handle === null) fail('Error', `${fn}: this ${self.#what} has been deleted`);
      return self.#handle;
    };
  }
}

/** The live wasm object of `self` (a Handle), or throws "<fn>: this <what> has been deleted". */
export const live = (self, fn) => liveHandle(self, fn);
