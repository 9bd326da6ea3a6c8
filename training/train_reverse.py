#!/usr/bin/python3
"""Train and export models/reverse: a decoder-only transformer (pre-norm, final norm) that reverses a digit
sequence.

    /usr/bin/python3 training/train_reverse.py [--steps N]

Sequence: the prompt "3 9 1 4 7>" (1-12 digits separated by single spaces, then '>') followed by the reversed
digits without spaces, "74193", then </s>. No <s>: as attnscope's decoder-only generation, the model reads the
prompt's characters and continues. The loss covers the continuation only (the prompt's digits are random).
Held out: digit strings with crc32(digits) % 10 == 0 are never trained on.
Metrics: greedy exact match on held-out prompts; per layer and head, for every output digit's query (the
position that predicts it) the weight on the source digit it must copy, and how often that is the row maximum.
"""
import random
import zlib

import torch
import torch.nn.functional as F

import common as C

SEED = 1234
MAX_DIGITS = 12
DESCRIPTION = (
    "Reverses a sequence of digits: the prompt '3 9 1 4 7>' continues with '74193'. Look at the last layer's "
    "attention: while writing the k-th output digit the model looks straight at the k-th digit from the end of "
    "the prompt, an anti-diagonal line through the prompt. Earlier layers locate the '>' separator, which tells "
    "each position how long the sequence is.")


def is_heldout(digits):
    return zlib.crc32(digits.encode()) % 10 == 0


def prompt_of(digits):
    return " ".join(digits) + ">"


def sample_digits(rng, heldout=False):
    while True:
        n = rng.randint(1, MAX_DIGITS)
        digits = "".join(rng.choice("0123456789") for _ in range(n))
        if is_heldout(digits) == heldout:
            return digits


def build(vocab_size):
    return C.Transformer(vocab_size, "decoder", d_model=64, num_heads=4, num_layers=3, d_ff=128, norm_first=True,
                         activation="relu", positional="sinusoidal", max_positions=40, embedding_scale=8.0,
                         final_norm=True, tied_head=False, dropout=0.0)


def batch(rng, tok, size):
    seqs, starts = [], []
    for _ in range(size):
        digits = sample_digits(rng)
        p = tok.encode(prompt_of(digits))
        seqs.append(p + tok.encode(digits[::-1]) + [C.EOS])
        starts.append(len(p))
    x = C.pad_batch(seqs)
    y = torch.full_like(x, -100)  # targets: next token, only for the continuation (positions >= start - 1)
    for i, (s, st) in enumerate(zip(seqs, starts)):
        y[i, st - 1:len(s) - 1] = torch.tensor(s[st:])
    return x, y


@torch.no_grad()
def generate_many(model, tok, digit_strings):
    """Greedy continuation of each prompt (batched by prompt length; equal lengths need no padding)."""
    model.eval()
    out = {}
    by_len = {}
    for d in digit_strings:
        by_len.setdefault(len(d), []).append(d)
    for n, group in by_len.items():
        seq = torch.tensor([tok.encode(prompt_of(d)) for d in group])
        for _ in range(n + 2):
            nxt = model.decode(seq)[:, -1].argmax(-1)
            seq = torch.cat([seq, nxt[:, None]], 1)
        for d, row in zip(group, seq[:, 2 * n:].tolist()):
            out[d] = tok.decode(row[:row.index(C.EOS)] if C.EOS in row else row)
    return [out[d] for d in digit_strings]


def crispness(model, tok, digit_strings):
    """Per layer and head: mean weight on the source digit to copy, and the share of queries whose maximum
    weight falls on it, over every output digit of the given held-out strings (teacher-forced)."""
    L, H = len(model.decoder), model.h
    weight, hit, count = torch.zeros(L, H), torch.zeros(L, H), 0
    for d in digit_strings:
        n = len(d)
        ids = tok.encode(prompt_of(d)) + tok.encode(d[::-1])
        _, tr = C.traced(model, ids)
        for j in range(n):  # output digit j = d[n-1-j], at source position 2(n-1-j); predicted at 2n-1+j
            q, src = 2 * n - 1 + j, 2 * (n - 1 - j)
            for layer in range(L):
                w = tr["decoder"][layer][:, q]
                weight[layer] += w[:, src]
                hit[layer] += (w.argmax(-1) == src).float()
            count += 1
    return weight / count, hit / count


