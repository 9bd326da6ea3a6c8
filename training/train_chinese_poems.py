#!/usr/bin/python3
"""Train and export models/chinese-poems: a character-level GPT-like language model on the regular couplet lines
of Debian's fortunes-zh: the 300 Tang poems (/usr/share/games/fortunes/tang300), the 100 Song poems
(/usr/share/games/fortunes/song100) and the couplet-shaped sayings of /usr/share/games/fortunes/chinese;
GPL-3.0+, /usr/share/doc/fortunes-zh/copyright.

    /usr/bin/python3 training/train_chinese_poems.py [--steps N] [--windows] [--layers L] [--heads H] [--out NAME]

NOT SHIPPED: the third attempt (training/README.md section 6) still has no head on the previous line, so
models/chinese-poems is not in the package; run with --out <other name> to experiment without touching it.

Corpus: a "line" is one regular couplet, "five characters，five characters。" or the same with seven (title and
author lines, which carry ANSI colour codes, and irregular lines are dropped). A poem is every run of two or more
consecutive lines of one metre in tang300/song100, lines ended by "\\n". Split by crc32(poem) % 10: 0 = test
(reported, written to heldout.json), 1 = validation (checkpoint choice), else training. Batches (default): half
training poems, half pseudo-poems (2-8 random lines of one metre drawn from the training poems' lines and the
couplets of `chinese`), each a sequence from position 0. With --windows: the training poems plus as many
pseudo-poems, shuffled and concatenated per "epoch", and random windows of that stream (a window rarely starts
at a line start, so the within-line position must be found by attention). Every EVAL_EVERY steps the validation
loss, format and previous-line scores are printed and the weights kept; the exported checkpoint is the one with
the best validation format among those at least SELECT_MARGIN nats/char below the validation unigram loss.
Characters seen fewer than MIN_COUNT times in training map to <unk>, which is never a training target; losses
skip <unk> targets (the unigram baseline too).

Metrics (F16-rounded weights, test poems from position 0): loss vs the unigram (add-one smoothed training
frequencies over the same targets) and uniform baselines; per head the previous-line score: for every character
at offset o of line k >= 1, the weight on offset o of line k - 1, next to what a uniform causal row gives
(1 / (i + 1)); greedy format: from the first verse and its comma (e.g. 床前明月光，), FORMAT_LINES more lines,
the share of generated characters in the right class (hanzi / ，/ 。/ newline) and the share of prompts whose
whole continuation has the right format.
"""
import collections
import copy
import math
import random
import re
import zlib

import torch
import torch.nn.functional as F

import charlm
import common as C

SEED = 1234
CONTEXT, D_MODEL, HEADS, LAYERS, D_FF = 128, 64, 4, 2, 256
BATCH, WINDOW, LR, DROPOUT, WEIGHT_DECAY, EVAL_EVERY = 16, 96, 2e-3, 0.2, 0.1, 200
MIN_COUNT = 2
FORMAT_LINES = 2
FORMAT_VALID = 24     # validation poems whose greedy format is measured at each evaluation
SELECT_MARGIN = 0.3   # nats/char below the validation unigram loss a shipped checkpoint must be
POEMS = ["/usr/share/games/fortunes/tang300", "/usr/share/games/fortunes/song100"]
SAYINGS = "/usr/share/games/fortunes/chinese"
LICENCE = ("GPL-3.0+ (Debian package fortunes-zh, /usr/share/doc/fortunes-zh/copyright); the poems themselves are "
           "Tang and Song dynasty texts in the public domain")
DESCRIPTION = (
    "A small character-level language model trained on the regular couplets of about 400 Tang and Song poems: "
    "one couplet per line, five or seven characters, a comma, five or seven characters, a full stop. Give it a "
    "first verse such as 床前明月光， and it continues in that metre. Look for heads that attend to the "
    "character at the same position of the previous line.")
COUPLET = re.compile("^([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})，([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})。$")


def couplet(line):
    """The metre (5 or 7) of a regular couplet line with equal halves, else 0."""
    m = COUPLET.match(line)
    return len(m.group(1)) if m and len(m.group(1)) == len(m.group(2)) else 0


def read_entries(path):
    for entry in open(path, encoding="utf-8").read().split("%\n"):
        yield [l.strip() for l in entry.split("\n") if l.strip() and not l.startswith("\x1b")]


