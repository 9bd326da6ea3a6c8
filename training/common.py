"""Shared pieces of attnscope's training scripts (training/train_*.py).

Everything here follows attnscope's model semantics (docs/model.md, /work/shared/spec/API.md):
  - char tokenizer: one token per Unicode code point; specials <pad> <s> </s> <unk> are ids 0..3 and never occur
    in text; decoder-side sequences are <s> + target + </s>;
  - x = embedding(ids) * embeddingScale + PE, PE sinusoidal interleaved (PE[p,2i] = sin(p/10000^(2i/d)),
    PE[p,2i+1] = cos(...)) or a learned [maxPositions, d] table;
  - layers = torch.nn.TransformerEncoderLayer / TransformerDecoderLayer (batch_first=True); decoder-only models
    are encoder layers with the causal (top-left) mask under the `decoder.` name; optional final LayerNorms;
  - head: lm_head.weight [d, V] + lm_head.bias [V], or tied to embedding.weight (logits = h . E^T, no bias);
  - safetensors written by hand ([in, out] layout = PyTorch Linear weight transposed), F32 or F16.
Greedy decoding: argmax with ties to the smaller id (torch.argmax returns the first maximum).
Run every script with /usr/bin/python3 (torch 1.13 CPU).
"""
import gzip
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models")
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
PAD, BOS, EOS, UNK = 0, 1, 2, 3


OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-serial"


def fast_runtime():
    """Re-runs this script once in a faster runtime (results are the same up to float32 rounding): (1) Debian's
    torch calls the system BLAS, which defaults to the slow reference netlib build; when Debian's
    libopenblas0-serial is installed it goes first on LD_LIBRARY_PATH (~8x faster GEMMs on one thread);
    (2) glibc's malloc keeps large freed blocks instead of unmapping them (below)."""
    again = False
    if os.path.isdir(OPENBLAS) and OPENBLAS not in os.environ.get("LD_LIBRARY_PATH", ""):
        os.environ["LD_LIBRARY_PATH"] = OPENBLAS + ":" + os.environ.get("LD_LIBRARY_PATH", "")
        again = True
    # glibc returns every freed block above 128 KiB to the kernel (munmap), so each step's fresh logits tensor
    # (tens of MB for a 3,700-character vocabulary) is page-faulted in again: measured 134 ms for a 2688 x 96 x
    # 3738 GEMM, 25 ms with these (the mmap threshold's maximum is 32 MiB; larger blocks are still mapped).
    for k, v in (("MALLOC_MMAP_THRESHOLD_", "33554432"), ("MALLOC_TRIM_THRESHOLD_", "4294967296"),
                 ("MALLOC_TOP_PAD_", "268435456")):
        if k not in os.environ:
            os.environ[k] = v
            again = True
    if again:
        os.execv(sys.executable, [sys.executable] + sys.argv)


def setup(seed):
    """Fixed seeds and one thread (the machine's two cores are shared)."""
    fast_runtime()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    np.random.seed(seed)


# ---------------------------------------------------------------------------------------------------------
# Tokenizer


class CharTokenizer:
    """Each Unicode code point is one token; unknown code points map to <unk>."""

    def __init__(self, chars):
        self.vocab = SPECIALS + sorted(set(chars))
        self.index = {t: i for i, t in enumerate(self.vocab)}

    def encode(self, text):
        return [self.index.get(c, UNK) for c in text]

    def decode(self, ids):
        return "".join(self.vocab[i] for i in ids if i >= len(SPECIALS))

    def config(self):
        return {"kind": "char", "vocab": self.vocab, "pad": "<pad>", "bos": "<s>", "eos": "</s>", "unk": "<unk>"}