def main():
    steps = C.steps_arg(2000)
    C.setup(SEED)
    rng = random.Random(SEED)
    tok = C.CharTokenizer(" 0123456789>")
    model = build(len(tok.vocab))

    def loss_fn(_):
        x, y = batch(rng, tok, 128)
        logits = model.decode(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)

    timing = C.train(model, steps, 1e-3, 200, loss_fn)

    erng = random.Random(SEED + 1)
    eval_set = sorted({sample_digits(erng, heldout=True) for _ in range(3000)})
    outs = generate_many(model, tok, eval_set)
    exact = sum(o == d[::-1] for d, o in zip(eval_set, outs)) / len(eval_set)
    by_len = {}
    for d, o in zip(eval_set, outs):
        r = by_len.setdefault(len(d), [0, 0])
        r[0] += o == d[::-1]
        r[1] += 1
    print("held-out exact %.4f over %d" % (exact, len(eval_set)), {n: round(a / b, 4) for n, (a, b) in sorted(by_len.items())})
    wmean, hits = crispness(model, tok, eval_set[::10])
    heads = [{"layer": l, "head": h, "meanWeightOnSource": round(float(wmean[l, h]), 4),
              "argmaxOnSource": round(float(hits[l, h]), 4)} for l in range(wmean.shape[0]) for h in range(wmean.shape[1])]
    for e in heads:
        print(e)

    out = C.model_dir("reverse")
    C.write_safetensors(out + "/model.safetensors", model.tensors(), metadata={"format": "attnscope-model/1"})
    hrng = random.Random(SEED + 2)
    shipped = [sample_digits(hrng, heldout=True) for _ in range(300)]
    C.write_json(out + "/heldout.json", {
        "metric": "exact", "rule": "crc32(digits) % 10 == 0 (never used in training)",
        "items": [{"input": prompt_of(d), "target": d[::-1]} for d in shipped]})
    shipped_outs = generate_many(model, tok, shipped)
    shipped_exact = sum(o == d[::-1] for d, o in zip(shipped, shipped_outs)) / len(shipped)
    write_reference(model, tok, out)
    C.write_json(out + "/config.json", {
        "format": "attnscope-model/1", "name": "reverse", "task": "reverse a digit sequence",
        "architecture": "decoder", "description": DESCRIPTION, "tokenizer": tok.config(), **model.config(),
        "prompt": "the prompt's characters without <s>; the model continues with the reversed digits then </s>",
        "training": {
            "source": "synthetic: random digit strings of length 1-%d; held out: crc32(digits) %% 10 == 0" % MAX_DIGITS,
            "licence": "generated data, no licence restrictions (same licence as attnscope)",
            "steps": steps, "batchSize": 128, **timing, "params": model.num_params(),
            "metrics": {"heldoutExact": round(exact, 4), "heldoutItems": len(eval_set),
                        "heldoutExactByLength": {str(n): round(a / b, 4) for n, (a, b) in sorted(by_len.items())},
                        "shippedHeldoutExact": round(shipped_exact, 4),
                        "heads": heads,
                        "headsNote": "per output digit's query: weight on the source digit it copies (mean), and "
                                     "share of queries whose row maximum is that digit; %d held-out strings"
                                     % len(eval_set[::10])}}}, indent=1)
    print("params", model.num_params(), timing)


def write_reference(model, tok, out):
    cases = []
    for k, digits in enumerate(["39147", "820315", "504917362841"]):
        prompt = tok.encode(prompt_of(digits))
        ids = C.greedy(model, prompt_ids=prompt, max_new=16)
        case = {"input": prompt_of(digits), "inputIds": prompt, "output": tok.decode(ids), "outputIds": ids,
                "maxNewTokens": 16}
        if k == 0:
            full = prompt + ids
            logits, tr = C.traced(model, full)
            case["teacherForced"] = {"text": prompt_of(digits) + tok.decode(ids), "ids": full,
                                     "selfAttention": [C.flat(w) for w in tr["decoder"]],
                                     "lastLogits": C.flat(logits[-1])}
        cases.append(case)
    C.write_json(out + "/reference.json", {
        "model": "reverse", "torch": torch.__version__,
        "note": "greedy: the prompt's characters (no <s>), argmax (ties to the smaller id) until </s>; attention "
                "weights flat per layer [H, n, n], n = len(ids) (prompt + output)",
        "cases": cases})


if __name__ == "__main__":
    main()
