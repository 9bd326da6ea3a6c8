#!/usr/bin/python3
"""Train and export models/dates: an encoder-decoder transformer (post-norm, sinusoidal positions) that rewrites
a date in any of API.md's eight forms into ISO YYYY-MM-DD.

    /usr/bin/python3 training/train_dates.py [--steps N]

Data: dates_data.py (held-out = crc32("YYYY-MM-DD") % 10 == 0, never trained on). Writes models/dates/
{config.json, model.safetensors, heldout.json, reference.json}. Metrics: greedy exact match per form on
EVAL_PER_FORM held-out dates per form, and the cross-attention alignment: for every target digit (year 0-3,
month 5-6, day 8-9), the share of the cross-attention mass of its query (the decoder position that predicts
it) that falls on the matching source field, per layer and head.
"""
import random

import torch
import torch.nn.functional as F

import common as C
import dates_data as D

SEED = 1234
EVAL_PER_FORM = 500
HELDOUT_PER_FORM = 100
DESCRIPTION = (
    "Rewrites a date written in one of eight forms ('22 Nov 2026', 'November 22, 2026', 'Sunday, 22 November "
    "2026', '22.11.2026', '2026/11/22', '2026年11月22日', ...) into ISO 2026-11-22. Look at the decoder's "
    "cross-attention: while it writes the year digits its queries look at the source year, while it writes the "
    "month it looks at the month name or number wherever that stands, and while it writes the day at the day "
    "digits, so the alignment moves across the source differently for every form. Self-attention in the "
    "encoder groups the characters of each field.")


def build(vocab_size):
    return C.Transformer(vocab_size, "encoder-decoder", d_model=64, num_heads=4, num_layers=2, num_decoder_layers=2,
                         d_ff=128, norm_first=False, activation="relu", positional="sinusoidal", max_positions=32,
                         embedding_scale=8.0, final_norm=False, tied_head=False, dropout=0.0)


def batch(rng, dates, tok, size):
    pairs = [D.sample(rng, dates) for _ in range(size)]
    src = C.pad_batch([tok.encode(s) for s, _ in pairs])
    tgt = torch.tensor([[C.BOS] + tok.encode(t) + [C.EOS] for _, t in pairs])
    return src, tgt


def evaluate(model, tok, items):
    """Greedy exact match per form -> ({form: accuracy}, [wrong (input, output)])."""
    return D.exact_per_form(items, model_outputs(model, tok, [it["input"] for it in items]))


def model_outputs(model, tok, texts):
    outs = []
    for i in range(0, len(texts), 500):
        ids = C.greedy_batch(model, [tok.encode(t) for t in texts[i:i + 500]], max_new=12)
        outs += [tok.decode(r) for r in ids]
    return outs


def alignment(model, tok, items):
    """Cross-attention share on the matching source field, per decoder layer and head, averaged over the
    year/month/day target digits of `items` (teacher-forced)."""
    L, H = len(model.decoder), model.h
    share = torch.zeros(L, H)
    count = 0
    for it in items:
        src = tok.encode(it["input"])
        tgt = [C.BOS] + tok.encode(it["target"])
        _, tr = C.traced(model, tgt, src)
        for t in range(10):  # query t predicts target char t
            field = D.target_field(t)
            if field is None:
                continue
            a, b = it["spans"][field]
            for layer in range(L):
                share[layer] += tr["cross"][layer][:, t, a:b].sum(-1)
            count += 1
    return share / count


def main():
    steps = C.steps_arg(1200)
    C.setup(SEED)
    rng = random.Random(SEED)
    train_dates, _ = D.split()
    tok = C.CharTokenizer(D.alphabet())
    model = build(len(tok.vocab))

    def loss_fn(_):
        src, tgt = batch(rng, train_dates, tok, 128)
        logits = model(src, tgt[:, :-1], src_pad=src == C.PAD)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))

    timing = C.train(model, steps, 2e-3, 200, loss_fn)

    # Held-out evaluation (PyTorch, float32, greedy).
    eval_items = D.heldout_items(EVAL_PER_FORM, SEED + 1)
    acc, wrong = evaluate(model, tok, eval_items)
    print("exact per form:", acc)
    print("wrong (first 20):", wrong[:20])
    align = alignment(model, tok, eval_items[::10])
    per_layer = [{"meanOverHeads": round(float(align[l].mean()), 4), "bestHead": int(align[l].argmax()),
                  "bestHeadShare": round(float(align[l].max()), 4),
                  "perHead": [round(float(v), 4) for v in align[l]]} for l in range(align.shape[0])]
    print("cross-attention share on the matching field:", per_layer)

    out = C.model_dir("dates")
    C.write_safetensors(out + "/model.safetensors", model.tensors(), metadata={"format": "attnscope-model/1"})
    heldout = D.heldout_items(HELDOUT_PER_FORM, SEED + 2)
    C.write_json(out + "/heldout.json", D.heldout_file(heldout))
    acc_shipped, _ = evaluate(model, tok, heldout)
    write_reference(model, tok, out)
    config = {
        "format": "attnscope-model/1", "name": "dates", "task": "date rewriting to ISO YYYY-MM-DD",
        "architecture": "encoder-decoder", "description": DESCRIPTION, "tokenizer": tok.config(),
        **model.config(),
        "training": {
            "source": D.SOURCE, "licence": D.LICENCE, "steps": steps, "batchSize": 128, **timing,
            "params": model.num_params(),
            "metrics": {
                "heldoutExactPerForm": {f: round(v, 4) for f, v in acc.items()},
                "heldoutItemsPerForm": EVAL_PER_FORM,
                "shippedHeldoutExactPerForm": {f: round(v, 4) for f, v in acc_shipped.items()},
                "crossAttentionShareOnMatchingField": per_layer,
                "crossAttentionShareNote": "for each year/month/day target digit, the share of its query's "
                                           "cross-attention mass on the matching source field, averaged over "
                                           "%d held-out items" % len(eval_items[::10]),
            }}}
    C.write_json(out + "/config.json", config, indent=1)
    print("params", model.num_params(), timing)


def write_reference(model, tok, out):
    C.write_encdec_reference(model, tok, out, "dates", ["November 22, 2026", "Sunday, 22 November 2026",
                                                        "2026年11月22日"], 16)


if __name__ == "__main__":
    main()
