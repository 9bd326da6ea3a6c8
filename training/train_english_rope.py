#!/usr/bin/python3
"""Train and export models/english-rope: the same character-level language model task, corpus, split, context,
batch, steps and learning-rate schedule as models/english (train_english_lm.py), with Llama-style blocks instead
of GPT-2-style ones:
  - RMSNorm (LlamaRMSNorm: x / sqrt(mean(x^2) + eps) * w) before attention, before the feed-forward and at the end;
  - rotary position embeddings on q and k (Hugging Face's rotate_half pairing, modeling_llama.apply_rotary_pos_emb;
    theta 10000), no position table;
  - SwiGLU feed-forward down(silu(gate(x)) * up(x)) (LlamaMLP), dFF chosen so the parameters match english's 4·d
    two-matrix FFN;
  - grouped-query attention: 4 query heads sharing 2 key/value heads (repeat_kv: query head h reads K/V head
    h // 2), no biases anywhere; tied output head.

    /usr/bin/python3 training/train_english_rope.py [--steps N]

Deterministic: fixed seeds, one thread (common.setup). Weights are shipped as F16; every number reported is
computed with the F16-rounded weights. The export is the attnscope-model/1 bundle (docs/model.md) with the
Llama-style members norm 'rms', positional 'rope' + ropeTheta, activation 'silu' + gated, numKVHeads, bias false.
"""
import math

import torch
from torch import nn
import torch.nn.functional as F

import charlm
import common as C
import train_english_lm as E  # the same corpus, split, tokenizer, measures and files

SEED = 1234
CONTEXT, D_MODEL, HEADS, KV_HEADS, LAYERS = 128, 64, 4, 2, 3
D_FF = 172  # 3 matrices of 64 x 172 ~ english's 2 of 64 x 256
THETA, EPS = 10000.0, 1e-5
DESCRIPTION = (
    "The same small character-level language model task as 'english' (WordNet's dictionary glosses, same "
    "corpus, steps and context), built like today's LLMs: RMSNorm, rotary position embeddings (no position "
    "table: a head's score depends on the offset between query and key), a SwiGLU feed-forward and 4 query heads "
    "that share 2 key/value heads (grouped-query attention: heads 1-2 read K/V head 1, heads 3-4 K/V head 2). "
    "Compare its heads with english's on the same text.")


class RMSNorm(nn.Module):
    """transformers' LlamaRMSNorm: hidden * rsqrt(mean(hidden^2) + eps) * weight (float32 here)."""

    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_cos_sin(n, head_dim, theta):
    """LlamaRotaryEmbedding (default rope type): inv_freq = theta^(-2j/hd), emb = cat(freqs, freqs)."""
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    freqs = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], -1)
    return emb.cos().float(), emb.sin().float()


def rotate_half(x):
    """modeling_llama.rotate_half."""
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


class Block(nn.Module):
    def __init__(self, d, h, kvh, f, eps):
        super().__init__()
        self.h, self.kvh, self.hd = h, kvh, d // h
        self.norm1, self.norm2 = RMSNorm(d, eps), RMSNorm(d, eps)
        self.wq = nn.Linear(d, h * self.hd, bias=False)
        self.wk = nn.Linear(d, kvh * self.hd, bias=False)
        self.wv = nn.Linear(d, kvh * self.hd, bias=False)
        self.wo = nn.Linear(h * self.hd, d, bias=False)
        self.gate = nn.Linear(d, f, bias=False)
        self.up = nn.Linear(d, f, bias=False)
        self.down = nn.Linear(f, d, bias=False)

    def attend(self, x, cos, sin, mask):
        """LlamaAttention.forward (eager_attention_forward with repeat_kv): returns (out, weights [B, H, n, n])."""
        B, n, _ = x.shape
        q = self.wq(x).view(B, n, self.h, self.hd).transpose(1, 2)
        k = self.wk(x).view(B, n, self.kvh, self.hd).transpose(1, 2)
        v = self.wv(x).view(B, n, self.kvh, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.h // self.kvh
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.hd) + mask
        w = torch.softmax(s, -1)
        o = (w @ v).transpose(1, 2).reshape(B, n, self.h * self.hd)
        return self.wo(o), w

    def forward(self, x, cos, sin, mask):
        a, w = self.attend(self.norm1(x), cos, sin, mask)
        x = x + a
        hn = self.norm2(x)
        return x + self.down(F.silu(self.gate(hn)) * self.up(hn)), w


