#!/usr/bin/python3
"""Measure what each attention head of the shipped transformers does and store the labels in their config.json
(`heads`: the labelled heads; `headScores`: every head's score per measure, with the uniform-attention baseline
and the definition). Reads only models/<name>/{config.json, model.safetensors, heldout.json} and runs
check_export.py's independent float64 NumPy forward, so tests/js/heads.test.js can recompute every number through
attnscope on exactly the same inputs.

    /usr/bin/python3 training/label_heads.py [model name ...]     (default: english, english-rope, reverse,
                                                                   dates, chinese-poems, translate-en-zh)

Measures (weights w[h, query, key] of one teacher-forced run per text; "uniform" = what a head attending evenly
over the keys it may see would score on the same pairs):
  english      previousToken  mean w[i, i-1] over the queries i >= 1 of heldout.json's texts
               space          mean over queries i >= 1 of the total weight on keys j <= i that are spaces
               punctuation    the same for the characters of PUNCTUATION
               induction      on heldout.json's induction strings r + r: mean w[i, i - len(r) + 1] over the
                              second-copy positions i (the key after the earlier occurrence of the current token)
  english-rope the same four, and
               firstToken     mean w[i, 0] over the queries i >= 1 of heldout.json's texts (the attention sink)
  reverse      copy           prompt + target teacher-forced; for the query predicting output digit k, the weight
                              on the prompt digit it copies (the k-th from the end); copyArgmax: share of those
                              queries whose row maximum is that digit
  dates        field          cross-attention: for the query predicting each year/month/day digit of the ISO
                              target, the share of its row on the matching source field (year digits, month name
                              or number, day digits)
  chinese-poems previousLine  for the query that writes (predicts) the character at offset o of line k >= 1
                              (lines end with "\\n"), the weight on offset o of line k - 1: the character
                              in the same place one line up, as dates' and reverse's measures take the query
                              that writes a character
               sameOffset     the query at offset o of line k >= 1 itself, the weight on offset o of line k - 1
  translate-en-zh digit     cross-attention: for every (target character, source digit) pair of heldout.json's
                              `align` (a numeral reads its digit, a date's digit the digit it copies), the weight
                              of the query that writes the character (decoder position t) on that source digit;
               digitArgmax    share of those queries whose row maximum (first on ties) is that digit
A head gets a label for every measure whose score s is at least LABEL_RATIO times the uniform baseline u and at
least MIN_EXCESS of the way from u to 1 ((s - u) / (1 - u)): a ratio alone would label a head putting 0.05 on
a key that uniform attention gives 0.01, an excess alone would miss rare targets such as punctuation.
"""
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_export as X  # noqa: E402

LABEL_RATIO, MIN_EXCESS = 3.0, 0.1
PUNCTUATION = ",;:.()'\"-"
LABELS = {"previousToken": "previous token", "space": "spaces", "punctuation": "punctuation",
          "induction": "induction", "copy": "copies the digit to write", "field": "source field being written",
          "previousLine": "same position of the previous line", "sameOffset": "same offset of the previous line",
          "firstToken": "first token (sink)", "digit": "source digit being written"}


def load(name):
    d = os.path.join(X.MODELS, name)
    cfg = json.load(open(os.path.join(d, "config.json"), encoding="utf-8"))
    held = json.load(open(os.path.join(d, "heldout.json"), encoding="utf-8"))
    W = X.load_safetensors(os.path.join(d, "model.safetensors"))
    index = {t: i for i, t in enumerate(cfg["tokenizer"]["vocab"])}
    unk = index[cfg["tokenizer"]["unk"]]
    return d, cfg, held, W, lambda s: [index.get(c, unk) for c in s]


class Measure:
    """Sums of per-pair head weights and of the uniform baseline: score = mean over pairs."""

    def __init__(self, layers, heads):
        self.sum, self.base, self.n = np.zeros((layers, heads)), 0.0, 0

    def add(self, per_layer, baseline):
        """per_layer: [L] arrays [H] of the pair's weight (or weight share); baseline: the uniform row's."""
        self.sum += np.stack(per_layer)
        self.base += baseline
        self.n += 1

    def result(self, definition):
        return {"definition": definition, "pairs": self.n, "uniform": round(self.base / self.n, 4),
                "perHead": np.round(self.sum / self.n, 4).tolist()}


