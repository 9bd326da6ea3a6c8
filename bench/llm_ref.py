#!/usr/bin/python3
"""llm_ref.py: the random Llama-layout checkpoint of bench/llm_engines.mjs, its float64 reference and its ONNX export.

    /usr/bin/python3 bench/llm_ref.py DIR SHAPE SEED [--onnx N ...] [--onnx-only]

--onnx-only: DIR holds the checkpoint and ref.json already (the 1B one took an hour); only the exports are written.

SHAPE is smollm2 (SmolLM2-135M's config: hidden 576, 30 layers, 9 heads sharing 3 K/V heads, intermediate 1536,
vocab 49152, tied head, rope_theta 100000) or llama1b (Llama-3.2-1B's shape with plain RoPE, theta 500000: the
llama3 frequency rescaling is left out so the GGUF needs no rope_freqs tensor). Writes into DIR (never committed):
  config.json, tokenizer.json (tests/fixtures/modern's byte-level tokenizer: id = byte value, <s> 256, </s> 257),
  model.safetensors (BF16, what attnscope loads and bench/gguf_writer.mjs converts),
  ref.json: per prompt (128 and 512 ASCII bytes) the float64 next-token top-5 logits, and the greedy continuation of
  the 128-byte prompt (GREEDY new tokens), computed on the stored BF16 values,
  onnx-<n>/model.onnx for each --onnx length n: torch.onnx.export (opset 14) of the same forward in float32, input_ids
  int64 [n] -> logits float32 [vocab] of the last position (as bench/gpt2_onnx.py: one model per length); past 2 GB
  (llama1b) its tensors are external data files beside it.
Weights: N(0, 1/in) projections (so q.k/sqrt(d) stays O(1) through every layer), N(0, 1) embedding (so the tied
head's logits have a spread of ~sqrt(hidden) and the top-1 margin is clear of BF16 / Q8_0 rounding), norms 1.

The reference forward follows Hugging Face's modeling_llama.py (no transformers import): LlamaRMSNorm
(x * rsqrt(mean(x^2) + eps) * w), LlamaRotaryEmbedding + rotate_half / apply_rotary_pos_emb (default rope:
inv_freq = theta^(-2i/d)), repeat_kv, eager_attention_forward (scaling head_dim^-0.5, causal mask, softmax),
LlamaMLP (down(silu(gate(x)) * up(x))), LlamaForCausalLM's tied lm_head.
"""
import json
import math
import os
import shutil
import struct
import sys
import warnings

import numpy
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "training"))
from common import fast_runtime  # noqa: E402  (OpenBLAS when installed: the llama1b reference took ~1 h on netlib)

D = torch.float64
GREEDY = 4

SHAPES = {
    "smollm2": dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, head_dim=64, vocab_size=49152, rope_theta=100000.0,
                    max_position_embeddings=8192, rms_norm_eps=1e-5),
    "llama1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                    num_key_value_heads=8, head_dim=64, vocab_size=128256, rope_theta=500000.0,
                    max_position_embeddings=8192, rms_norm_eps=1e-5),
}


