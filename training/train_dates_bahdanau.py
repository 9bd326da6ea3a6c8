#!/usr/bin/python3
"""Train and export models/dates-bahdanau: the date task (dates_data.py) with d2l's GRU encoder-decoder and
additive (Bahdanau) attention (Dive into Deep Learning, "The Bahdanau Attention Mechanism").

    /usr/bin/python3 training/train_dates_bahdanau.py [--steps N]

Model (d2l's Seq2SeqEncoder + Seq2SeqAttentionDecoder, no dropout at inference):
  encoder: x = E_enc[src]; GRU(embedSize -> numHiddens, numLayers) -> outputs [m, H], final state [L, H];
  decoder state starts as the encoder's final state; for each step with previous token y (first <s>):
    query = top-layer hidden state before the step; additive attention
    scores_j = w_v . tanh(W_q query + W_k enc_j) (no biases), weights = softmax_j, context = weights . enc;
    GRU input = concat(context, E_dec[y]) (context first); logits = dense(GRU top output).
The source is the date's characters only (no <s>/</s>); the decoder reads <s> + target and predicts
target + </s>. Greedy decoding stops at </s>. GRU gate order r, z, n (PyTorch).
Exported names ([in, out] layout): encoder.embedding.weight [V,E]; encoder.gru.l{k}.w_ih [in,3H], .w_hh [H,3H],
.b_ih, .b_hh [3H]; decoder.embedding.weight [V,E]; decoder.attention.wq [H,A], .wk [H,A], .wv [A];
decoder.gru.l{k}.* (layer-0 input H+E); decoder.dense.weight [H,V], decoder.dense.bias [V].
"""
import random

import torch
import torch.nn.functional as F
from torch import nn

import common as C
import dates_data as D
import train_dates as TD

SEED = 1234
EMBED, HIDDEN, LAYERS = 32, 64, 2
DESCRIPTION = (
    "The date-rewriting task of 'dates' with a GRU encoder-decoder and additive (Bahdanau) attention, as in "
    "d2l. Each decoder step's attention is one row over the source characters: while it writes the year it "
    "looks at the source year, then at the month name or number, then at the day, so the rows trace the "
    "alignment between the two date forms.")


