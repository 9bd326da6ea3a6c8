#!/usr/bin/python3
"""Check exported models against their reference.json with an independent float64 NumPy implementation of
attnscope's semantics, reading only config.json + model.safetensors (no torch, no training code):

    /usr/bin/python3 training/check_export.py [model name ...]     (default: every models/* folder;
                                                                   a folder path also works)

Transformers ('encoder-decoder', 'decoder'): char tokenizer, x = E[ids] * embeddingScale + positions
(interleaved sinusoidal or the learned table), post-/pre-norm layers as torch.nn.Transformer*Layer with W in
[in, out] layout, causal self-attention on the decoder side, optional final norms, lm_head or tied head; or
(norm 'rms') Llama-style decoder blocks: RMSNorm, RoPE, grouped K/V heads, SwiGLU (llama_decoder).
'gru-bahdanau': d2l's GRU encoder-decoder with additive attention (gate order r, z, n).
For each reference case: greedy output ids must match exactly; for the teacher-forced case every attention
weight within 2e-5 and the last logits within 1e-4 abs + 1e-4 rel. Also checks that heldout.json exists and
its items are not empty, and prints the sizes (gzip -9) of the shipped files. Exit status 1 on any failure.
"""
import gzip
import json
import math
import os
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models")


def load_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    assert n % 8 == 0, "%s: header length %d is not a multiple of 8" % (path, n)
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    out, end = {}, 0
    for name, e in header.items():
        a, b = e["data_offsets"]
        dt = {"F32": "<f4", "F16": "<f2"}[e["dtype"]]
        arr = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dt).astype(np.float64).reshape(e["shape"])
        assert np.all(np.isfinite(arr)), "%s: %s has a non-finite value" % (path, name)
        out[name] = arr
        end = max(end, b)
    assert 8 + n + end == len(raw), "%s: data does not end at the last tensor" % path
    return out


def layer_norm(x, W, p, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * W[p + ".weight"] + W[p + ".bias"]


def softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def mha(W, p, q_in, kv_in, heads, causal):
    """-> (output [n, d], weights [H, n, m])."""
    n, d = q_in.shape
    m, hd = kv_in.shape[0], d // heads
    q = q_in @ W[p + "wq"] + W[p + "bq"]
    k = kv_in @ W[p + "wk"] + W[p + "bk"]
    v = kv_in @ W[p + "wv"] + W[p + "bv"]
    q, k, v = (t.reshape(-1, heads, hd).transpose(1, 0, 2) for t in (q, k, v))  # (H, n, hd)
    s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
    if causal:
        s = s + np.triu(np.full((n, m), -np.inf), 1)
    w = softmax(s)
    ctx = (w @ v).transpose(1, 0, 2).reshape(n, d)
    return ctx @ W[p + "wo"] + W[p + "bo"], w


def act(x, kind):
    if kind == "relu":
        return np.maximum(x, 0)
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def ffn(W, p, x, kind):
    return act(x @ W[p + "linear1.weight"] + W[p + "linear1.bias"], kind) @ W[p + "linear2.weight"] + W[p + "linear2.bias"]


def positions(cfg, W, n):
    d = cfg["dModel"]
    if cfg["positional"] == "learned":
        return W["positional.weight"][:n]
    pe = np.zeros((n, d))
    for p in range(n):
        for i in range(0, d, 2):
            pe[p, i] = math.sin(p / 10000 ** (i / d))
            if i + 1 < d:
                pe[p, i + 1] = math.cos(p / 10000 ** (i / d))
    return pe


def rms_norm(x, w, eps):
    """LlamaRMSNorm: x / sqrt(mean(x^2) + eps) * w."""
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps) * w