def english_like(cfg, W, held, enc):
    L, H = cfg["numLayers"], cfg["numHeads"]
    prev, space, punct = Measure(L, H), Measure(L, H), Measure(L, H)
    for t in held["texts"]:
        ids = enc(t)[:cfg["maxPositions"]]
        _, tr = X.transformer(cfg, W, ids)
        ws = tr["decoder"]
        is_space = np.array([c == " " for c in t[:len(ids)]], dtype=float)
        is_punct = np.array([c in PUNCTUATION for c in t[:len(ids)]], dtype=float)
        for i in range(1, len(ids)):
            prev.add([w[:, i, i - 1] for w in ws], 1.0 / (i + 1))
            space.add([w[:, i, :i + 1] @ is_space[:i + 1] for w in ws], is_space[:i + 1].mean())
            punct.add([w[:, i, :i + 1] @ is_punct[:i + 1] for w in ws], is_punct[:i + 1].mean())
    ind = Measure(L, H)
    for t in held["induction"]["texts"]:
        ids = enc(t)
        half = len(ids) // 2
        _, tr = X.transformer(cfg, W, ids)
        for i in range(half, len(ids) - 1):
            ind.add([w[:, i, i - half + 1] for w in tr["decoder"]], 1.0 / (i + 1))
    return {
        "previousToken": prev.result("mean weight of query i >= 1 on key i - 1 (heldout.json texts)"),
        "space": space.result("mean total weight of query i >= 1 on the keys j <= i that are spaces (heldout.json "
                              "texts)"),
        "punctuation": punct.result("mean total weight of query i >= 1 on the keys j <= i in %s (heldout.json "
                                    "texts)" % PUNCTUATION),
        "induction": ind.result("on heldout.json's induction strings r + r: mean weight of second-copy query i on "
                                "key i - len(r) + 1"),
    }


def english_rope(cfg, W, held, enc):
    """english's measures, and the attention sink: a RoPE model has no position table, and its heads may park
    their weight on the first character."""
    L, H = cfg["numLayers"], cfg["numHeads"]
    first = Measure(L, H)
    for t in held["texts"]:
        ids = enc(t)[:cfg["maxPositions"]]
        _, tr = X.transformer(cfg, W, ids)
        for i in range(1, len(ids)):
            first.add([w[:, i, 0] for w in tr["decoder"]], 1.0 / (i + 1))
    return dict(english_like(cfg, W, held, enc),
                firstToken=first.result("mean weight of query i >= 1 on key 0, the first character (the attention "
                                        "sink; heldout.json texts)"))


def reverse(cfg, W, held, enc):
    L, H = cfg["numLayers"], cfg["numHeads"]
    copy, arg = Measure(L, H), Measure(L, H)
    for it in held["items"]:
        prompt, target = it["input"], it["target"]
        ids = enc(prompt + target)
        _, tr = X.transformer(cfg, W, ids)
        digits = len(target)
        for k in range(digits):
            q = len(prompt) + k - 1          # the query that predicts output digit k
            key = 2 * (digits - 1 - k)       # the prompt digit it copies ("3 9 1>" has digits at 0, 2, 4)
            copy.add([w[:, q, key] for w in tr["decoder"]], 1.0 / (q + 1))
            arg.add([(np.argmax(w[:, q, :q + 1], axis=1) == key).astype(float) for w in tr["decoder"]],
                    1.0 / (q + 1))
    return {"copy": copy.result("prompt + target teacher-forced; weight of the query predicting output digit k "
                                "on the k-th prompt digit from the end (heldout.json items)"),
            "copyArgmax": arg.result("share of those queries whose row maximum (first on ties) is that digit")}


def date_fields(text):
    """{"year", "month", "day"} -> (start, end) character ranges in a dates input, from its digit and letter runs:
    the 4-digit run is the year; a month name (the letter run not followed by ',') is the month; otherwise the
    month is the middle number of the three (d.m.yyyy, yyyy/m/d, yyyy年m月d日)."""
    runs = [(m.start(), m.end(), m.group()) for m in re.finditer(r"[0-9]+|[A-Za-z]+", text)]
    words = [r for r in runs if r[2].isalpha() and not text[r[1]:].startswith(",")]
    nums = [r for r in runs if r[2].isdigit()]
    year = next(r for r in nums if len(r[2]) == 4)
    if words:
        month = words[0]
        day = next(r for r in nums if r is not year)
    else:
        month = nums[1]
        day = [r for r in nums if r is not year and r is not month][0]
    return {"year": year[:2], "month": month[:2], "day": day[:2]}


