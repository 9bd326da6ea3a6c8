#!/usr/bin/python3
"""Train and export models/chinese-poems: a character-level GPT-like language model on the regulated Tang poems
of the npm package chinese-poetry (全唐诗, MIT licence; the poems themselves are Tang dynasty texts in the public
domain), converted to simplified characters with Debian's opencc.

    /usr/bin/python3 training/train_chinese_poems.py [--steps N] [--layers L] [--heads H] [--d-model D] [--out NAME]

Needs: npm (the corpus is fetched once with `npm pack chinese-poetry@2.0.1` into training/.cache/, 85 MB, checked
against its sha256) and Debian's `opencc` (`apt-get install opencc`) for the traditional -> simplified conversion.

Corpus: every poem of dist/quantangshi/poet.tang.*.json whose paragraphs are all regular couplets of one metre
("five characters，five characters。" or the same with seven), at least two of them, converted with
`opencc -c t2s.json`, duplicates dropped. A poem is written one verse per line, as poems are printed:
"床前明月光，\n疑是地上霜。\n举头望明月，\n低头思故乡。\n". Split by crc32(poem) % 100: 0 = test (the
first TEST_SHIPPED without <unk> written to heldout.json), 1 = validation (checkpoint choice), else training. A
training sequence is a random poem from position 0 followed by more random poems, each poem ended by </s>, cut to
WINDOW + 1 ids.
Characters seen fewer than MIN_COUNT times in training map to <unk>, which is never a training target; losses
skip <unk> targets (the unigram baseline too).

Metrics (F16-rounded weights, test poems from position 0): loss vs the unigram (add-one smoothed training
frequencies over the same targets) and uniform baselines; per head the previous-line score: for the query that
writes the character at offset o of line k >= 1 (the position before it), the weight on offset o of line k - 1,
next to what a uniform causal row gives (1 / (i + 1)); greedy format: from the first verse and its comma (e.g.
床前明月光，), a newline and FORMAT_LINES more verses, the share of generated characters in the right class
(hanzi / ，/ 。/ newline) and the share of prompts whose whole continuation has the right format.
"""
import collections
import copy
import glob
import hashlib
import json
import math
import os
import random
import re
import subprocess
import tarfile
import zlib

import torch
import torch.nn.functional as F

import charlm
import common as C

SEED = 1234
CONTEXT, D_MODEL, HEADS, LAYERS = 128, 96, 4, 4   # dFF = 4 * dModel
BATCH, WINDOW, LR, DROPOUT, WEIGHT_DECAY, EVAL_EVERY = 16, 120, 2e-3, 0.0, 0.1, 500
MIN_COUNT = 20
FORMAT_LINES = 3
FORMAT_VALID = 24     # validation poems whose greedy format is measured at each evaluation
VALID_USED = 150      # validation poems whose loss and head scores are measured at each evaluation
TEST_SHIPPED = 120    # test poems written to heldout.json (the page and the tests run them)
SELECT_MARGIN = 0.3   # nats/char below the validation unigram loss a shipped checkpoint must be
PACKAGE = "chinese-poetry@2.0.1"
PACKAGE_SHA256 = "25b549e46919c3a0569db6b68ddc96956b04a484ea4518ad2bbd4f137e307e86"
HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")
LICENCE = ("MIT (npm package chinese-poetry 2.0.1, github.com/chinese-poetry/chinese-poetry, (c) 2016 JackeyGao); "
           "the poems themselves are Tang dynasty texts in the public domain")
DESCRIPTION = (
    "A small character-level language model trained on 43,000 regulated Tang poems (全唐诗, in simplified "
    "characters), one verse per line: five or seven characters and a comma or a full stop. Give it a first verse "
    "such as 床前明月光， and it continues in that metre, one verse per line, until the poem ends. Look at layer 3, "
    "head 4 (L3 H4): while it writes a character it looks at the character in the same place one line up (about "
    "0.29 of its weight; attention spread evenly would give 0.04). The two lines of a couplet are parallel (对仗), "
    "word against word, so that character tells the model what kind of character comes next.")