def pad_batch(seqs, value=PAD):
    """List of id lists -> LongTensor [B, max_len] padded with `value`."""
    n = max(len(s) for s in seqs)
    out = torch.full((len(seqs), n), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.tensor(s, dtype=torch.long)
    return out


# ---------------------------------------------------------------------------------------------------------
# Positions


def sinusoidal(n, d, base=10000.0):
    """[n, d] float32, interleaved: PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(same)."""
    pe = np.zeros((n, d), dtype=np.float64)
    for p in range(n):
        for i in range(0, d, 2):
            angle = p / base ** (i / d)
            pe[p, i] = math.sin(angle)
            if i + 1 < d:
                pe[p, i + 1] = math.cos(angle)
    return torch.tensor(pe.astype(np.float32))


def causal_mask(n):
    """[n, n] float mask, -inf above the diagonal (top-left causal)."""
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


# ---------------------------------------------------------------------------------------------------------
# Transformer (encoder-decoder or decoder-only) with attnscope's semantics


class Transformer(nn.Module):
    """architecture 'encoder-decoder' (num_layers encoder + num_decoder_layers decoder layers) or 'decoder'
    (num_layers causal encoder layers named `decoder.`). One embedding table shared by both sides."""

    def __init__(self, vocab_size, architecture, d_model, num_heads, num_layers, num_decoder_layers=0, d_ff=None,
                 norm_first=False, activation="relu", positional="sinusoidal", max_positions=64,
                 embedding_scale=1.0, final_norm=False, tied_head=False, dropout=0.0, eps=1e-5):
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.arch, self.d, self.h = architecture, d_model, num_heads
        self.norm_first, self.activation, self.positional = norm_first, activation, positional
        self.max_positions, self.embedding_scale, self.eps = max_positions, embedding_scale, eps
        self.embedding = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.embedding.weight, std=d_model ** -0.5 if embedding_scale != 1.0 else 0.1)
        if positional == "learned":
            self.positional_weight = nn.Parameter(torch.randn(max_positions, d_model) * 0.02)
        else:
            self.register_buffer("pe", sinusoidal(max_positions, d_model), persistent=False)
        kw = dict(d_model=d_model, nhead=num_heads, dim_feedforward=d_ff, dropout=dropout, activation=activation,
                  layer_norm_eps=eps, batch_first=True, norm_first=norm_first)
        if architecture == "encoder-decoder":
            self.encoder = nn.ModuleList([nn.TransformerEncoderLayer(**kw) for _ in range(num_layers)])
            self.decoder = nn.ModuleList([nn.TransformerDecoderLayer(**kw) for _ in range(num_decoder_layers)])
        elif architecture == "decoder":
            self.encoder = nn.ModuleList()
            self.decoder = nn.ModuleList([nn.TransformerEncoderLayer(**kw) for _ in range(num_layers)])
        else:
            raise ValueError("Transformer: architecture (%r) must be 'encoder-decoder' or 'decoder'" % architecture)
        self.num_layers = num_layers
        self.num_decoder_layers = num_decoder_layers if architecture == "encoder-decoder" else 0
        self.d_ff = d_ff
        self.encoder_norm = nn.LayerNorm(d_model, eps=eps) if final_norm and architecture == "encoder-decoder" else None
        self.decoder_norm = nn.LayerNorm(d_model, eps=eps) if final_norm else None
        self.lm_head = None if tied_head else nn.Linear(d_model, vocab_size)

    def embed(self, ids):
        """ids [B, n] -> [B, n, d] = E[ids] * scale + positions."""
        n = ids.shape[1]
        pos = self.positional_weight[:n] if self.positional == "learned" else self.pe[:n]
        return self.embedding(ids) * self.embedding_scale + pos

    def head(self, h):
        return self.lm_head(h) if self.lm_head is not None else h @ self.embedding.weight.t()

    def encode(self, src, src_pad=None):
        x = self.embed(src)
        for layer in self.encoder:
            x = layer(x, src_key_padding_mask=src_pad)
        return self.encoder_norm(x) if self.encoder_norm is not None else x

    def decode(self, tgt, memory=None, tgt_pad=None, mem_pad=None):
        y = self.embed(tgt)
        mask = causal_mask(tgt.shape[1])
        for layer in self.decoder:
            if memory is None:
                y = layer(y, src_mask=mask, src_key_padding_mask=tgt_pad)
            else:
                y = layer(y, memory, tgt_mask=mask, tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad)
        if self.decoder_norm is not None:
            y = self.decoder_norm(y)
        return self.head(y)

    def forward(self, src, tgt, src_pad=None, tgt_pad=None):
        """Encoder-decoder logits [B, n_tgt, V]."""
        return self.decode(tgt, self.encode(src, src_pad), tgt_pad, src_pad)

    # -- config and export ------------------------------------------------------------------------------

    def config(self):
        return {"dModel": self.d, "numHeads": self.h, "numLayers": self.num_layers,
                "numDecoderLayers": self.num_decoder_layers, "dFF": self.d_ff, "normFirst": self.norm_first,
                "activation": self.activation, "positional": self.positional, "maxPositions": self.max_positions,
                "eps": self.eps, "embeddingScale": self.embedding_scale}

    def tensors(self):
        """attnscope names -> float32 numpy arrays ([in, out] layout)."""
        t = {"embedding.weight": self.embedding.weight}
        if self.positional == "learned":
            t["positional.weight"] = self.positional_weight
        for i, layer in enumerate(self.encoder):
            t.update(layer_tensors("encoder.layers.%d." % i, layer, self.d, False))
        for i, layer in enumerate(self.decoder):
            t.update(layer_tensors("decoder.layers.%d." % i, layer, self.d, self.arch == "encoder-decoder"))
        for name, norm in (("encoder.norm", self.encoder_norm), ("decoder.norm", self.decoder_norm)):
            if norm is not None:
                t[name + ".weight"], t[name + ".bias"] = norm.weight, norm.bias
        if self.lm_head is not None:
            t["lm_head.weight"] = self.lm_head.weight.t()
            t["lm_head.bias"] = self.lm_head.bias
        return {k: v.detach().numpy().astype(np.float32) if torch.is_tensor(v) else v for k, v in t.items()}

    def num_params(self):
        return sum(p.numel() for p in self.parameters())


