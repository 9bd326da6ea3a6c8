// The zh-CN page's walk for untranslated UI (tests/browser/i18n.test.js, and the long-input views in
// long-input.test.js): every text node and every title / aria-label / placeholder / optgroup label outside
// [data-no-i18n] containers, words that are not Latin names allowed here, identifiers or whole tokens of the trace.

// Latin words allowed on the Chinese page: names, file formats, the symbols of the formulas, and the keyboard's
// key labels (Chinese keyboards say Shift too)
export const ALLOW = new Set(`shift attnscope webassembly wasm simd english json svg png csv bpe gpt bert relu gelu ffn
  softmax tanh sin cos exp max argmax concat norm pre post layernorm rollout nat nats pad mask viridis magma rdbu
  chromatic scale bahdanau nadaraya watson validlen hugging face uncased distilgpt config safetensors tokenizer
  vocab merges txt json scores score weights weight context features values output dim llama mistral gemma qwen
  phi api save generate logit lens bart mbart marian dates reverse abnar zuidema`.split(/\s+/).filter(Boolean));

/**
 * English-looking words in the page's UI (text nodes and attributes outside [data-no-i18n]), with where; within the
 * elements matching `roots` (a selector; default the whole page).
 */
export function englishWords(page, roots = 'body') {
  return page.evaluate(([allow, sel]) => {
    const ok = new Set(allow);
    // tokens are never translated (the worked example's are English): words that are whole tokens pass
    const tr = window.__attnscope.trace;
    const tokens = new Set([...(tr?.tokens ?? []), ...(tr?.source?.tokens ?? [])].map((x) => x.trim()));
    const found = [];
    const skip = (el) => !el || el.closest('[data-no-i18n], script, style, textarea');
    const check = (raw, where) => {
      // file names (model.safetensors) and hyphenated names (bert-base-uncased) are names, not words
      const text = raw.replace(/[\w-]+\.(json|safetensors|txt|bpe|model|spm)\b/g, ' ').replace(/\b\w+(-\w+)+\b/g, ' ');
      for (const w of text.match(/[A-Za-z][A-Za-z0-9_]*/g) ?? []) {
        if (tokens.has(w)) continue;
        // identifiers (q_i, norm1, ffOutput, dModel), single letters and two-letter symbols are not words
        if (w.length < 3 || /[0-9_]/.test(w) || /[a-z][A-Z]/.test(w)) continue;
        if (!ok.has(w.toLowerCase())) found.push(`${where}: "${w}" in "${raw.trim().slice(0, 80)}"`);
      }
    };
    const tops = [...document.querySelectorAll(sel)];
    for (const top of tops) {
      const walker = document.createTreeWalker(top, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!skip(n.parentElement)) check(n.nodeValue, n.parentElement.tagName.toLowerCase() + (n.parentElement.id ? `#${n.parentElement.id}` : ''));
      }
    }
    for (const el of document.querySelectorAll('[title], [aria-label], [placeholder], optgroup[label]')) {
      if (skip(el) || !tops.some((top) => top.contains(el))) continue;
      for (const a of ['title', 'aria-label', 'placeholder', 'label']) {
        const v = el.getAttribute(a);
        if (v && !(a === 'label' && el.tagName !== 'OPTGROUP')) check(v, `${el.tagName.toLowerCase()}[${a}]`);
      }
    }
    if (sel === 'body') check(document.title, 'title');
    return found;
  }, [[...ALLOW], roots]);
}

