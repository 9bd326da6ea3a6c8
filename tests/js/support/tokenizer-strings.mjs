// Test strings for the tokenizer parity test (tests/js/tokenizers-modern.test.js): a hand list of tricky inputs
// and a deterministic generator (fixed seed, mulberry32) mixing prose, code, digit runs, whitespace runs, CJK,
// emoji with ZWJ/skin tones, combining marks, NFC/NFKC-sensitive characters and special tokens typed in the text.
import { mulberry32 } from '../../../web/rng.js';

export const HAND = [
  '', ' ', '  ', '\n', '\n\n', '\t', ' \t\n', 'Hello world', ' Hello', "I'M 12345 naïve", 'Hello world!',
  "they're here, we'll see, I'd say it's 'quoted' 'S 'T 'Re", 'ſ ſs \'ſ',
  'def f(x):\n    return x ** 2  # square\n', 'if (a && b) { return c; }\r\n',
  '1234567890 12 123 1234 0.5 -3e10 ١٢٣٤ ௧௨௩ Ⅻ ½ ²',
  '   leading spaces', 'trailing spaces   ', 'mid   spaces\t\ttabs\n\n\nnewlines \u00A0nbsp \u2003em',
  '\u0085nel\u2028ls\u2029ps\u200Bzwsp\uFEFFbom\u180Emvs',
  '日本語のテキストです。中文测试，한국어 텍스트', '👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷 ❤️', 'e\u0301te\u0301 Å Å Ω Ω ﬁ ＡＢＣ ｶﾞ',
  'Ａｎｇｓｔｒｏｍ \u212B \u2126 \uF900', 'café naïve coöperate résumé', '\u1100\u1161\u11A8 가',
  '<|begin_of_text|>hi<|end_of_text|>', '<s>hello</s> <unk>', '<bos>x<eos><start_of_turn>user\n',
  '<|im_start|>user\nhi<|im_end|>', '<|endoftext|>', 'a<0x41>b ▁▁ ▁x',
  "Don't stop'Til You Get Enough", 'x'.repeat(300), '!!!???...', '$100,000.00 (USD)', 'http://example.com/a?b=c&d=e',
  'snake_case_name camelCaseName SCREAMING_CASE', '\u0000\u0001\u001F\u007F', '�',
];

const PARTS = [
  'the', 'quick', 'brown', 'fox', 'Jumps', 'OVER', 'lazy', 'dog', "don't", "WE'LL", "it's", 'naïve', 'Straße',
  '東京', '北京市', 'こんにちは', '안녕하세요', 'Привет', 'мир', 'مرحبا', 'שלום', 'नमस्ते', 'ελληνικά', '👍', '👨‍💻', '🎉🎉',
  '0', '7', '42', '123', '2026', '3.14159', '1,000,000', '٣٤', 'x', 'I', 'a', 'Ω', 'é', 'e\u0301', 'ﬁ',
  '(', ')', '{', '}', '[', ']', ';', ':', '.', ',', '!', '?', '"', "'", '`', '#', '//', '/*', '*/', '->', '=>', '==',
  '+=', '...', '—', '–', '«', '»', '\u200B', '<s>', '</s>', '<|begin_of_text|>', '<|eot_id|>', '<|im_start|>',
  '<|im_end|>', '<bos>', '<start_of_turn>', '<end_of_turn>', '<unk>', 'function', 'return', 'const', 'print()',
];
const SPACES = [' ', ' ', ' ', ' ', '', '', '  ', '   ', '\t', '\n', '\n\n', '\r\n', ' \n', '\n  ', '\u00A0', '\u3000'];

/** n generated strings (seeded, so every run and machine sees the same ones). */
export function generated(n, seed = 20261126) {
  const rnd = mulberry32(seed);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + Math.floor(rnd() * 14);
    let s = rnd() < 0.2 ? pick(SPACES) : '';
    for (let k = 0; k < len; k++) {
      s += pick(PARTS);
      if (rnd() < 0.8) s += pick(SPACES);
      if (rnd() < 0.05) s += String(Math.floor(rnd() * 1e7));
    }
    out.push(s);
  }
  return out;
}

/** The hand list followed by `n` generated strings. */
export const allStrings = (n = 320) => [...HAND, ...generated(n)];