def mha_tensors(prefix, mha, d):
    w, b = mha.in_proj_weight, mha.in_proj_bias
    out = {}
    for j, nm in enumerate("qkv"):
        out[prefix + "w" + nm] = w[j * d:(j + 1) * d].t()  # PyTorch [out, in] -> ours [in, out]
        out[prefix + "b" + nm] = b[j * d:(j + 1) * d]
    out[prefix + "wo"] = mha.out_proj.weight.t()
    out[prefix + "bo"] = mha.out_proj.bias
    return out


def layer_tensors(prefix, layer, d, cross):
    t = mha_tensors(prefix + "self_attn.", layer.self_attn, d)
    if cross:
        t.update(mha_tensors(prefix + "cross_attn.", layer.multihead_attn, d))
    t[prefix + "linear1.weight"] = layer.linear1.weight.t()
    t[prefix + "linear1.bias"] = layer.linear1.bias
    t[prefix + "linear2.weight"] = layer.linear2.weight.t()
    t[prefix + "linear2.bias"] = layer.linear2.bias
    for i in (1, 2, 3) if cross else (1, 2):
        norm = getattr(layer, "norm%d" % i)
        t[prefix + "norm%d.weight" % i] = norm.weight
        t[prefix + "norm%d.bias" % i] = norm.bias
    return t


