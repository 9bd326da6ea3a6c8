#!/usr/bin/python3
"""Train and export models/translate-en-zh: an encoder-decoder transformer (post-norm, sinusoidal positions,
characters on both sides) that writes English numbers, dates and quantities in Chinese ('1,205' -> 一千二百零五,
'forty-two' -> 四十二, '3 May 2021' -> 2021年5月3日, '12 books' -> 十二本书).

    /usr/bin/python3 training/train_translate_en_zh.py [--steps N]

Data: translate_en_zh_data.py (synthetic: no public-domain English-Chinese parallel corpus is available from the
registries here; held-out numbers and dates are never trained on). Writes models/translate-en-zh/{config.json,
model.safetensors, heldout.json, reference.json}. Metrics: greedy exact match per form on EVAL_PER_FORM held-out
items per form, and the cross-attention alignment on the digit <-> numeral pairs (translate_en_zh_data.py's
`align`): per decoder layer and head, the mean weight that the query writing a paired target character puts on
its source digit, and the share of those queries whose row maximum is that digit.
"""
import random

import torch
import torch.nn.functional as F

import common as C
import translate_en_zh_data as D

SEED = 2026
BATCH = 128
EVAL_PER_FORM = 300
HELDOUT_PER_FORM = 100
NAME = "translate-en-zh"
TASK = "English numbers, dates and quantities to Chinese"
DESCRIPTION = (
    "A small translator trained on synthetic pairs (no public-domain English-Chinese parallel text could be "
    "installed here): numbers in digits, with thousands separators or in English words, dates and simple "
    "quantities, written in Chinese: '1,205' -> 一千二百零五, 'forty-two' -> 四十二, '3 May 2021' -> "
    "2021年5月3日, '12 books' -> 十二本书. Look at the cross-attention while it writes a number: each numeral "
    "一..九 looks at the source digit it reads, left to right, skipping the units 十百千万 and the zeros it reads "
    "as 零, so the alignment is a staircase through the digits; for a date it jumps to the year first, then "
    "back to the day.")


def build(vocab_size):
    return C.Transformer(vocab_size, "encoder-decoder", d_model=64, num_heads=4, num_layers=2, num_decoder_layers=2,
                         d_ff=192, norm_first=False, activation="relu", positional="sinusoidal", max_positions=64,
                         embedding_scale=8.0, final_norm=False, tied_head=False, dropout=0.0)


def batch(rng, tok, size):
    pairs = [D.sample(rng) for _ in range(size)]
    src = C.pad_batch([tok.encode(s) for s, _ in pairs])
    tgt = C.pad_batch([[C.BOS] + tok.encode(t) + [C.EOS] for _, t in pairs])
    return src, tgt


def model_outputs(model, tok, texts):
    outs = []
    for i in range(0, len(texts), 500):
        ids = C.greedy_batch(model, [tok.encode(t) for t in texts[i:i + 500]], max_new=24)
        outs += [tok.decode(r) for r in ids]
    return outs


def evaluate(model, tok, items):
    return D.exact_per_form(items, model_outputs(model, tok, [it["input"] for it in items]))


def alignment(model, tok, items):
    """(weight on the paired source digit, argmax hit) per decoder layer and head, averaged over the pairs."""
    L, H = len(model.decoder), model.h
    share, hit = torch.zeros(L, H), torch.zeros(L, H)
    count = 0
    for it in items:
        if not it["align"]:
            continue
        _, tr = C.traced(model, [C.BOS] + tok.encode(it["target"]), tok.encode(it["input"]))
        for t, s in it["align"]:
            for layer in range(L):
                row = tr["cross"][layer][:, t, :]
                share[layer] += row[:, s]
                hit[layer] += (row.argmax(-1) == s).float()
            count += 1
    return share / count, hit / count, count


def per_layer(m):
    return [[round(float(v), 4) for v in m[l]] for l in range(m.shape[0])]


def main():
    steps = C.steps_arg(1600)
    C.setup(SEED)
    rng = random.Random(SEED)
    tok = C.CharTokenizer(D.alphabet())
    model = build(len(tok.vocab))

    def loss_fn(_):
        src, tgt = batch(rng, tok, BATCH)
        logits = model(src, tgt[:, :-1], src_pad=src == C.PAD, tgt_pad=tgt[:, :-1] == C.PAD)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1), ignore_index=C.PAD)

    timing = C.train(model, steps, 2e-3, 200, loss_fn)

    eval_items = D.heldout_items(EVAL_PER_FORM, SEED + 1)
    acc, wrong = evaluate(model, tok, eval_items)
    print("exact per form:", acc)
    print("wrong (first 30):", wrong[:30])
    share, hit, pairs = alignment(model, tok, eval_items[::3])
    print("share on the paired digit:", per_layer(share), "argmax hit:", per_layer(hit), pairs)

    out = C.model_dir(NAME)
    C.write_safetensors(out + "/model.safetensors", model.tensors(), metadata={"format": "attnscope-model/1"})
    heldout = D.heldout_items(HELDOUT_PER_FORM, SEED + 2)
    C.write_json(out + "/heldout.json", D.heldout_file(heldout))
    acc_shipped, _ = evaluate(model, tok, heldout)
    C.write_encdec_reference(model, tok, out, NAME, ["1,205", "3 May 2021", "forty-two"], 24)
    config = {
        "format": "attnscope-model/1", "name": NAME, "task": TASK, "architecture": "encoder-decoder",
        "description": DESCRIPTION, "tokenizer": tok.config(), **model.config(),
        "training": {
            "source": D.SOURCE, "licence": D.LICENCE, "steps": steps, "batchSize": BATCH, **timing,
            "params": model.num_params(),
            "metrics": {
                "heldoutExactPerForm": {f: round(v, 4) for f, v in acc.items()},
                "heldoutItemsPerForm": EVAL_PER_FORM,
                "shippedHeldoutExactPerForm": {f: round(v, 4) for f, v in acc_shipped.items()},
                "crossAttentionOnPairedDigit": per_layer(share),
                "crossAttentionArgmaxOnPairedDigit": per_layer(hit),
                "crossAttentionNote": "for every (target character, source digit) pair of translate_en_zh_data.py's "
                                      "alignment (%d pairs of %d held-out items), the weight of the query writing "
                                      "the character on that digit, and the share of those rows whose maximum is "
                                      "the digit; [layer][head]" % (pairs, len(eval_items[::3])),
            }}}
    C.write_json(out + "/config.json", config, indent=1)
    print("params", model.num_params(), timing)


if __name__ == "__main__":
    main()