def rope(x, theta):
    """x [H, n, hd] rotated as transformers' apply_rotary_pos_emb (rotate_half pairing (i, i + hd/2), default
    rope type: inv_freq = theta^(-2j/hd))."""
    hd = x.shape[-1]
    inv = theta ** (-np.arange(0, hd, 2) / hd)
    ang = np.arange(x.shape[1])[:, None] * inv[None, :]
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    rot = np.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], -1)
    return x * cos + rot * sin


def llama_decoder(cfg, W, tgt):
    """Llama-style bundles (norm 'rms', positional 'rope', activation 'silu' + gated, numKVHeads, bias false):
    LlamaDecoderLayer in float64 — pre-RMSNorm, RoPE on q and k, query head h reads K/V head h // (H / KV)
    (repeat_kv), causal softmax, SwiGLU down(silu(gate(x)) * up(x)) with linear1 = gate, linear3 = up."""
    eps, H, KV, theta = cfg["eps"], cfg["numHeads"], cfg.get("numKVHeads", cfg["numHeads"]), cfg.get("ropeTheta", 1e4)
    assert cfg["positional"] == "rope" and cfg["activation"] == "silu" and cfg.get("gated") and not cfg.get("bias", True)
    x = W["embedding.weight"][tgt] * cfg["embeddingScale"]
    n, d = x.shape
    hd = d // H
    weights = []
    for i in range(cfg["numLayers"]):
        p = "decoder.layers.%d." % i
        h = rms_norm(x, W[p + "norm1.weight"], eps)
        q = (h @ W[p + "self_attn.wq"]).reshape(n, H, hd).transpose(1, 0, 2)
        k = (h @ W[p + "self_attn.wk"]).reshape(n, KV, hd).transpose(1, 0, 2)
        v = (h @ W[p + "self_attn.wv"]).reshape(n, KV, hd).transpose(1, 0, 2)
        q, k = rope(q, theta), rope(k, theta)
        k, v = np.repeat(k, H // KV, 0), np.repeat(v, H // KV, 0)
        w = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(hd) + np.triu(np.full((n, n), -np.inf), 1))
        weights.append(w)
        x = x + (w @ v).transpose(1, 0, 2).reshape(n, d) @ W[p + "self_attn.wo"]
        h = rms_norm(x, W[p + "norm2.weight"], eps)
        g = h @ W[p + "linear1.weight"]
        x = x + (g / (1 + np.exp(-g)) * (h @ W[p + "linear3.weight"])) @ W[p + "linear2.weight"]
    y = rms_norm(x, W["decoder.norm.weight"], eps)
    return y @ W["embedding.weight"].T, {"encoder": [], "decoder": weights, "cross": []}


def transformer(cfg, W, tgt, src=None):
    """-> (logits [n, V], {"encoder": [...], "decoder": [...], "cross": [...]} attention weights)."""
    if cfg.get("norm") == "rms":
        return llama_decoder(cfg, W, tgt)
    eps, H, pre, kind = cfg["eps"], cfg["numHeads"], cfg["normFirst"], cfg["activation"]
    emb = lambda ids: W["embedding.weight"][ids] * cfg["embeddingScale"] + positions(cfg, W, len(ids))
    tr = {"encoder": [], "decoder": [], "cross": []}
    mem = None
    if cfg["architecture"] == "encoder-decoder":
        x = emb(src)
        for i in range(cfg["numLayers"]):
            x, w = block(W, "encoder.layers.%d." % i, x, None, H, pre, kind, eps, causal=False)
            tr["encoder"].append(w)
        mem = layer_norm(x, W, "encoder.norm", eps) if "encoder.norm.weight" in W else x
    y = emb(tgt)
    n_dec = cfg["numDecoderLayers"] if mem is not None else cfg["numLayers"]
    for i in range(n_dec):
        out = block(W, "decoder.layers.%d." % i, y, mem, H, pre, kind, eps, causal=True)
        y = out[0]
        tr["decoder"].append(out[1])
        if mem is not None:
            tr["cross"].append(out[2])
    if "decoder.norm.weight" in W:
        y = layer_norm(y, W, "decoder.norm", eps)
    logits = y @ W["lm_head.weight"] + W["lm_head.bias"] if "lm_head.weight" in W else y @ W["embedding.weight"].T
    return logits, tr


