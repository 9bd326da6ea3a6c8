"""Character-level GPT-like language models (train_english_lm.py, train_chinese_poems.py): a decoder-only
attnscope Transformer (pre-norm, gelu, learned positions, final norm, tied head) trained on random windows of
a corpus, plus the measurements both scripts use.

Sequence convention (as attnscope's decoder-only generation): the prompt's characters, no <s>; the model
continues them. Held-out loss = mean cross-entropy in nats per character of predicting each character of a
held-out text from the ones before it (the first character is not predicted).
"""
import random

import torch
import torch.nn.functional as F

import common as C


def build(vocab_size, d_model, num_heads, num_layers, context, dropout=0.0):
    return C.Transformer(vocab_size, "decoder", d_model=d_model, num_heads=num_heads, num_layers=num_layers,
                         d_ff=4 * d_model, norm_first=True, activation="gelu", positional="learned",
                         max_positions=context, embedding_scale=1.0, final_norm=True, tied_head=True,
                         dropout=dropout)


def train(model, ids, context, batch_size, steps, peak_lr, seed, transform=None, ignore_index=-100):
    """ids: LongTensor of the whole training corpus; random windows of context + 1 characters, passed through
    transform(windows [B, context + 1], random.Random) -> windows when given; targets equal to ignore_index (e.g.
    <unk>) are not learned, so greedy decoding never prefers them. Returns C.train's timing."""
    rng = torch.Generator().manual_seed(seed)
    pyrng = random.Random(seed)

    def loss_fn(_):
        starts = torch.randint(0, len(ids) - context - 1, (batch_size,), generator=rng)
        win = torch.stack([ids[s:s + context + 1] for s in starts.tolist()])
        if transform is not None:
            win = transform(win, pyrng)
        logits = model.decode(win[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), win[:, 1:].reshape(-1),
                               ignore_index=ignore_index)

    return C.train(model, steps, peak_lr, 100, loss_fn, betas=(0.9, 0.95), log_every=100)


@torch.no_grad()
def text_loss(model, tok, texts):
    """Mean nats per predicted character over the texts (each run alone, truncated to maxPositions)."""
    model.eval()
    total, count = 0.0, 0
    for t in texts:
        ids = tok.encode(t)[:model.max_positions]
        if len(ids) < 2:
            continue
        logits = model.decode(torch.tensor([ids]))[0]
        total += float(F.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="sum"))
        count += len(ids) - 1
    return total / count


def traced_decoder(model, ids):
    """(logits [n, V], [w [H, n, n] per layer]) of one teacher-forced run (common.traced's decoder side)."""
    logits, tr = C.traced(model, ids)
    return logits, tr["decoder"]


@torch.no_grad()
def head_scores(model, tok, texts, score, trace=traced_decoder):
    """score(text, ids, weights [H, n, n]) -> [H] tensor; averaged over texts per layer -> [L][H] floats.
    trace(model, ids) -> (logits, per-layer weights), for models other than common.Transformer."""
    L, H = len(model.decoder), model.h
    acc = torch.zeros(L, H)
    for t in texts:
        ids = tok.encode(t)[:model.max_positions]
        _, ws = trace(model, ids)
        for layer in range(L):
            acc[layer] += score(t, ids, ws[layer])
    return (acc / len(texts)).tolist()


def previous_token(_text, ids, w):
    """Mean weight each query i >= 1 puts on key i - 1."""
    n = len(ids)
    return torch.stack([w[:, i, i - 1] for i in range(1, n)], 1).mean(1)


def repeat_spans(letter_ids, repeat_text=0.25, repeat_random=0.25, min_len=8, max_len=40):
    """A transform for train(): in a fraction repeat_text of the windows a random span of the window is copied
    later into the same window (span then copy, both inside it); in a fraction repeat_random a random string of
    letter_ids (min_len..max_len of them) is written twice in a row at a random place. Text that repeats within
    the context is what makes induction heads worth learning."""
    def transform(win, rng):
        win = win.clone()
        n = win.shape[1]
        for row in range(win.shape[0]):
            u = rng.random()
            length = rng.randint(min_len, max_len)
            if u < repeat_text:
                a = rng.randint(0, n - 2 * length)
                b = rng.randint(a + length, n - length)
                win[row, b:b + length] = win[row, a:a + length].clone()
            elif u < repeat_text + repeat_random:
                r = torch.tensor([rng.choice(letter_ids) for _ in range(length)])
                a = rng.randint(0, n - 2 * length)
                win[row, a:a + length] = r
                win[row, a + length:a + 2 * length] = r
        return win
    return transform


def focus(chars):
    """A score: mean over queries i >= 1 of the total weight on keys j <= i whose character is in chars."""
    def score(text, ids, w):
        n = len(ids)
        on = torch.tensor([c in chars for c in text[:n]], dtype=w.dtype)
        return torch.stack([(w[:, i, :i + 1] * on[:i + 1]).sum(1) for i in range(1, n)], 1).mean(1)
    return score


def focus_baseline(texts, chars, n_max):
    """The same score for uniform causal attention (what focus() gives a head that does not prefer chars)."""
    vals = []
    for t in texts:
        t = t[:n_max]
        vals += [sum(c in chars for c in t[:i + 1]) / (i + 1) for i in range(1, len(t))]
    return sum(vals) / len(vals)


def induction_sequences(alphabet, count, length, seed):
    """Random strings r of `length` characters repeated twice (r + r)."""
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(length)) * 2 for _ in range(count)]


def induction(text, ids, w):
    """On r + r: mean weight from each second-copy position i (token r[k], k = i - len(r)) to position k + 1,
    the token after the earlier occurrence of the current token."""
    half = len(ids) // 2
    return torch.stack([w[:, i, i - half + 1] for i in range(half, len(ids) - 1)], 1).mean(1)


def write_reference(model, tok, out, name, prompts, max_new=40, trace=traced_decoder):
    cases = []
    for k, prompt in enumerate(prompts):
        ids = tok.encode(prompt)
        new = C.greedy(model, prompt_ids=ids, max_new=max_new)
        case = {"input": prompt, "inputIds": ids, "output": tok.decode(new), "outputIds": new,
                "maxNewTokens": max_new}
        if k == 0:
            logits, ws = trace(model, ids)
            case["teacherForced"] = {"ids": ids, "selfAttention": [C.flat(w) for w in ws],
                                     "lastLogits": C.flat(logits[-1])}
        cases.append(case)
    C.write_json(out + "/reference.json", {
        "model": name, "torch": torch.__version__,
        "note": "greedy: the prompt's characters (no <s>), argmax (ties to the smaller id), maxNewTokens new "
                "tokens or </s>; weights computed with the F16-rounded weights as shipped; attention flat per "
                "layer [H, n, n] over the prompt, lastLogits = logits of the prompt's last position",
        "cases": cases})


def per_head(scores, key):
    return [{"layer": l, "head": h, key: round(v, 4)} for l, row in enumerate(scores) for h, v in enumerate(row)]
