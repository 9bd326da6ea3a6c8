#!/usr/bin/python3
"""Train and export models/english: a character-level GPT-like language model on WordNet 3.0 glosses
(Debian package wordnet-base, /usr/share/wordnet/data.{noun,verb,adj,adv}; WordNet licence).

    /usr/bin/python3 training/train_english_lm.py [--steps N]

Corpus: the gloss of every synset (the text after "| "), one per line, in file order. Held out: glosses with
crc32(gloss) % 20 == 0. Characters outside the training alphabet (seen fewer than 20 times) map to <unk>.
Metrics: held-out loss (nats/char); per head: mean weight on the previous token (held-out glosses) and the
induction score on random lowercase strings repeated twice (charlm.induction).
Weights are shipped as F16; every number reported is computed with the F16-rounded weights.
"""
import collections
import os
import zlib

import torch

import charlm
import common as C

SEED = 1234
CONTEXT, D_MODEL, HEADS, LAYERS = 128, 64, 4, 3
WORDNET = "/usr/share/wordnet"
LICENCE = ("WordNet 3.0 licence (Princeton University; see models/english/LICENCE): WordNet 3.0 Copyright 2006 "
           "by Princeton University. All rights reserved. Permission to use, copy, modify and distribute for any "
           "purpose and without fee or royalty, provided the copyright notice and statements appear on all copies.")
DESCRIPTION = (
    "A small character-level language model trained on WordNet's dictionary glosses ('a tightly knit group "
    "...'). Its heads mostly look at the last few characters: several put about a third of their weight on the "
    "previous character (L2 H3 the most, counting from 1), which is how it spells words; L2 H1 looks at the "
    "spaces, i.e. where the current word began, and L3 H1 at punctuation. Try a random string typed "
    "twice, e.g. 'xqzvjk xqzvjk': this model is too small and briefly trained to have formed induction heads, so "
    "the second copy does not look back at the first one (induction scores stay near 0.01).")


def glosses():
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, "data." + pos), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  ") or "| " not in line:
                    continue  # licence header
                out.append(line.split("| ", 1)[1].strip())
    return out


def corpus():
    """(held-out glosses, tokenizer, training ids): the split, alphabet and text train_english_rope.py shares."""
    all_glosses = glosses()
    held = [g for g in all_glosses if zlib.crc32(g.encode()) % 20 == 0]
    train_text = "\n".join(g for g in all_glosses if zlib.crc32(g.encode()) % 20 != 0) + "\n"
    counts = collections.Counter(train_text)
    tok = C.CharTokenizer(c for c, k in counts.items() if k >= 20)
    ids = torch.tensor(tok.encode(train_text))
    print("glosses %d (held out %d), train chars %d, vocab %d" % (len(all_glosses), len(held), len(ids), len(tok.vocab)))
    return held, tok, ids


def measure(model, tok, held, trace=charlm.traced_decoder):
    """(held-out loss over 400 glosses, per-head previous-token and induction scores, the induction strings)."""
    eval_texts = held[:400]
    loss = charlm.text_loss(model, tok, eval_texts)
    prev = charlm.head_scores(model, tok, eval_texts[:100], charlm.previous_token, trace)
    ind_seqs = charlm.induction_sequences("abcdefghijklmnopqrstuvwxyz", 50, 25, SEED + 3)
    ind = charlm.head_scores(model, tok, ind_seqs, charlm.induction, trace)
    heads = [dict(p, induction=round(i, 4)) for p, i in zip(charlm.per_head(prev, "previousToken"),
                                                             (v for row in ind for v in row))]
    print("held-out loss %.4f nats/char" % loss)
    for h in heads:
        print(h)
    return loss, heads, ind_seqs


def write_heldout(out, model, tok, held, ind_seqs):
    C.write_json(out + "/heldout.json", {
        "metric": "loss", "rule": "WordNet glosses with crc32(gloss) % 20 == 0 (never trained on); the first 100",
        "lossDefinition": "mean cross-entropy (nats) of predicting each character from the ones before it, "
                          "over all texts (truncated to maxPositions), first character of each text not "
                          "predicted",
        "pytorchLoss": round(charlm.text_loss(model, tok, held[:100]), 6), "texts": held[:100],
        "induction": {"definition": "each text is r + r; from second-copy position i the weight on i - len(r) + 1",
                      "texts": ind_seqs[:20]}})


def write_config(out, name, task, description, licence, tok, model, steps, timing, loss, heads):
    C.write_json(out + "/config.json", {
        "format": "attnscope-model/1", "name": name, "task": task,
        "architecture": "decoder", "description": description, "tokenizer": tok.config(), **model.config(),
        "prompt": "the prompt's characters without <s>; the model continues them",
        "training": {
            "source": "WordNet 3.0 glosses, Debian package wordnet-base (/usr/share/wordnet/data.*); held out: "
                      "crc32(gloss) % 20 == 0",
            "licence": licence, "steps": steps, "batchSize": 24, "context": CONTEXT, **timing,
            "params": model.num_params(), "dtype": "F16",
            "metrics": {"heldoutLoss": round(loss, 4), "heldoutTexts": 400, "heads": heads,
                        "headsNote": "previousToken: mean weight on key i-1 over 100 held-out glosses; induction: "
                                     "charlm.induction on 50 random 25-letter strings repeated twice"}}}, indent=1)


def main():
    steps = C.steps_arg(2500)
    C.setup(SEED)
    held, tok, ids = corpus()
    model = charlm.build(len(tok.vocab), D_MODEL, HEADS, LAYERS, CONTEXT)
    timing = charlm.train(model, ids, CONTEXT, 24, steps, 3e-3, SEED)
    C.round_to_f16(model)
    loss, heads, ind_seqs = measure(model, tok, held)

    out = C.model_dir("english")
    C.write_safetensors(out + "/model.safetensors", model.tensors(), dtype="F16",
                        metadata={"format": "attnscope-model/1"})
    write_heldout(out, model, tok, held, ind_seqs)
    charlm.write_reference(model, tok, out, "english",
                           ["a small domesticated carnivorous mammal", "xqzvjk xqzvjk", "the act of"])
    with open("/usr/share/doc/wordnet-base/copyright", encoding="utf-8") as f, open(out + "/LICENCE", "w") as g:
        g.write(f.read())
    write_config(out, "english", "English character-level language model", DESCRIPTION, LICENCE, tok, model, steps,
                 timing, loss, heads)
    print("params", model.num_params(), timing)


if __name__ == "__main__":
    main()