def poems():
    """Runs of >= 2 consecutive couplet lines of one metre, each line ended by "\\n"."""
    out = []
    for path in POEMS:
        for lines in read_entries(path):
            run = []
            for l in lines + [""]:
                if run and couplet(l) == couplet(run[0]):
                    run.append(l)
                    continue
                if len(run) >= 2:
                    out.append("".join(x + "\n" for x in run))
                run = [l] if couplet(l) else []
    return out


def sayings():
    return [l for lines in read_entries(SAYINGS) for l in lines if couplet(l)]


def stream(train_poems, pool, rng):
    """One epoch: the training poems and as many pseudo-poems, shuffled, concatenated."""
    pseudo = []
    for _ in train_poems:
        metre = rng.choice([5, 7])
        pseudo.append("".join(rng.choice(pool[metre]) + "\n" for _ in range(rng.randint(2, 8))))
    items = train_poems + pseudo
    rng.shuffle(items)
    return "".join(items)


@torch.no_grad()
def loss_and_unigram(model, tok, texts, counts):
    """(model loss, unigram loss) in nats per character over the texts' non-<unk> targets (first character of
    each text not predicted); counts = training target counts."""
    model.eval()
    known = sum(counts.values()) + (len(tok.vocab) - len(C.SPECIALS))
    total, uni, n = 0.0, 0.0, 0
    for t in texts:
        ids = tok.encode(t)[:CONTEXT]
        logits = model.decode(torch.tensor([ids]))[0, :-1]
        targets = torch.tensor(ids[1:])
        keep = targets != C.UNK
        total += float(F.cross_entropy(logits[keep], targets[keep], reduction="sum"))
        uni -= sum(math.log((counts[i] + 1) / known) for i in targets[keep].tolist())
        n += int(keep.sum())
    return total / n, uni / n