class Seq2SeqBahdanau(nn.Module):
    def __init__(self, vocab_size, embed, hidden, layers, dropout=0.0):
        super().__init__()
        self.enc_embedding = nn.Embedding(vocab_size, embed)
        self.enc_gru = nn.GRU(embed, hidden, layers, dropout=dropout, batch_first=True)
        self.dec_embedding = nn.Embedding(vocab_size, embed)
        self.wq = nn.Linear(hidden, hidden, bias=False)
        self.wk = nn.Linear(hidden, hidden, bias=False)
        self.wv = nn.Linear(hidden, 1, bias=False)
        self.dec_gru = nn.GRU(hidden + embed, hidden, layers, dropout=dropout, batch_first=True)
        self.dense = nn.Linear(hidden, vocab_size)
        self.embed, self.hidden, self.layers = embed, hidden, layers

    def encode(self, src, lengths):
        """src [B, m] -> (outputs [B, m, H], state [L, B, H]); padded positions excluded via packing."""
        x = self.enc_embedding(src)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, state = self.enc_gru(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        return out, state

    def attend(self, query, enc, keys, blocked):
        """query [B, H], enc [B, m, H], keys = W_k enc [B, m, A] -> (context [B, H], weights [B, m])."""
        scores = self.wv(torch.tanh(self.wq(query)[:, None, :] + keys)).squeeze(-1)
        if blocked is not None:
            scores = scores.masked_fill(blocked, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        return torch.bmm(w[:, None, :], enc).squeeze(1), w

    def step(self, y_prev, state, enc, keys, blocked):
        context, w = self.attend(state[-1], enc, keys, blocked)
        x = torch.cat([context, self.dec_embedding(y_prev)], dim=-1)[:, None, :]
        out, state = self.dec_gru(x, state)
        return self.dense(out[:, 0]), state, w

    def forward(self, src, lengths, tgt_in):
        """Teacher forcing: logits [B, n, V] and attention weights [B, n, m]."""
        enc, state = self.encode(src, lengths)
        keys = self.wk(enc)
        blocked = src == C.PAD
        logits, weights = [], []
        for t in range(tgt_in.shape[1]):
            lo, state, w = self.step(tgt_in[:, t], state, enc, keys, blocked)
            logits.append(lo)
            weights.append(w)
        return torch.stack(logits, 1), torch.stack(weights, 1)

    @torch.no_grad()
    def greedy(self, srcs, max_new=12):
        """Batched greedy decoding -> (list of new ids without </s>, weights [B, steps, m])."""
        self.eval()
        src = C.pad_batch(srcs)
        enc, state = self.encode(src, torch.tensor([len(s) for s in srcs]))
        keys = self.wk(enc)
        blocked = src == C.PAD
        y = torch.full((len(srcs),), C.BOS, dtype=torch.long)
        outs, ws = [], []
        for _ in range(max_new):
            lo, state, w = self.step(y, state, enc, keys, blocked)
            y = lo.argmax(-1)
            outs.append(y)
            ws.append(w)
            if (torch.stack(outs, 1) == C.EOS).any(1).all():
                break
        rows = torch.stack(outs, 1).tolist()
        return [r[:r.index(C.EOS)] if C.EOS in r else r for r in rows], torch.stack(ws, 1)

    def tensors(self):
        t = {"encoder.embedding.weight": self.enc_embedding.weight,
             "decoder.embedding.weight": self.dec_embedding.weight,
             "decoder.attention.wq": self.wq.weight.t(), "decoder.attention.wk": self.wk.weight.t(),
             "decoder.attention.wv": self.wv.weight[0],
             "decoder.dense.weight": self.dense.weight.t(), "decoder.dense.bias": self.dense.bias}
        for side, gru in (("encoder", self.enc_gru), ("decoder", self.dec_gru)):
            for k in range(self.layers):
                p = "%s.gru.l%d." % (side, k)
                t[p + "w_ih"] = getattr(gru, "weight_ih_l%d" % k).t()
                t[p + "w_hh"] = getattr(gru, "weight_hh_l%d" % k).t()
                t[p + "b_ih"] = getattr(gru, "bias_ih_l%d" % k)
                t[p + "b_hh"] = getattr(gru, "bias_hh_l%d" % k)
        return {k: v.detach().numpy().astype("float32") for k, v in t.items()}


def evaluate(model, tok, items):
    """Greedy exact match per form -> {form: accuracy}."""
    outs = []
    for i in range(0, len(items), 500):
        outs += [tok.decode(o) for o in model.greedy([tok.encode(it["input"]) for it in items[i:i + 500]])[0]]
    return D.exact_per_form(items, outs)[0]


@torch.no_grad()
def alignment(model, tok, items):
    """Share of attention mass on the matching source field for the year/month/day target digits."""
    model.eval()
    total, count = 0.0, 0
    for it in items:
        src = torch.tensor([tok.encode(it["input"])])
        tgt = torch.tensor([[C.BOS] + tok.encode(it["target"])])
        _, w = model(src, torch.tensor([src.shape[1]]), tgt)
        for t in range(10):
            field = D.target_field(t)
            if field is not None:
                a, b = it["spans"][field]
                total += float(w[0, t, a:b].sum())
                count += 1
    return total / count


def main():
    steps = C.steps_arg(3000)
    C.setup(SEED)
    rng = random.Random(SEED)
    train_dates, _ = D.split()
    tok = C.CharTokenizer(D.alphabet())
    model = Seq2SeqBahdanau(len(tok.vocab), EMBED, HIDDEN, LAYERS)

    def loss_fn(_):
        src, tgt = TD.batch(rng, train_dates, tok, 128)
        logits, _ = model(src, (src != C.PAD).sum(1), tgt[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))

    timing = C.train(model, steps, 3e-3, 100, loss_fn, betas=(0.9, 0.999))

    eval_items = D.heldout_items(TD.EVAL_PER_FORM, TD.SEED + 1)
    acc = evaluate(model, tok, eval_items)
    share = alignment(model, tok, eval_items[::10])
    print("exact per form:", acc, "alignment share %.4f" % share)

    out = C.model_dir("dates-bahdanau")
    C.write_safetensors(out + "/model.safetensors", model.tensors(), metadata={"format": "attnscope-model/1"})
    heldout = D.heldout_items(TD.HELDOUT_PER_FORM, TD.SEED + 2)
    C.write_json(out + "/heldout.json", D.heldout_file(heldout))
    acc_shipped = evaluate(model, tok, heldout)
    write_reference(model, tok, out)
    n_params = sum(p.numel() for p in model.parameters())
    C.write_json(out + "/config.json", {
        "format": "attnscope-model/1", "name": "dates-bahdanau", "task": "date rewriting to ISO YYYY-MM-DD",
        "architecture": "gru-bahdanau", "description": DESCRIPTION, "tokenizer": tok.config(),
        "embedSize": EMBED, "numHiddens": HIDDEN, "numLayers": LAYERS, "attentionHidden": HIDDEN,
        "training": {
            "source": D.SOURCE, "licence": D.LICENCE, "steps": steps, "batchSize": 128, **timing,
            "params": n_params,
            "metrics": {"heldoutExactPerForm": {f: round(v, 4) for f, v in acc.items()},
                        "heldoutItemsPerForm": TD.EVAL_PER_FORM,
                        "shippedHeldoutExactPerForm": {f: round(v, 4) for f, v in acc_shipped.items()},
                        "attentionShareOnMatchingField": round(share, 4),
                        "attentionShareNote": "for each year/month/day target digit, the share of that decoder "
                                              "step's attention on the matching source field, averaged over %d "
                                              "held-out items" % len(eval_items[::10])}}}, indent=1)
    print("params", n_params, timing)


@torch.no_grad()
def write_reference(model, tok, out):
    cases = []
    for k, text in enumerate(["November 22, 2026", "Sunday, 22 November 2026", "2026年11月22日"]):
        src = tok.encode(text)
        ids, _ = model.greedy([src], max_new=16)
        ids = ids[0]
        case = {"input": text, "inputIds": src, "output": tok.decode(ids), "outputIds": ids, "maxNewTokens": 16}
        if k == 0:
            tgt = [C.BOS] + ids
            logits, w = model(torch.tensor([src]), torch.tensor([len(src)]), torch.tensor([tgt]))
            enc, state = model.encode(torch.tensor([src]), torch.tensor([len(src)]))
            case["teacherForced"] = {"targetIds": tgt, "attention": C.flat(w[0]),
                                     "encoderOutputs": C.flat(enc[0]), "encoderState": C.flat(state[:, 0]),
                                     "lastLogits": C.flat(logits[0, -1])}
        cases.append(case)
    C.write_json(out + "/reference.json", {
        "model": "dates-bahdanau", "torch": torch.__version__,
        "note": "greedy: decoder starts from <s> with the encoder's final state, argmax (ties to the smaller id) "
                "until </s>; attention flat [n, m] (decoder step, source char), n = len(targetIds); "
                "encoderOutputs [m, numHiddens] (top layer), encoderState [numLayers, numHiddens]",
        "cases": cases})


if __name__ == "__main__":
    main()