DESCRIPTION_ZH = (
    "中文字符级语言模型。一个小型的字符级语言模型，在约 43,000 首格律唐诗（全唐诗，简体）上训练，一句一行：五个或七个字，"
    "加逗号或句号。给它一句开头，比如“床前明月光，”，它会按同样的字数一句一行地续写，直到整首诗结束。请看第 3 层第 4 个头"
    "（L3 H4）：它写一个字时，会看上一行同一位置的那个字（约占它注意力权重的 0.29；平均分配只有 0.04）。律诗一联的上下两句"
    "对仗，词对词，所以上一行同一位置的字告诉模型下一个字该是什么样的字。")
EXAMPLES = ["床前明月光，\n疑是地上霜。\n举头望明月，\n低头思故乡。\n", "白日依山尽，", "春眠不觉晓，"]  # the page's buttons
COUPLET = re.compile("^([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})，([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})。$")


def couplet(line):
    """The metre (5 or 7) of a regular couplet with equal halves, else 0."""
    m = COUPLET.match(line)
    return len(m.group(1)) if m and len(m.group(1)) == len(m.group(2)) else 0


def one_metre(lines):
    """Two or more regular couplets, all of one metre."""
    return len(lines) >= 2 and all(couplet(l) for l in lines) and len({couplet(l) for l in lines}) == 1


def package_dir():
    """training/.cache/chinese-poetry-2.0.1/package, fetched with npm pack and checked on first use."""
    root = os.path.join(CACHE, "chinese-poetry-2.0.1")
    if not os.path.isdir(os.path.join(root, "package", "dist", "quantangshi")):
        os.makedirs(root, exist_ok=True)
        tgz = os.path.join(root, "chinese-poetry-2.0.1.tgz")
        if not os.path.exists(tgz):
            subprocess.run(["npm", "pack", PACKAGE, "--pack-destination", root], check=True,
                           stdout=subprocess.DEVNULL)
        digest = hashlib.sha256(open(tgz, "rb").read()).hexdigest()
        if digest != PACKAGE_SHA256:
            raise SystemExit("train_chinese_poems: %s has sha256 %s, expected %s" % (tgz, digest, PACKAGE_SHA256))
        with tarfile.open(tgz) as t:
            t.extractall(root, [m for m in t.getmembers() if m.name.startswith("package/dist/quantangshi/poet.tang")
                                or m.name in ("package/LICENSE", "package/package.json")])
    return os.path.join(root, "package")


