#!/usr/bin/python3
"""Train and export models/chinese-poems: a character-level GPT-like language model on the 300 Tang poems of
Debian's fortunes-zh (/usr/share/games/fortunes/tang300; GPL-3.0+, /usr/share/doc/fortunes-zh/copyright).

    /usr/bin/python3 training/train_chinese_poems.py [--steps N]

Corpus: the body of every poem (title and author lines, which carry ANSI colour codes, dropped), lines joined
by "\\n", poems separated by a blank line. Held out: poems with crc32(body) % 10 == 0. Characters seen once
in the training poems map to <unk>. Metrics: held-out loss (nats/char), and per head the mean weight each
character puts on the character at the same position of the previous verse (verses = runs between the
punctuation marks ，。？！；：、 and line ends, when both verses have the same length) and of the previous line.
Weights are shipped as F16; every number reported is computed with the F16-rounded weights.
"""
import collections
import re
import zlib

import torch

import charlm
import common as C

SEED = 1234
CONTEXT, D_MODEL, HEADS, LAYERS = 128, 64, 4, 3
SOURCE = "/usr/share/games/fortunes/tang300"
LICENCE = ("GPL-3.0+ (Debian package fortunes-zh, /usr/share/doc/fortunes-zh/copyright); the poems themselves are "
           "Tang dynasty texts in the public domain")
DESCRIPTION = (
    "A small character-level language model trained on the 300 Tang poems, whose lines have a fixed length "
    "(five or seven characters, then punctuation). Look for heads that attend to the character at the same "
    "position of the previous verse or line: parallelism is part of the form, and the model uses the fixed "
    "period to know where a verse ends.")
PUNCT = "，。？！；：、"


def poems():
    text = open(SOURCE, encoding="utf-8").read()
    out = []
    for p in text.split("%\n"):
        lines = [l for l in p.split("\n") if l and not l.startswith("\x1b")]
        if lines:
            out.append("\n".join(lines))
    return out


def verses(text):
    """[(start, end)] character ranges of the verses of a text."""
    return [(m.start(), m.end()) for m in re.finditer("[^%s\n]+" % PUNCT, text)]


def previous_verse(text, ids, w):
    n = len(ids)
    spans = [(a, b) for a, b in verses(text) if b <= n]
    pairs = [(a2 + k, a1 + k) for (a1, b1), (a2, b2) in zip(spans, spans[1:]) if b1 - a1 == b2 - a2
             for k in range(b2 - a2)]
    return torch.stack([w[:, q, kk] for q, kk in pairs], 1).mean(1)


def previous_line(text, ids, w):
    n = len(ids)
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines = [(a, text.index("\n", a) if "\n" in text[a:] else len(text)) for a in starts]
    lines = [(a, b) for a, b in lines if b <= n]
    pairs = [(a2 + k, a1 + k) for (a1, b1), (a2, b2) in zip(lines, lines[1:]) if b1 - a1 == b2 - a2
             for k in range(b2 - a2)]
    return torch.stack([w[:, q, kk] for q, kk in pairs], 1).mean(1)


def main():
    steps = C.steps_arg(600)
    C.setup(SEED)
    all_poems = poems()
    held = [p for p in all_poems if zlib.crc32(p.encode()) % 10 == 0]
    train = [p for p in all_poems if zlib.crc32(p.encode()) % 10 != 0]
    train_text = "\n\n".join(train) + "\n\n"
    counts = collections.Counter(train_text)
    tok = C.CharTokenizer(c for c, k in counts.items() if k >= 2)
    ids = torch.tensor(tok.encode(train_text))
    print("poems %d (held out %d), train chars %d, vocab %d" % (len(all_poems), len(held), len(ids), len(tok.vocab)))
    model = charlm.build(len(tok.vocab), D_MODEL, HEADS, LAYERS, CONTEXT, dropout=0.1)
    timing = charlm.train(model, ids, CONTEXT, 32, steps, 3e-3, SEED)
    C.round_to_f16(model)

    eval_poems = [p for p in held if len(p) <= CONTEXT]
    loss = charlm.text_loss(model, tok, held)
    pv = charlm.head_scores(model, tok, eval_poems, previous_verse)
    pl = charlm.head_scores(model, tok, eval_poems, previous_line)
    heads = [dict(a, previousLine=round(b, 4)) for a, b in zip(charlm.per_head(pv, "previousVerse"),
                                                               (v for row in pl for v in row))]
    print("held-out loss %.4f nats/char" % loss)
    for h in heads:
        print(h)

    out = C.model_dir("chinese-poems")
    C.write_safetensors(out + "/model.safetensors", model.tensors(), dtype="F16",
                        metadata={"format": "attnscope-model/1"})
    C.write_json(out + "/heldout.json", {
        "metric": "loss", "rule": "poems with crc32(body) % 10 == 0 (never trained on)",
        "lossDefinition": "mean cross-entropy (nats) of predicting each character from the ones before it, "
                          "over all texts (truncated to maxPositions), first character of each text not predicted",
        "pytorchLoss": round(loss, 6), "texts": held,
        "headAnalysis": {"previousVerse": "weight from verse v char k to verse v-1 char k (equal lengths); verses "
                                          "are runs between %s and line ends" % PUNCT,
                         "previousLine": "weight from line l char k to line l-1 char k (equal lengths)",
                         "texts": eval_poems}})
    charlm.write_reference(model, tok, out, "chinese-poems", ["床前明月光，", "白日依山尽，黄河入海流。\n", "春"])
    C.write_json(out + "/config.json", {
        "format": "attnscope-model/1", "name": "chinese-poems", "task": "Chinese character-level language model",
        "architecture": "decoder", "description": DESCRIPTION, "tokenizer": tok.config(), **model.config(),
        "prompt": "the prompt's characters without <s>; the model continues them",
        "training": {
            "source": "300 Tang poems, Debian package fortunes-zh (%s); held out: crc32(body) %% 10 == 0" % SOURCE,
            "licence": LICENCE, "steps": steps, "batchSize": 32, "context": CONTEXT, "dropout": 0.1,
            **timing, "params": model.num_params(), "dtype": "F16",
            "metrics": {"heldoutLoss": round(loss, 4), "heldoutPoems": len(held), "heads": heads,
                        "headsNote": "mean weight on the same position of the previous verse / line over the %d "
                                     "held-out poems that fit in maxPositions" % len(eval_poems)}}}, indent=1)
    print("params", model.num_params(), timing)


if __name__ == "__main__":
    main()