def round_to_f16(model):
    """Round every parameter to float16 and back (so reference outputs use the weights as shipped in F16)."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())


# ---------------------------------------------------------------------------------------------------------
# Traced forward (batch 1, no padding): every layer's attention weights, checked against the modules


def _attend(mha, q_in, kv_in, mask):
    out, w = mha(q_in, kv_in, kv_in, attn_mask=mask, need_weights=True, average_attn_weights=False)
    return out, w[0]  # w: [H, n, m]


def _ff(layer, x):
    return layer.linear2(layer.activation(layer.linear1(x)))


def _encoder_layer(layer, x, mask):
    if layer.norm_first:
        a, w = _attend(layer.self_attn, layer.norm1(x), layer.norm1(x), mask)
        x = x + a
        return x + _ff(layer, layer.norm2(x)), w
    a, w = _attend(layer.self_attn, x, x, mask)
    x = layer.norm1(x + a)
    return layer.norm2(x + _ff(layer, x)), w


def _decoder_layer(layer, y, mem, mask):
    if layer.norm_first:
        a, ws = _attend(layer.self_attn, layer.norm1(y), layer.norm1(y), mask)
        y = y + a
        c, wc = _attend(layer.multihead_attn, layer.norm2(y), mem, None)
        y = y + c
        return y + _ff(layer, layer.norm3(y)), ws, wc
    a, ws = _attend(layer.self_attn, y, y, mask)
    y = layer.norm1(y + a)
    c, wc = _attend(layer.multihead_attn, y, mem, None)
    y = layer.norm2(y + c)
    return layer.norm3(y + _ff(layer, y)), ws, wc


@torch.no_grad()
def traced(model, tgt_ids, src_ids=None):
    """One teacher-forced run at batch 1. Returns (logits [n, V], trace) with trace = {"encoder": [w [H,m,m]],
    "decoder": [w [H,n,n]], "cross": [w [H,n,m]]}. The result is checked against the modules' own forward."""
    model.eval()
    tgt = torch.tensor([tgt_ids])
    trace = {"encoder": [], "decoder": [], "cross": []}
    mem = None
    if model.arch == "encoder-decoder":
        src = torch.tensor([src_ids])
        x = model.embed(src)
        for layer in model.encoder:
            x, w = _encoder_layer(layer, x, None)
            trace["encoder"].append(w)
        mem = model.encoder_norm(x) if model.encoder_norm is not None else x
    y = model.embed(tgt)
    mask = causal_mask(tgt.shape[1])
    for layer in model.decoder:
        if mem is None:
            y, w = _encoder_layer(layer, y, mask)
        else:
            y, w, wc = _decoder_layer(layer, y, mem, mask)
            trace["cross"].append(wc)
        trace["decoder"].append(w)
    if model.decoder_norm is not None:
        y = model.decoder_norm(y)
    logits = model.head(y)[0]
    expected = (model(src, tgt) if mem is not None else model.decode(tgt))[0]
    err = (logits - expected).abs().max().item()
    assert err < 1e-4, "traced: recomputed logits differ from the modules' forward by %g" % err
    return logits, trace


@torch.no_grad()
def greedy(model, src_ids=None, prompt_ids=(), max_new=32):
    """attnscope's greedy decoding. Encoder-decoder: decoder input starts with <s>; decoder-only: the prompt.
    Appends argmax (ties -> smaller id) until </s> or max_new tokens. Returns the new ids without </s>."""
    model.eval()
    mem = model.encode(torch.tensor([src_ids])) if model.arch == "encoder-decoder" else None
    seq = [BOS] if mem is not None else list(prompt_ids)
    new = []
    for _ in range(max_new):
        logits = model.decode(torch.tensor([seq]), mem)[0, -1]
        nxt = int(torch.argmax(logits))
        if nxt == EOS:
            break
        new.append(nxt)
        seq.append(nxt)
    return new


@torch.no_grad()
def greedy_batch(model, srcs, max_new):
    """Batched greedy decoding for an encoder-decoder (same results as greedy(): padded source keys are
    masked; decoding continues for every row until all emitted </s>). Returns lists of new ids without </s>."""
    model.eval()
    src = pad_batch(srcs)
    src_pad = src == PAD
    mem = model.encode(src, src_pad)
    seq = torch.full((len(srcs), 1), BOS, dtype=torch.long)
    done = torch.zeros(len(srcs), dtype=torch.bool)
    for _ in range(max_new):
        logits = model.decode(seq, mem, None, src_pad)[:, -1]
        nxt = logits.argmax(-1)
        seq = torch.cat([seq, nxt[:, None]], 1)
        done |= nxt == EOS
        if done.all():
            break
    out = []
    for row in seq[:, 1:].tolist():
        out.append(row[:row.index(EOS)] if EOS in row else row)
    return out


# ---------------------------------------------------------------------------------------------------------
# Files