def block(W, p, x, mem, H, pre, kind, eps, causal):
    ln = lambda t, k: layer_norm(t, W, p + "norm%d" % k, eps)
    ff_norm = 3 if mem is not None else 2
    if pre:
        a, ws = mha(W, p + "self_attn.", ln(x, 1), ln(x, 1), H, causal)
        x = x + a
        if mem is not None:
            c, wc = mha(W, p + "cross_attn.", ln(x, 2), mem, H, False)
            x = x + c
        x = x + ffn(W, p, ln(x, ff_norm), kind)
    else:
        a, ws = mha(W, p + "self_attn.", x, x, H, causal)
        x = ln(x + a, 1)
        if mem is not None:
            c, wc = mha(W, p + "cross_attn.", x, mem, H, False)
            x = ln(x + c, 2)
        x = ln(x + ffn(W, p, x, kind), ff_norm)
    return (x, ws, wc) if mem is not None else (x, ws)


def gru(W, p, xs, h):
    """One GRU layer over xs [T, in] from h [H] -> outputs [T, H]."""
    Hn = h.shape[0]
    out = []
    for x in xs:
        gi = x @ W[p + "w_ih"] + W[p + "b_ih"]
        gh = h @ W[p + "w_hh"] + W[p + "b_hh"]
        r = 1 / (1 + np.exp(-(gi[:Hn] + gh[:Hn])))
        z = 1 / (1 + np.exp(-(gi[Hn:2 * Hn] + gh[Hn:2 * Hn])))
        nn_ = np.tanh(gi[2 * Hn:] + r * gh[2 * Hn:])
        h = (1 - z) * nn_ + z * h
        out.append(h)
    return np.array(out)


def bahdanau(cfg, W, tgt, src):
    """-> (logits [n, V], attention [n, m]) for teacher-forced decoder inputs tgt."""
    L, Hn = cfg["numLayers"], cfg["numHiddens"]
    x = W["encoder.embedding.weight"][src]
    state = []
    for k in range(L):
        x = gru(W, "encoder.gru.l%d." % k, x, np.zeros(Hn))
        state.append(x[-1])
    enc = x
    keys = enc @ W["decoder.attention.wk"]
    logits, attn = [], []
    for y in tgt:
        scores = np.tanh(state[-1] @ W["decoder.attention.wq"] + keys) @ W["decoder.attention.wv"]
        w = softmax(scores)
        inp = np.concatenate([w @ enc, W["decoder.embedding.weight"][y]])
        for k in range(L):
            state[k] = gru(W, "decoder.gru.l%d." % k, inp[None], state[k])[0]
            inp = state[k]
        logits.append(inp @ W["decoder.dense.weight"] + W["decoder.dense.bias"])
        attn.append(w)
    return np.array(logits), np.array(attn)


def greedy(cfg, W, input_ids, max_new):
    eos = cfg["tokenizer"]["vocab"].index(cfg["tokenizer"]["eos"])
    bos = cfg["tokenizer"]["vocab"].index(cfg["tokenizer"]["bos"])
    arch = cfg["architecture"]
    seq = [bos] if arch != "decoder" else list(input_ids)
    new = []
    for _ in range(max_new):
        if arch == "gru-bahdanau":
            logits = bahdanau(cfg, W, seq, input_ids)[0]
        elif arch == "encoder-decoder":
            logits = transformer(cfg, W, seq, input_ids)[0]
        else:
            logits = transformer(cfg, W, seq)[0]
        nxt = int(np.argmax(logits[-1]))  # first maximum = smaller id on ties
        if nxt == eos:
            break
        new.append(nxt)
        seq.append(nxt)
    return new