def prompt(n):
    """n ASCII bytes (ids = bytes under the byte-level tokenizer); llm_engines.mjs builds the same text."""
    s = "The quick brown fox jumps over the lazy dog. "
    return (s * (n // len(s) + 1))[:n]


def make_params(c, seed):
    g = torch.Generator().manual_seed(seed)
    H, I, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    q, kv = c["num_attention_heads"] * c["head_dim"], c["num_key_value_heads"] * c["head_dim"]
    rnd = lambda *s: torch.randn(*s, generator=g, dtype=torch.float32)
    p = {"model.embed_tokens.weight": rnd(V, H), "model.norm.weight": torch.ones(H)}
    for L in range(c["num_hidden_layers"]):
        pre = "model.layers.%d." % L
        p[pre + "input_layernorm.weight"] = torch.ones(H)
        p[pre + "post_attention_layernorm.weight"] = torch.ones(H)
        for name, (o, i) in (("self_attn.q_proj", (q, H)), ("self_attn.k_proj", (kv, H)), ("self_attn.v_proj", (kv, H)),
                             ("self_attn.o_proj", (H, q)), ("mlp.gate_proj", (I, H)), ("mlp.up_proj", (I, H)),
                             ("mlp.down_proj", (H, I))):
            p[pre + name + ".weight"] = rnd(o, i) / math.sqrt(i)
    # the stored values: BF16, round to nearest even
    return {k: v.to(torch.bfloat16) for k, v in p.items()}


def write_safetensors(path, p):
    header, offset, order = {"__metadata__": {"format": "pt"}}, 0, sorted(p)
    for k in order:
        n = p[k].numel() * 2
        header[k] = {"dtype": "BF16", "shape": list(p[k].shape), "data_offsets": [offset, offset + n]}
        offset += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for k in order:
            f.write(p[k].contiguous().view(torch.int16).numpy().tobytes())


def rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(p, c, ids, dtype, lin=None):
    """logits of the last position; p: name -> tensor (any dtype; computed in `dtype`); lin(x, name): x times the
    named matrix transposed (default x @ W.T; the ONNX export passes its pre-transposed float32 parameters)."""
    n, H = ids.shape[0], c["hidden_size"]
    nh, nkv, hd, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    W = lambda k: p[k].to(dtype)
    lin = lin or (lambda x, k: x @ W(k).T)
    h = W("model.embed_tokens.weight")[ids]
    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=dtype) / hd))
    freqs = torch.arange(n, dtype=dtype)[:, None] * inv[None, :]  # (torch.outer: 1.13 exports it as an invalid MatMul)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((n, n), float("-inf"), dtype=dtype).triu(1)
    for L in range(c["num_hidden_layers"]):
        pre = "model.layers.%d." % L
        x = rms(h, W(pre + "input_layernorm.weight"), eps)
        q = lin(x, pre + "self_attn.q_proj.weight").view(n, nh, hd).transpose(0, 1)
        k = lin(x, pre + "self_attn.k_proj.weight").view(n, nkv, hd).transpose(0, 1)
        v = lin(x, pre + "self_attn.v_proj.weight").view(n, nkv, hd).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(nh // nkv, dim=0)
        v = v.repeat_interleave(nh // nkv, dim=0)
        s = q @ k.transpose(1, 2) * hd ** -0.5 + mask
        o = (torch.softmax(s, dim=-1) @ v).transpose(0, 1).reshape(n, nh * hd)
        h = h + lin(o, pre + "self_attn.o_proj.weight")
        x = rms(h, W(pre + "post_attention_layernorm.weight"), eps)
        f = torch.nn.functional.silu(lin(x, pre + "mlp.gate_proj.weight")) * lin(x, pre + "mlp.up_proj.weight")
        h = h + lin(f, pre + "mlp.down_proj.weight")
    out = rms(h[-1:], W("model.norm.weight"), eps)
    return lin(out, "model.embed_tokens.weight")[0]


class Onnx(torch.nn.Module):
    """The same forward in float32 with the weights as parameters: torch.onnx writes parameters as initializers, and
    as external data (one file per tensor, named after it, beside the model) when the model passes protobuf's 2 GB
    (the llama1b shape: 4.9 GB). Matrices are kept transposed, the tied head as its own transposed copy of the
    embedding: the initializers constant folding leaves from a traced x @ W.T, without folding's transient copies."""

    def __init__(self, p, c):
        super().__init__()
        self.c, self.names = c, list(p)
        key = lambda k: k.replace(".", "_")  # (parameter names cannot hold dots)
        self.w, self.t = torch.nn.ParameterDict(), torch.nn.ParameterDict()
        for k in self.names:
            v = p[k].to(torch.float32)
            if k.endswith("_proj.weight") or k == "model.embed_tokens.weight":
                self.t[key(k)] = torch.nn.Parameter(v.T.contiguous(), requires_grad=False)
            if not k.endswith("_proj.weight"):
                self.w[key(k)] = torch.nn.Parameter(v, requires_grad=False)
        self.key = key

    def forward(self, ids):
        p = {k: self.w[self.key(k)] for k in self.names if self.key(k) in self.w}
        return forward(p, self.c, ids, torch.float32, lambda x, k: x @ self.t[self.key(k)])


def read_safetensors(path):
    """name -> BF16 tensor of a checkpoint write_safetensors wrote (views of a read-only memory map)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    raw = numpy.memmap(path, dtype=numpy.uint8, mode="r", offset=8 + n)
    p = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # from_numpy of a read-only map: only ever read here
        for k, m in header.items():
            if k == "__metadata__":
                continue
            if m["dtype"] != "BF16":
                raise ValueError("llm_ref.read_safetensors: %s: tensor %s is %s, expected BF16" % (path, k, m["dtype"]))
            a, b = m["data_offsets"]
            p[k] = torch.from_numpy(raw[a:b].view(numpy.int16)).view(torch.bfloat16).view(m["shape"])
    return p


def export_onnx(d, p, c, lengths):
    """d/onnx-<n>/model.onnx for each length n: a folder each, since torch names external data files after the
    tensors, and the folded RoPE / mask constants have one name at every length."""
    model = Onnx(p, c).eval()
    for n in lengths:
        os.makedirs(os.path.join(d, "onnx-%d" % n), exist_ok=True)
        out = os.path.join(d, "onnx-%d" % n, "model.onnx")
        torch.onnx.export(model, (torch.tensor(list(prompt(n).encode())),), out,
                          input_names=["input_ids"], output_names=["logits"], opset_version=14)
        print("llm_ref: %s (%.0f MB)" % (out, os.path.getsize(out) / 2 ** 20), flush=True)


def top5(logits):
    v, i = torch.topk(logits, 5)
    return {"ids": i.tolist(), "logits": v.tolist()}


def main():
    fast_runtime()
    torch.set_num_threads(2)
    d, shape, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    onnx = [int(a) for a in sys.argv[sys.argv.index("--onnx") + 1:] if a.isdigit()] if "--onnx" in sys.argv else []
    os.makedirs(d, exist_ok=True)
    c = dict(SHAPES[shape], architectures=["LlamaForCausalLM"], model_type="llama", hidden_act="silu",
             tie_word_embeddings=True, bos_token_id=256, eos_token_id=257, torch_dtype="bfloat16", attention_bias=False)
    if "--onnx-only" in sys.argv:  # the checkpoint and reference are in d already: only the exports
        with open(os.path.join(d, "config.json")) as f:
            c = json.load(f)
        with torch.no_grad():
            export_onnx(d, read_safetensors(os.path.join(d, "model.safetensors")), c, onnx)
        return
    p = make_params(c, seed)
    write_safetensors(os.path.join(d, "model.safetensors"), p)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    shutil.copy(os.path.join(ROOT, "tests", "fixtures", "modern", "llama-bf16-tied-mqa-headdim-linear-v5", "tokenizer.json"),
                os.path.join(d, "tokenizer.json"))
    ref = {"shape": shape, "seed": seed, "prompts": {}}
    with torch.no_grad():
        for n in (128, 512):
            ids = list(prompt(n).encode())
            ref["prompts"][n] = top5(forward(p, c, torch.tensor(ids), D))
            print("llm_ref: %s n=%d top5 %s" % (shape, n, ref["prompts"][n]), flush=True)
        ids, new, margins = list(prompt(128).encode()), [], []
        for _ in range(GREEDY):
            t = top5(forward(p, c, torch.tensor(ids), D))
            new.append(t["ids"][0])
            margins.append(t["logits"][0] - t["logits"][1])
            ids.append(t["ids"][0])
        ref["greedy128"] = {"ids": new, "margins": margins}
        print("llm_ref: greedy %s margins %s" % (new, margins), flush=True)
        with open(os.path.join(d, "ref.json"), "w") as f:
            json.dump(ref, f, indent=1)
        export_onnx(d, p, c, onnx)


if __name__ == "__main__":
    main()