class RopeLM(nn.Module):
    """Decoder-only; the interface charlm.train / text_loss use: decode(ids) -> logits, max_positions."""

    def __init__(self, vocab_size, d, h, kvh, layers, f, context, eps):
        super().__init__()
        self.arch = "decoder"
        self.d, self.h, self.kvh, self.f, self.max_positions, self.eps = d, h, kvh, f, context, eps
        self.embedding = nn.Embedding(vocab_size, d)
        nn.init.normal_(self.embedding.weight, std=0.1)
        self.decoder = nn.ModuleList([Block(d, h, kvh, f, eps) for _ in range(layers)])
        self.norm = RMSNorm(d, eps)
        cos, sin = rope_cos_sin(context, d // h, THETA)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def run(self, ids):
        n = ids.shape[1]
        x = self.embedding(ids)
        mask = C.causal_mask(n)
        ws = []
        for b in self.decoder:
            x, w = b(x, self.cos[:n], self.sin[:n], mask)
            ws.append(w)
        return self.norm(x) @ self.embedding.weight.t(), ws

    def decode(self, ids, memory=None):
        return self.run(ids)[0]

    def config(self):
        return {"dModel": self.d, "numHeads": self.h, "numKVHeads": self.kvh, "numLayers": len(self.decoder),
                "numDecoderLayers": 0, "dFF": self.f, "normFirst": True, "norm": "rms", "activation": "silu",
                "gated": True, "bias": False, "positional": "rope", "ropeTheta": THETA,
                "maxPositions": self.max_positions, "eps": self.eps, "embeddingScale": 1.0}

    def tensors(self):
        """attnscope names ([in, out] layout, docs/model.md): gated FFN linear1 = gate, linear3 = up, linear2 =
        down; RMSNorm weights only."""
        t = {"embedding.weight": self.embedding.weight, "decoder.norm.weight": self.norm.weight}
        for i, b in enumerate(self.decoder):
            p = "decoder.layers.%d." % i
            for nm in ("wq", "wk", "wv", "wo"):
                t[p + "self_attn." + nm] = getattr(b, nm).weight.t()
            t[p + "linear1.weight"] = b.gate.weight.t()
            t[p + "linear3.weight"] = b.up.weight.t()
            t[p + "linear2.weight"] = b.down.weight.t()
            t[p + "norm1.weight"], t[p + "norm2.weight"] = b.norm1.weight, b.norm2.weight
        return {k: v.detach().numpy().astype("float32") for k, v in t.items()}

    def num_params(self):
        return sum(p.numel() for p in self.parameters())


@torch.no_grad()
def traced(model, ids):
    """(logits [n, V], [w [H, n, n] per layer]): charlm's trace hook for this model."""
    model.eval()
    logits, ws = model.run(torch.tensor([ids]))
    return logits[0], [w[0] for w in ws]


def main():
    steps = C.steps_arg(2500)
    C.setup(SEED)
    held, tok, ids = E.corpus()
    model = RopeLM(len(tok.vocab), D_MODEL, HEADS, KV_HEADS, LAYERS, D_FF, CONTEXT, EPS)
    timing = charlm.train(model, ids, CONTEXT, 24, steps, 3e-3, SEED)
    C.round_to_f16(model)
    loss, heads, ind_seqs = E.measure(model, tok, held, traced)

    out = C.model_dir("english-rope")
    C.write_safetensors(out + "/model.safetensors", model.tensors(), dtype="F16",
                        metadata={"format": "attnscope-model/1"})
    E.write_heldout(out, model, tok, held, ind_seqs)
    charlm.write_reference(model, tok, out, "english-rope",
                           ["a small domesticated carnivorous mammal", "xqzvjk xqzvjk", "the act of"], trace=traced)
    with open("/usr/share/doc/wordnet-base/copyright", encoding="utf-8") as f, open(out + "/LICENCE", "w") as g:
        g.write(f.read())
    E.write_config(out, "english-rope", "English character-level language model (Llama-style blocks)", DESCRIPTION,
                   E.LICENCE.replace("models/english/", "models/english-rope/"), tok, model, steps, timing, loss,
                   heads)
    print("params", model.num_params(), timing)


if __name__ == "__main__":
    main()
