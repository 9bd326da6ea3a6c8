#!/usr/bin/python3
"""gpt2_onnx.py: the GPT-2-small checkpoint of bench/gpt2_bench.mjs as ONNX models for onnxruntime-web.

    /usr/bin/python3 bench/gpt2_onnx.py [n ...]      (default: 64 256; gpt2_bench.mjs runs it when a file is missing)

Reads build/bench/gpt2-small/{config.json, model.safetensors} (written by gpt2_bench.mjs) and, for each sequence
length n, writes build/bench/gpt2-small/model-<n>.onnx with torch.onnx.export (Debian's python3-torch, opset 14):
input_ids int64 [n] -> last_hidden_state float32 [n, 768] (after ln_f), logits float32 [50257] (the last position,
what a next-token head computes, as attnscope's run does) and attentions float32 [12, 12, n, n] (every layer's
weights). The forward is tests/fixtures/hf/generate.py's gpt2_forward, the independent re-implementation of Hugging
Face's GPT2LMHeadModel that the checkpoint fixtures are checked against. One model per length: the forward reads n
from the ids' length, which tracing turns into a constant (so ORT also gets static shapes). Never committed.
"""
import importlib.util
import json
import os
import sys

import warnings

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.path.join(ROOT, "build", "bench", "gpt2-small")


def load_generate():
    spec = importlib.util.spec_from_file_location("hf_generate", os.path.join(ROOT, "tests", "fixtures", "hf", "generate.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Gpt2(torch.nn.Module):
    def __init__(self, gen, params, cfg):
        super().__init__()
        self.gen, self.p, self.cfg = gen, params, cfg

    def forward(self, ids):
        out = self.gen.gpt2_forward(self.p, self.cfg, ids, last_logits_only=True)
        return out["last_hidden_state"], out["logits"], torch.stack(out["attentions"])


def main():
    torch.set_num_threads(2)
    # gpt2_forward reads n = len(ids): tracing warns that it becomes a constant, which is why there is one model per n
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    lengths = [int(a) for a in sys.argv[1:]] or [64, 256]
    gen = load_generate()
    with open(os.path.join(DIR, "config.json")) as f:
        cfg = json.load(f)
    tensors = gen.read_safetensors(os.path.join(DIR, "model.safetensors"))
    params = {name[len("transformer."):] if name.startswith("transformer.") else name: torch.from_numpy(a.copy())
              for name, (dtype, shape, a) in tensors.items() if dtype == "F32"}
    model = Gpt2(gen, params, cfg).eval()
    for n in lengths:
        ids = torch.arange(n, dtype=torch.long) % cfg["vocab_size"]
        out = os.path.join(DIR, "model-%d.onnx" % n)
        with torch.no_grad():
            torch.onnx.export(model, (ids,), out, input_names=["input_ids"],
                              output_names=["last_hidden_state", "logits", "attentions"], opset_version=14)
        print("gpt2_onnx: %s (%.0f MB)" % (os.path.relpath(out, ROOT), os.path.getsize(out) / 2**20))


if __name__ == "__main__":
    main()
