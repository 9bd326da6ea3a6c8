// `as.loadTokenizer(tokenizerJson)`: a Hugging Face tokenizer.json on its own (API.md "Modern decoder
// checkpoints", the tokenizer bullet), or SentencePiece model files (API.md "Encoder–decoder checkpoints"): encode with or without the file's post-processor template, decode with
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

function bytesArg(fn, name, v) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (v === undefined || v === null) fail('TypeError', `${fn}: ${name} is required`);
  return fail('TypeError', `${fn}: ${name} must be a Uint8Array or an ArrayBuffer (the file's bytes), got ${typeName(v)}`);
}

/**
 * The SentencePiece forms of a tokenizer argument (API.md "Encoder–decoder checkpoints"): `{ sentencepiece }`
 * (T5's spiece.model bytes) -> `{ sentencepiece: Uint8Array }`, `{ source, target, vocab }` (Marian's source.spm,
 * target.spm bytes and vocab.json as text or object) -> `{ source, target, vocab: string }`; null for any other
 * value. For loadTokenizer and loadPretrained (the C++ side: bindings/embind/spm_tokenizer_in.h).
 */
export function sentencePieceArg(fn, name, v) {
  if (!isPlainObject(v) || (v.sentencepiece === undefined && v.source === undefined)) return null;
  const allowed = v.sentencepiece !== undefined ? ['sentencepiece'] : ['source', 'target', 'vocab'];
  for (const key of Object.keys(v)) {
    if (!allowed.includes(key)) fail('TypeError', `${fn}: unknown option '${name}.${key}' (${allowed.join(', ')})`);
  }
  if (v.sentencepiece !== undefined) return { sentencepiece: bytesArg(fn, `${name}.sentencepiece`, v.sentencepiece) };
  const source = bytesArg(fn, `${name}.source`, v.source);
  const target = bytesArg(fn, `${name}.target`, v.target);
  let vocab = v.vocab;
  if (isPlainObject(vocab)) vocab = JSON.stringify(vocab);
  if (typeof vocab !== 'string') {
    fail('TypeError', `${fn}: ${name}.vocab must be vocab.json (a string or an object), got ${typeName(v.vocab)}`);
  }
  return { source, target, vocab };
}

/** Loads tokenizer.json (its text, or the parsed object), or SentencePiece files (sentencePieceArg). */
export function loadTokenizer(module, tokenizerJson) {
  const spm = sentencePieceArg(FN, 'tokenizer', tokenizerJson);
  if (spm !== null) return new Tokenizer(createOrThrow(module.HfTokenizerHandle, (h) => h.loadSentencePiece(spm)));
  let text = tokenizerJson;
  if (isPlainObject(text)) text = JSON.stringify(text);
  if (typeof text !== 'string') {
    fail('TypeError', `${FN}: tokenizerJson must be a string or an object (tokenizer.json, { sentencepiece } or { source, target, vocab }), got ${typeName(tokenizerJson)}`);
  }
  return new Tokenizer(createOrThrow(module.HfTokenizerHandle, (h) => h.load(text)));
}