def close(a, b, atol, rtol=0.0):
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    assert a.shape == b.shape, "shape %s vs %s" % (a.shape, b.shape)
    return float(np.max(np.abs(a - b) - rtol * np.abs(b))) <= atol, float(np.max(np.abs(a - b)))


def check(name):
    d = name if os.path.isdir(name) else os.path.join(MODELS, name)
    cfg = json.load(open(os.path.join(d, "config.json"), encoding="utf-8"))
    files = [f for f in sorted(os.listdir(d))]
    size = sum(len(gzip.compress(open(os.path.join(d, f), "rb").read(), 9)) for f in files)
    print("%s: %s, %d bytes gzipped" % (name, ", ".join(files), size))
    if cfg["architecture"] == "kernel-regression":
        x, xt, yt, w = (np.array(cfg[k]) for k in ("xTest", "xTrain", "yTrain", "w"))
        pred = softmax(-((x[:, None] - xt[None, :]) * w) ** 2 / 2) @ yt
        ok, err = close(pred, cfg["reference"]["yPredLearned"], 1e-5)
        print("  kernelRegression yPred max |diff| %.2e %s" % (err, "ok" if ok else "FAIL"))
        return ok
    W = load_safetensors(os.path.join(d, "model.safetensors"))
    ref = json.load(open(os.path.join(d, "reference.json"), encoding="utf-8"))
    held = json.load(open(os.path.join(d, "heldout.json"), encoding="utf-8"))
    good = len(held.get("items", held.get("texts", []))) > 0
    vocab = cfg["tokenizer"]["vocab"]
    index = {t: i for i, t in enumerate(vocab)}
    for case in ref["cases"]:
        ids = [index.get(c, index[cfg["tokenizer"]["unk"]]) for c in case["input"]]
        assert ids == case["inputIds"], "%s: tokenizer ids differ for %r" % (name, case["input"])
        out = greedy(cfg, W, ids, case.get("maxNewTokens", len(case["outputIds"]) + 1))
        ok = out == case["outputIds"]
        good &= ok
        print("  greedy %r -> %r %s" % (case["input"], "".join(vocab[i] for i in out), "ok" if ok else "FAIL"))
        tf = case.get("teacherForced")
        if not tf:
            continue
        if cfg["architecture"] == "gru-bahdanau":
            logits, attn = bahdanau(cfg, W, tf["targetIds"], ids)
            pairs = [("attention", attn, tf["attention"])]
        elif cfg["architecture"] == "encoder-decoder":
            logits, tr = transformer(cfg, W, tf["targetIds"], ids)
            pairs = [("encoder %d" % i, w, r) for i, (w, r) in enumerate(zip(tr["encoder"], tf["encoderSelfAttention"]))]
            pairs += [("decoder %d" % i, w, r) for i, (w, r) in enumerate(zip(tr["decoder"], tf["decoderSelfAttention"]))]
            pairs += [("cross %d" % i, w, r) for i, (w, r) in enumerate(zip(tr["cross"], tf["crossAttention"]))]
        else:
            logits, tr = transformer(cfg, W, tf["ids"])
            pairs = [("self %d" % i, w, r) for i, (w, r) in enumerate(zip(tr["decoder"], tf["selfAttention"]))]
        worst = 0.0
        for what, w, r in pairs:
            ok, err = close(w, r, 2e-5)
            worst = max(worst, err)
            good &= ok
            if not ok:
                print("  attention %s differs by %.2e FAIL" % (what, err))
        ok, err = close(logits[-1], tf["lastLogits"], 1e-4, 1e-4)
        good &= ok
        print("  teacher-forced: %d attention maps max |diff| %.2e, last logits max |diff| %.2e %s"
              % (len(pairs), worst, err, "ok" if ok else "FAIL"))
    return good


def main():
    names = sys.argv[1:] or sorted(os.listdir(MODELS))
    results = [check(n) for n in names]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
