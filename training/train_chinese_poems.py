#!/usr/bin/python3
"""Train and export models/chinese-poems: a character-level GPT-like language model on the regular-verse poems
of Debian's fortunes-zh: the 300 Tang poems (/usr/share/games/fortunes/tang300) and the 100 Song poems
(/usr/share/games/fortunes/song100); GPL-3.0+, /usr/share/doc/fortunes-zh/copyright. (The package's third file,
/usr/share/games/fortunes/chinese, is modern prose sayings, not verse, and is not used.)

    /usr/bin/python3 training/train_chinese_poems.py [--steps N]

Corpus: the body of every poem whose lines all have the regular layout "five or seven characters，five or seven
characters。" (one couplet per line; title and author lines, which carry ANSI colour codes, dropped; poems of
ci / irregular lines skipped), lines joined by "\\n", each poem ended by "\\n". Held out: poems with
crc32(body) % 10 == 0. Characters seen fewer than 2 times in the training poems map to <unk>
(never a training target, so greedy output does not fall into <unk>). Metrics: held-out
loss (nats/char) next to the unigram baseline (training character frequencies, add-one smoothed) and the uniform
one (log vocabulary size); per head the mean weight each character puts on the character at the same position of
the previous verse (verses = runs between the punctuation marks ，。？！；：、 and line ends, when both verses have
the same length) and of the previous line (the same position of the previous couplet, punctuation included).
Weights are shipped as F16; every number reported is computed with the F16-rounded weights.
"""
import collections
import json
import math
import re
import zlib

import torch

import charlm
import common as C

SEED = 1234
CONTEXT, D_MODEL, HEADS, LAYERS = 128, 64, 4, 3
BATCH, LR, DROPOUT = 32, 2e-3, 0.3
SOURCES = ["/usr/share/games/fortunes/tang300", "/usr/share/games/fortunes/song100"]
LICENCE = ("GPL-3.0+ (Debian package fortunes-zh, /usr/share/doc/fortunes-zh/copyright); the poems themselves are "
           "Tang and Song dynasty texts in the public domain")
DESCRIPTION = (
    "A small character-level language model trained on about 350 Tang and Song poems in regular verse: one "
    "couplet per line, five or seven characters, a comma, five or seven characters, a full stop. Give it a "
    "first line such as 床前明月光， and it continues in that metre. Look for heads that attend to the character "
    "at the same position of the previous verse or line: parallelism is part of the form, and the fixed period "
    "tells the model where a verse ends.")
PUNCT = "，。？！；：、"
MIN_COUNT = 2
COUPLET = re.compile("^([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})[，、；：]([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})[。？！；]$")


def poems():
    """Bodies of the poems whose every line is one regular couplet, each line ended by "\\n"."""
    out = []
    for source in SOURCES:
        for p in open(source, encoding="utf-8").read().split("%\n"):
            lines = [l.strip() for l in p.split("\n") if l.strip() and not l.startswith("\x1b")]
            if lines and all(COUPLET.match(l) for l in lines):
                out.append("".join(l + "\n" for l in lines))
    return out


def unigram_loss(train_ids, tok, texts, vocab_size):
    """The baseline: nats/char of the held-out texts under the training characters' add-one smoothed frequencies
    (same positions as charlm.text_loss: the first character of each text not predicted)."""
    counts = collections.Counter(train_ids)
    total = len(train_ids) + vocab_size
    nll, n = 0.0, 0
    for t in texts:
        for i in tok.encode(t)[1:CONTEXT]:
            nll -= math.log((counts[i] + 1) / total)
            n += 1
    return nll / n


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
    steps = C.steps_arg(350)
    C.setup(SEED)
    all_poems = poems()
    held = [p for p in all_poems if zlib.crc32(p.encode()) % 10 == 0]
    train = [p for p in all_poems if zlib.crc32(p.encode()) % 10 != 0]
    train_text = "".join(train)
    counts = collections.Counter(train_text)
    tok = C.CharTokenizer(c for c, k in counts.items() if k >= MIN_COUNT)
    ids = torch.tensor(tok.encode(train_text))
    print("poems %d (held out %d), train chars %d, vocab %d" % (len(all_poems), len(held), len(ids), len(tok.vocab)))
    model = charlm.build(len(tok.vocab), D_MODEL, HEADS, LAYERS, CONTEXT, dropout=DROPOUT)
    timing = charlm.train(model, ids, CONTEXT, BATCH, steps, LR, SEED, ignore_index=C.UNK)
    C.round_to_f16(model)

    eval_poems = [p for p in held if len(p) <= CONTEXT]
    loss = charlm.text_loss(model, tok, held)
    unigram = unigram_loss(ids.tolist(), tok, held, len(tok.vocab))
    uniform = math.log(len(tok.vocab))
    pv = charlm.head_scores(model, tok, eval_poems, previous_verse)
    pl = charlm.head_scores(model, tok, eval_poems, previous_line)
    heads = [dict(a, previousLine=round(b, 4)) for a, b in zip(charlm.per_head(pv, "previousVerse"),
                                                               (v for row in pl for v in row))]
    print("held-out loss %.4f nats/char (unigram %.4f, uniform %.4f)" % (loss, unigram, uniform))
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
            "source": "the regular-verse poems (one five- or seven-character couplet per line) of the 300 Tang and "
                      "100 Song poems, Debian package fortunes-zh (%s); held out: crc32(body) %% 10 == 0"
                      % ", ".join(SOURCES),
            "licence": LICENCE, "steps": steps, "batchSize": BATCH, "context": CONTEXT, "dropout": DROPOUT,
            "peakLearningRate": LR, "trainPoems": len(train), "trainChars": len(ids),
            **timing, "params": model.num_params(), "dtype": "F16",
            "metrics": {"heldoutLoss": round(loss, 4), "unigramLoss": round(unigram, 4),
                        "uniformLoss": round(uniform, 4), "heldoutPoems": len(held), "heads": heads,
                        "headsNote": "mean weight on the same position of the previous verse / line over the %d "
                                     "held-out poems that fit in maxPositions" % len(eval_poems)}}}, indent=1)
    for case in json.load(open(out + "/reference.json"))["cases"]:
        print(repr(case["input"]), "->", repr(case["output"]))
    print("params", model.num_params(), timing)


if __name__ == "__main__":
    main()
