// `as.loadTokenizer(tokenizerJson)`: a Hugging Face tokenizer.json on its own (API.md "Modern decoder
// checkpoints", the tokenizer bullet): encode with or without the file's post-processor template, decode with
// the file's decoder. Layer: bindings/js. Checks JS types only; the C++ core (src/tokenizers/hf_tokenizer.h)
// checks the file.
import { createOrThrow, fail, unwrap } from './errors.js';
import { Handle, live } from './handle.js';
import { checkString, idArray, isPlainObject, typeName, wellFormed } from './validate.js';

const FN = 'loadTokenizer';

/** A loaded tokenizer.json; free it with delete(). */
export class Tokenizer extends Handle {
  constructor(handle) {
    super(handle, 'tokenizer');
  }

  /** Ids in use, added tokens included. */
  get vocabSize() {
    return live(this, 'vocabSize').vocabSize();
  }

  /**
   * `{ ids, tokens, offsets }` of text; `addSpecialTokens` (default true) applies the file's post-processor
   * (BOS etc.), as Hugging Face's `Tokenizer.encode(text)` does.
   */
  encode(text, options = {}) {
    const h = live(this, 'encode');
    checkString('encode', 'text', text);
    if (!isPlainObject(options)) fail('TypeError', `encode: options must be an object, got ${typeName(options)}`);
    for (const key of Object.keys(options)) {
      if (key !== 'addSpecialTokens') fail('TypeError', `encode: unknown option '${key}'`);
    }
    const { addSpecialTokens = true } = options;
    if (typeof addSpecialTokens !== 'boolean') {
      fail('TypeError', `encode: addSpecialTokens must be a boolean, got ${typeName(addSpecialTokens)}`);
    }
    return unwrap(h.encode(wellFormed(text), addSpecialTokens));
  }

  /** The text of ids through the file's decoder (special tokens included). */
  decode(ids) {
    const h = live(this, 'decode');
    return unwrap(h.decode(idArray('decode', 'ids', ids))).text;
  }
}

/** Loads tokenizer.json (its text, or the parsed object). */
export function loadTokenizer(module, tokenizerJson) {
  let text = tokenizerJson;
  if (isPlainObject(text)) text = JSON.stringify(text);
  if (typeof text !== 'string') {
    fail('TypeError', `${FN}: tokenizerJson must be a string or an object (tokenizer.json), got ${typeName(tokenizerJson)}`);
  }
  return new Tokenizer(createOrThrow(module.HfTokenizerHandle, (h) => h.load(text)));
}
