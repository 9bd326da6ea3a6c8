// The activation-patching worked examples of panel 9 (layer: web; data only, shared with tests/js/patching-reverse.test.js):
// clean vs corrupted prompts of the same token length and the two tokens of the metric logit(A) − logit(B).
//  - IOI: the indirect-object example (Wang et al. 2022), for GPT-2's tokenizer (a loaded GPT-2 checkpoint).
//  - REVERSE: the bundled `reverse` model (models/reverse) writing the first digit of the reversal. Only the last
//    prompt digit differs (7 → 2); measured with as.patch (tests/js/patching-reverse.test.js): per layer × position
//    the whole effect sits at that digit's position in every layer (normalised 1.00, 0.99, 0.98) and nowhere else
//    until layer 2 reads it; per head, layer 2's heads 0 and 3 — the ones that look straight at the digit to copy —
//    restore it (0.59 and 0.22), every other head < 0.03.
export const IOI = {
  clean: 'When Mary and John went to the store, John gave a drink to',
  corrupted: 'When Mary and John went to the store, Mary gave a drink to',
  tokens: [' Mary', ' John'],
};

export const REVERSE = {
  model: 'reverse',
  clean: '3 9 1 4 7>',
  corrupted: '3 9 1 4 2>',
  tokens: ['7', '2'],
};