def write_safetensors(path, tensors, dtype="F32", metadata=None):
    """8-byte LE header length + JSON header {name: {dtype, shape, data_offsets}, "__metadata__"} padded with
    spaces to a multiple of 8, then the little-endian data."""
    header, blobs, offset = {}, [], 0
    np_dtype = {"F32": "<f4", "F16": "<f2"}[dtype]
    for name, arr in tensors.items():
        data = np.ascontiguousarray(arr, dtype=np_dtype).tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """The inverse of write_safetensors (used to check an export round-trips)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, e in header.items():
        a, b = e["data_offsets"]
        dt = {"F32": "<f4", "F16": "<f2"}[e["dtype"]]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dt).astype(np.float32).reshape(e["shape"])
    return out


def flat(x, digits=10):
    """Flatten to a list of floats with >= 9 significant digits."""
    a = x.detach().double().numpy() if torch.is_tensor(x) else np.asarray(x, dtype=np.float64)
    return [float("%.*g" % (digits, v)) for v in a.reshape(-1)]


def write_json(path, obj, indent=None):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=indent, separators=(",", ":") if indent is None else None)
        f.write("\n")


def gz_size(paths):
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            total += len(gzip.compress(f.read(), 9))
    return total


def model_dir(name):
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    return d


class Timer:
    """Wall-clock seconds since creation; cpu() gives this process's CPU seconds (the machine is shared, so
    wall time depends on the load)."""

    def __init__(self):
        self.t0, self.c0 = time.time(), time.process_time()

    def __call__(self):
        return time.time() - self.t0

    def cpu(self):
        return time.process_time() - self.c0


def lr_at(step, total, peak, warmup):
    """Linear warm-up then cosine decay to 10% of the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))


def train(model, steps, peak_lr, warmup, loss_fn, betas=(0.9, 0.98), log_every=250, weight_decay=0.0):
    """Adam (AdamW when weight_decay > 0) with lr_at's schedule, gradient clipping at 1. loss_fn(step) -> scalar
    loss of one batch. Returns {"seconds": wall, "cpuSeconds": CPU time of this process}."""
    opt = (torch.optim.AdamW(model.parameters(), lr=peak_lr, betas=betas, weight_decay=weight_decay)
           if weight_decay > 0 else torch.optim.Adam(model.parameters(), lr=peak_lr, betas=betas))
    timer = Timer()
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, peak_lr, warmup)
        loss = loss_fn(step)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % log_every == 0 or step == steps - 1:
            print("step %d loss %.4f %.0fs" % (step, loss.item(), timer()), flush=True)
    model.eval()
    return {"seconds": round(timer(), 1), "cpuSeconds": round(timer.cpu(), 1)}


def steps_arg(default):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=default)
    return ap.parse_args().steps


def write_encdec_reference(model, tok, out, name, texts, max_new):
    """models/<name>/reference.json of an encoder-decoder char model: PyTorch outputs for `texts`: greedy ids/text
    (at most max_new tokens), and for the first, the teacher-forced attention weights of every layer and the final
    logits of the last position."""
    cases = []
    for k, text in enumerate(texts):
        src = tok.encode(text)
        ids = greedy(model, src_ids=src, max_new=max_new)
        case = {"input": text, "inputIds": src, "output": tok.decode(ids), "outputIds": ids, "maxNewTokens": max_new}
        if k == 0:
            tgt = [BOS] + ids
            logits, tr = traced(model, tgt, src)
            case["teacherForced"] = {
                "target": tok.decode(ids), "targetIds": tgt,
                "encoderSelfAttention": [flat(w) for w in tr["encoder"]],
                "decoderSelfAttention": [flat(w) for w in tr["decoder"]],
                "crossAttention": [flat(w) for w in tr["cross"]],
                "lastLogits": flat(logits[-1])}
        cases.append(case)
    write_json(out + "/reference.json", {
        "model": name, "torch": torch.__version__,
        "note": "greedy: decoder input starts with <s>, argmax (ties to the smaller id) until </s>; attention "
                "weights flat per layer [H, n, n] (self) / [H, n, m] (cross), n = len(targetIds) "
                "(<s> + output), m = len(inputIds)",
        "cases": cases})