def line_pairs(text, n):
    """[(query, key)]: offset o of line k >= 1 and offset o of line k - 1, both < n (punctuation included)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines = [(a, text.find("\n", a) + 1 or len(text)) for a in starts if a < len(text)]
    return [(a2 + o, a1 + o) for (a1, b1), (a2, b2) in zip(lines, lines[1:]) for o in range(min(b1 - a1, b2 - a2))
            if a2 + o < n]


def previous_line(text, ids, w):
    pairs = line_pairs(text, len(ids))
    return torch.stack([w[:, q, k] for q, k in pairs], 1).mean(1)


def previous_line_uniform(texts):
    vals = [1.0 / (q + 1) for t in texts for q, _ in line_pairs(t, CONTEXT)]
    return sum(vals) / len(vals)


def format_of(metre, new_lines):
    """The classes a continuation of "<verse>，" must have: the second verse, 。, newline, then new_lines lines."""
    line = "h" * metre + "，" + "h" * metre + "。\n"
    return ("h" * metre + "。\n" + line * new_lines)


def format_score(tok, poem, new_ids):
    metre = poem.index("，")
    want = format_of(metre, FORMAT_LINES)
    got = ["h" if i == C.UNK or (tok.vocab[i] not in "，。\n" and i >= len(C.SPECIALS)) else
           (tok.vocab[i] if i >= len(C.SPECIALS) else "?") for i in new_ids]
    got += ["?"] * (len(want) - len(got))
    right = sum(a == b for a, b in zip(want, got))
    return right, len(want), right == len(want)


def format_accuracy(model, tok, test):
    right = total = exact = 0
    for p in test:
        prompt = p[:p.index("，") + 1]
        new = C.greedy(model, prompt_ids=tok.encode(prompt), max_new=len(format_of(len(prompt) - 1, FORMAT_LINES)))
        r, t, e = format_score(tok, p, new)
        right, total, exact = right + r, total + t, exact + e
    return right / total, exact / len(test)


def options():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--windows", action="store_true",
                    help="train on random windows of the poem stream instead of whole poems from position 0")
    ap.add_argument("--out", default="chinese-poems", help="folder under models/ (another name for experiments)")
    ap.add_argument("--layers", type=int, default=LAYERS)
    ap.add_argument("--heads", type=int, default=HEADS)
    return ap.parse_args()


def aligned_batch(train, pool, rng, tok):
    """BATCH sequences starting at position 0: half training poems, half pseudo-poems, cut to WINDOW + 1 ids,
    padded with <unk> (not a target)."""
    seqs = []
    for k in range(BATCH):
        if k % 2 == 0:
            text = rng.choice(train)
        else:
            metre = rng.choice([5, 7])
            text = "".join(rng.choice(pool[metre]) + "\n" for _ in range(rng.randint(2, 8)))
        seqs.append(tok.encode(text)[:WINDOW + 1])
    n = max(len(x) for x in seqs)
    return torch.tensor([x + [C.UNK] * (n - len(x)) for x in seqs])


def choose(evals, margin):
    """The checkpoint to ship: among the evaluations whose validation loss is at least `margin` below the
    validation unigram loss, the best validation format accuracy (then the lower loss); else the lowest loss."""
    ok = [e for e in evals if e["loss"] <= e["unigram"] - margin]
    return max(ok, key=lambda e: (e["format"], -e["loss"])) if ok else min(evals, key=lambda e: e["loss"])


def main():
    args = options()
    steps = args.steps
    C.setup(SEED)
    all_poems = poems()
    split = {p: zlib.crc32(p.encode()) % 10 for p in all_poems}
    test = [p for p in all_poems if split[p] == 0]
    valid = [p for p in all_poems if split[p] == 1]
    train = [p for p in all_poems if split[p] > 1]
    unseen = {l for p in test + valid for l in p.split("\n")}
    extra = [l for l in sayings() if l not in unseen]
    pool = {5: [], 7: []}
    for l in [l for p in train for l in p.split("\n") if l] + extra:
        pool[couplet(l)].append(l)
    train_chars = "".join(train) + "".join(l + "\n" for l in extra)
    counts = collections.Counter(train_chars)
    tok = C.CharTokenizer(c for c, k in counts.items() if k >= MIN_COUNT)
    target_counts = collections.Counter(i for i in tok.encode(train_chars) if i != C.UNK)
    print("poems %d (test %d, valid %d), extra lines %d, lines 5/7 %d/%d, train chars %d, vocab %d" % (
        len(all_poems), len(test), len(valid), len(extra), len(pool[5]), len(pool[7]), len(train_chars),
        len(tok.vocab)))

    model = C.Transformer(len(tok.vocab), "decoder", d_model=D_MODEL, num_heads=args.heads, num_layers=args.layers,
                          d_ff=D_FF, norm_first=True, activation="gelu", positional="sinusoidal",
                          max_positions=CONTEXT, embedding_scale=math.sqrt(D_MODEL), final_norm=True,
                          tied_head=True, dropout=DROPOUT)
    rng = torch.Generator().manual_seed(SEED)
    pyrng = random.Random(SEED)
    data = {"ids": torch.tensor(tok.encode(stream(train, pool, pyrng))), "used": 0}
    evals = []

    def evaluate(step):
        val, val_unigram = loss_and_unigram(model, tok, valid, target_counts)
        fmt, exact = format_accuracy(model, tok, valid[:FORMAT_VALID])
        pl = max(max(row) for row in charlm.head_scores(model, tok, valid, previous_line))
        evals.append({"step": step, "loss": val, "unigram": val_unigram, "format": fmt,
                      "state": copy.deepcopy(model.state_dict())})
        print("  step %d validation loss %.4f (unigram %.4f) format %.3f exact %.3f best previous-line %.3f (%.1fx)"
              % (step, val, val_unigram, fmt, exact, pl, pl / pl_valid), flush=True)
        model.train()

    pl_valid = previous_line_uniform(valid)

    def loss_fn(step):
        if step % EVAL_EVERY == 0 and step > 0:
            evaluate(step)
        if not args.windows:
            win = aligned_batch(train, pool, pyrng, tok)
            logits = model.decode(win[:, :-1])
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), win[:, 1:].reshape(-1),
                                   ignore_index=C.UNK)
        ids = data["ids"]
        if data["used"] > len(ids):
            data.update(ids=torch.tensor(tok.encode(stream(train, pool, pyrng))), used=0)
            ids = data["ids"]
        data["used"] += BATCH * WINDOW
        starts = torch.randint(0, len(ids) - WINDOW - 1, (BATCH,), generator=rng)
        win = torch.stack([ids[s:s + WINDOW + 1] for s in starts.tolist()])
        logits = model.decode(win[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), win[:, 1:].reshape(-1), ignore_index=C.UNK)

    timing = C.train(model, steps, LR, 100, loss_fn, betas=(0.9, 0.95), log_every=100, weight_decay=WEIGHT_DECAY)
    evaluate(steps)
    best = choose(evals, SELECT_MARGIN)
    model.load_state_dict(best["state"])
    C.round_to_f16(model)

    loss, unigram = loss_and_unigram(model, tok, test, target_counts)
    uniform = math.log(len(tok.vocab) - len(C.SPECIALS))
    pl = charlm.head_scores(model, tok, test, previous_line)
    pl_uniform = previous_line_uniform(test)
    fmt_chars, fmt_exact = format_accuracy(model, tok, test)
    print("best step %d; test loss %.4f (unigram %.4f, uniform %.4f); format %.4f / exact %.4f" % (
        best["step"], loss, unigram, uniform, fmt_chars, fmt_exact))
    for l, row in enumerate(pl):
        print("layer %d previous line" % l, " ".join("%.3f (%.1fx)" % (v, v / pl_uniform) for v in row))
    heads = [{"layer": l, "head": h, "previousLine": round(v, 4), "ratio": round(v / pl_uniform, 2)}
             for l, row in enumerate(pl) for h, v in enumerate(row)]

    out = C.model_dir(args.out)
    C.write_safetensors(out + "/model.safetensors", model.tensors(), dtype="F16",
                        metadata={"format": "attnscope-model/1"})
    C.write_json(out + "/heldout.json", {
        "metric": "loss", "rule": "poems (runs of >= 2 regular couplet lines of one metre) with crc32(poem) % 10 "
                                  "== 0, never trained on (% 10 == 1 chose the early-stopping step)",
        "lossDefinition": "mean cross-entropy (nats) of predicting each character from the ones before it, over "
                          "all texts from position 0, targets that are <unk> skipped, first character of each "
                          "text not predicted",
        "skipUnkTargets": True, "pytorchLoss": round(loss, 6), "unigramLoss": round(unigram, 6),
        "unigramDefinition": "training target frequencies + 1 over the known characters, same targets",
        "previousLine": {"definition": "weight from offset o of line k >= 1 to offset o of line k - 1 (lines end "
                                       "with \\n, which is included), mean over every such pair of the texts",
                         "uniform": round(pl_uniform, 6)},
        "format": {"definition": "prompt = a text's first verse and its comma; greedy, as many new tokens as the "
                                 "second verse, 。, \\n and %d more lines need; each new token is in the right "
                                 "class (hanzi or <unk> / ，/ 。/ \\n)" % FORMAT_LINES,
                   "lines": FORMAT_LINES, "charAccuracy": round(fmt_chars, 4), "exact": round(fmt_exact, 4)},
        "texts": test})
    charlm.write_reference(model, tok, out, "chinese-poems", ["床前明月光，", "白日依山尽，黄河入海流。\n", "春"])
    C.write_json(out + "/config.json", {
        "format": "attnscope-model/1", "name": "chinese-poems", "task": "Chinese character-level language model",
        "architecture": "decoder", "description": DESCRIPTION, "tokenizer": tok.config(), **model.config(),
        "prompt": "the prompt's characters without <s>; the model continues them",
        "training": {
            "source": "the regular couplet lines of the Tang and Song poems (%s) and the couplet-shaped sayings of %s, "
                      "Debian package fortunes-zh; test: crc32(poem) %% 10 == 0, validation: == 1"
                      % (", ".join(POEMS), SAYINGS),
            "licence": LICENCE, "steps": steps, "shippedStep": best["step"], "windows": args.windows,
            "weightDecay": WEIGHT_DECAY, "evaluations": [{k: round(v, 4) if isinstance(v, float) else v
                                                          for k, v in e.items() if k != "state"} for e in evals], "batchSize": BATCH, "window": WINDOW,
            "dropout": DROPOUT, "peakLearningRate": LR, "trainPoems": len(train), "extraLines": len(extra),
            "trainChars": len(train_chars), **timing, "params": model.num_params(), "dtype": "F16",
            "metrics": {"heldoutLoss": round(loss, 4), "unigramLoss": round(unigram, 4),
                        "uniformLoss": round(uniform, 4), "heldoutPoems": len(test),
                        "formatCharAccuracy": round(fmt_chars, 4), "formatExact": round(fmt_exact, 4),
                        "previousLineUniform": round(pl_uniform, 4), "heads": heads}}}, indent=1)
    for case in C.json.load(open(out + "/reference.json"))["cases"]:
        print(repr(case["input"]), "->", repr(case["output"]))
    print("params", model.num_params(), timing)


if __name__ == "__main__":
    main()