def dates(cfg, W, held, enc):
    L, H = cfg["numDecoderLayers"], cfg["numHeads"]
    vocab = cfg["tokenizer"]["vocab"]
    bos = vocab.index(cfg["tokenizer"]["bos"])
    share = Measure(L, H)
    for it in held["items"]:
        src, tgt = enc(it["input"]), [bos] + enc(it["target"])
        spans = date_fields(it["input"])
        _, tr = X.transformer(cfg, W, tgt, src)
        for t in range(10):
            field = "year" if t < 4 else "month" if 5 <= t <= 6 else "day" if t >= 8 else None
            if field is None:
                continue
            a, b = spans[field]
            share.add([w[:, t, a:b].sum(-1) for w in tr["cross"]], (b - a) / len(src))
    return {"field": share.result("cross-attention: share of the row of the query predicting ISO target digit t "
                                  "(year 0-3, month 5-6, day 8-9) on the matching source field (heldout.json "
                                  "items)")}


def translate(cfg, W, held, enc):
    L, H = cfg["numDecoderLayers"], cfg["numHeads"]
    vocab = cfg["tokenizer"]["vocab"]
    bos = vocab.index(cfg["tokenizer"]["bos"])
    share, arg = Measure(L, H), Measure(L, H)
    for it in held["items"]:
        if not it["align"]:
            continue
        src, tgt = enc(it["input"]), [bos] + enc(it["target"])
        _, tr = X.transformer(cfg, W, tgt, src)
        for t, s in it["align"]:
            share.add([w[:, t, s] for w in tr["cross"]], 1.0 / len(src))
            arg.add([(np.argmax(w[:, t, :], axis=-1) == s).astype(np.float64) for w in tr["cross"]], 1.0 / len(src))
    return {"digit": share.result("cross-attention: weight of the query writing target character t on the source digit "
                                  "it reads (heldout.json items' align pairs)"),
            "digitArgmax": arg.result("share of those queries whose row maximum (first on ties) is that digit")}


def chinese(cfg, W, held, enc):
    L, H = cfg["numLayers"], cfg["numHeads"]
    writes, same = Measure(L, H), Measure(L, H)
    for t in held["texts"]:
        ids = enc(t)[:cfg["maxPositions"]]
        _, tr = X.transformer(cfg, W, ids)
        starts = [0] + [m.end() for m in re.finditer("\n", t)]
        lines = [(a, t.find("\n", a) + 1 or len(t)) for a in starts if a < len(t)]
        for (a1, b1), (a2, b2) in zip(lines, lines[1:]):
            for o in range(min(b1 - a1, b2 - a2)):
                key = a1 + o
                if a2 + o - 1 < len(ids):   # the query that writes offset o of line k
                    q = a2 + o - 1
                    writes.add([w[:, q, key] for w in tr["decoder"]], 1.0 / (q + 1))
                if a2 + o < len(ids):       # the query at offset o of line k
                    q = a2 + o
                    same.add([w[:, q, key] for w in tr["decoder"]], 1.0 / (q + 1))
    where = " (heldout.json texts from position 0; lines end with \\n)"
    return {"previousLine": writes.result("weight of the query that writes offset o of line k >= 1 on offset o of "
                                          "line k - 1" + where),
            "sameOffset": same.result("weight of the query at offset o of line k >= 1 on offset o of line k - 1"
                                      + where)}


MEASURES = {"english": english_like, "english-rope": english_rope, "reverse": reverse, "dates": dates,
            "chinese-poems": chinese, "translate-en-zh": translate}
ATTENTION = {"dates": "cross", "translate-en-zh": "cross"}
LABELLED = {"copyArgmax", "digitArgmax"}  # reported, not a label of its own


def labels(name, scores):
    out = []
    for key, s in scores.items():
        u = s["uniform"]
        for layer, row in enumerate(s["perHead"] if key not in LABELLED else []):
            for head, v in enumerate(row):
                if v >= LABEL_RATIO * u and (v - u) / (1 - u) >= MIN_EXCESS:
                    out.append({"layer": layer, "head": head, "attention": ATTENTION.get(name, "self"),
                                "label": LABELS[key], "measure": key, "score": v, "uniform": u})
    return sorted(out, key=lambda h: (h["layer"], h["head"], -h["score"]))


def main():
    names = sys.argv[1:] or [n for n in MEASURES if os.path.isdir(os.path.join(X.MODELS, n))]
    for name in names:
        d, cfg, held, W, enc = load(name)
        scores = MEASURES[name](cfg, W, held, enc)
        cfg["headScores"] = scores
        cfg["heads"] = labels(name, scores)
        for key, s in scores.items():
            print("%s %s (uniform %.4f, %d pairs)" % (name, key, s["uniform"], s["pairs"]))
            for layer, row in enumerate(s["perHead"]):
                print("  layer %d: %s" % (layer, " ".join("%.4f" % v for v in row)))
        for h in cfg["heads"]:
            print("  L%d H%d %s %.4f (uniform %.4f)" % (h["layer"], h["head"], h["label"], h["score"], h["uniform"]))
        with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
            json.dump(cfg, f, ensure_ascii=False, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