def poems():
    """The regulated poems, simplified, one verse per line (each line ended by "\n"), unique, in file order."""
    cached = os.path.join(CACHE, "tang-simplified.txt")
    if not os.path.exists(cached):
        bodies = []
        for path in sorted(glob.glob(os.path.join(package_dir(), "dist", "quantangshi", "poet.tang.*.json")),
                           key=lambda p: int(p.split(".")[-2])):
            for p in json.load(open(path, encoding="utf-8")):
                ps = p["paragraphs"]
                if one_metre(ps):
                    bodies.append("".join(ps))
        out = subprocess.run(["opencc", "-c", "t2s.json"], input="\n".join(bodies) + "\n", capture_output=True,
                             text=True, check=True).stdout
        with open(cached, "w", encoding="utf-8") as f:
            f.write(out)
    seen, out = set(), []
    for body in open(cached, encoding="utf-8").read().split("\n"):
        ls = re.findall("[^。]*。", body)
        if "".join(ls) != body or not one_metre(ls):   # the conversion kept every couplet regular
            continue
        text = "".join(v + "\n" for l in ls for v in re.findall("[^，。]*[，。]", l))
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


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
    """[(query, key)]: the query that writes (predicts) offset o of line k >= 1, i.e. the position before it, and
    offset o of line k - 1 (punctuation and newline included), both < n: label_heads.py's previousLine."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines = [(a, text.find("\n", a) + 1 or len(text)) for a in starts if a < len(text)]
    return [(a2 + o - 1, a1 + o) for (a1, b1), (a2, b2) in zip(lines, lines[1:])
            for o in range(min(b1 - a1, b2 - a2)) if a2 + o - 1 < n]


def previous_line(text, ids, w):
    pairs = line_pairs(text, len(ids))
    return torch.stack([w[:, q, k] for q, k in pairs], 1).mean(1)


def previous_line_uniform(texts):
    vals = [1.0 / (q + 1) for t in texts for q, _ in line_pairs(t, CONTEXT)]
    return sum(vals) / len(vals)


def format_of(metre, new_lines):
    """The classes a continuation of "<first verse>，" must have: a newline, then new_lines verses (hanzi and ，
    or 。 alternately, the first one ending with 。), each ended by a newline."""
    return "\n" + "".join("h" * metre + "。，"[k % 2] + "\n" for k in range(new_lines))


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
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--out", default="chinese-poems", help="folder under models/ (another name for experiments)")
    ap.add_argument("--layers", type=int, default=LAYERS)
    ap.add_argument("--heads", type=int, default=HEADS)
    ap.add_argument("--d-model", type=int, default=D_MODEL)
    return ap.parse_args()


def batch(train, rng, tok):
    """BATCH sequences of WINDOW + 1 ids: a random training poem from position 0, then more random poems, each
    poem ended by </s>."""
    seqs = []
    for _ in range(BATCH):
        ids = []
        while len(ids) < WINDOW + 1:
            ids += tok.encode(rng.choice(train)) + [C.EOS]
        seqs.append(ids[:WINDOW + 1])
    return torch.tensor(seqs)


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
    split = {p: zlib.crc32(p.encode()) % 100 for p in all_poems}
    test = [p for p in all_poems if split[p] == 0]
    valid = [p for p in all_poems if split[p] == 1][:VALID_USED]
    train = [p for p in all_poems if split[p] > 1]
    train_chars = "".join(train)
    counts = collections.Counter(train_chars)
    tok = C.CharTokenizer(c for c, k in counts.items() if k >= MIN_COUNT)
    target_counts = collections.Counter(i for i in tok.encode(train_chars) if i != C.UNK)
    # the shipped held-out poems have no <unk> character, so attnscope's loss (every target) and this script's
    # (targets that are not <unk>) are the same number
    shipped = [p for p in test if C.UNK not in tok.encode(p)][:TEST_SHIPPED]
    print("poems %d (test %d, %d shipped; valid %d), train poems %d, train chars %d, vocab %d, unk share %.4f" % (
        len(all_poems), len(test), len(shipped), len(valid), len(train), len(train_chars), len(tok.vocab),
        1 - sum(target_counts.values()) / len(train_chars)), flush=True)

    model = C.Transformer(len(tok.vocab), "decoder", d_model=args.d_model, num_heads=args.heads,
                          num_layers=args.layers, d_ff=4 * args.d_model, norm_first=True, activation="gelu",
                          positional="sinusoidal", max_positions=CONTEXT, embedding_scale=math.sqrt(args.d_model),
                          final_norm=True, tied_head=True, dropout=DROPOUT)
    print("params", model.num_params(), flush=True)
    pyrng = random.Random(SEED)
    evals = []
    pl_valid = previous_line_uniform(valid)

    def evaluate(step):
        val, val_unigram = loss_and_unigram(model, tok, valid, target_counts)
        fmt, exact = format_accuracy(model, tok, valid[:FORMAT_VALID])
        pl = max(max(row) for row in charlm.head_scores(model, tok, valid, previous_line))
        evals.append({"step": step, "loss": val, "unigram": val_unigram, "format": fmt,
                      "state": copy.deepcopy(model.state_dict())})
        print("  step %d validation loss %.4f (unigram %.4f) format %.3f exact %.3f best previous-line %.3f (%.1fx)"
              % (step, val, val_unigram, fmt, exact, pl, pl / pl_valid), flush=True)
        model.train()

    def loss_fn(step):
        if step % EVAL_EVERY == 0 and step > 0:
            evaluate(step)
        win = batch(train, pyrng, tok)
        logits = model.decode(win[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), win[:, 1:].reshape(-1), ignore_index=C.UNK)

    timing = C.train(model, steps, LR, 200, loss_fn, betas=(0.9, 0.95), log_every=100, weight_decay=WEIGHT_DECAY)
    evaluate(steps)
    best = choose(evals, SELECT_MARGIN)
    model.load_state_dict(best["state"])
    C.round_to_f16(model)

    loss, unigram = loss_and_unigram(model, tok, shipped, target_counts)
    uniform = math.log(len(tok.vocab) - len(C.SPECIALS))
    pl = charlm.head_scores(model, tok, shipped, previous_line)
    pl_uniform = previous_line_uniform(shipped)
    fmt_chars, fmt_exact = format_accuracy(model, tok, shipped)
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
        "metric": "loss", "rule": "the first %d regulated Tang poems (file order) with crc32(poem) %% 100 == 0 and every "
                                  "character in the vocabulary, never trained on (%% 100 == 1 chose the "
                                  "early-stopping step)" % TEST_SHIPPED,
        "lossDefinition": "mean cross-entropy (nats) of predicting each character from the ones before it, over "
                          "all texts from position 0, targets that are <unk> skipped, first character of each "
                          "text not predicted",
        "skipUnkTargets": True, "pytorchLoss": round(loss, 6), "unigramLoss": round(unigram, 6),
        "unigramDefinition": "training target frequencies + 1 over the known characters, same targets",
        "previousLine": {"definition": "weight of the query that writes offset o of line k >= 1 (the position "
                                       "before it) on offset o of line k - 1 (lines end with \\n, which is "
                                       "included), mean over every such pair of the texts",
                         "uniform": round(pl_uniform, 6)},
        "format": {"definition": "prompt = a text's first verse and its comma; greedy, as many new tokens as a "
                                 "newline and %d more verses need; each new token is in the right class (hanzi or "
                                 "<unk> / ，/ 。/ \\n)" % FORMAT_LINES,
                   "lines": FORMAT_LINES, "charAccuracy": round(fmt_chars, 4), "exact": round(fmt_exact, 4)},
        "texts": shipped})
    charlm.write_reference(model, tok, out, "chinese-poems", ["床前明月光，", "白日依山尽，\n黄河入海流。\n", "春"])
    C.write_json(out + "/config.json", {
        "format": "attnscope-model/1", "name": "chinese-poems", "task": "Chinese character-level language model",
        "architecture": "decoder", "description": DESCRIPTION, "tokenizer": tok.config(), **model.config(),
        "prompt": "the prompt's characters without <s>; the model continues them, a poem ends with </s>",
        "lang": "zh-CN", "examples": EXAMPLES, "descriptions": {"zh-CN": DESCRIPTION_ZH},
        "training": {
            "source": "the regulated poems (every paragraph a couplet of five or seven characters per verse, one "
                      "metre) of dist/quantangshi/poet.tang.*.json in npm %s (sha256 %s), converted to simplified "
                      "characters with opencc t2s.json, one verse per line; test: crc32(poem) %% 100 == 0, "
                      "validation: == 1" % (PACKAGE, PACKAGE_SHA256),
            "licence": LICENCE, "steps": steps, "shippedStep": best["step"],
            "weightDecay": WEIGHT_DECAY, "evaluations": [{k: round(v, 4) if isinstance(v, float) else v
                                                          for k, v in e.items() if k != "state"} for e in evals],
            "batchSize": BATCH, "window": WINDOW, "dropout": DROPOUT, "peakLearningRate": LR,
            "trainPoems": len(train), "trainChars": len(train_chars), "minCount": MIN_COUNT, **timing,
            "params": model.num_params(), "dtype": "F16",
            "metrics": {"heldoutLoss": round(loss, 4), "unigramLoss": round(unigram, 4),
                        "uniformLoss": round(uniform, 4), "heldoutPoems": len(shipped),
                        "formatCharAccuracy": round(fmt_chars, 4), "formatExact": round(fmt_exact, 4),
                        "previousLineUniform": round(pl_uniform, 4), "heads": heads}}}, indent=1)
    for case in C.json.load(open(out + "/reference.json"))["cases"]:
        print(repr(case["input"]), "->", repr(case["output"]))
    print("params", model.num_params(), timing)


if __name__ == "__main__":
    main()
