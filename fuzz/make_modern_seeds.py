#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_hf_shards, fuzz_decoder_config and fuzz_tokenizer_modern (issue 31; h31b).

Run from the repository root: python3 fuzz/make_modern_seeds.py. Every seed stays under fuzz.sh's -max_len (4096).
fuzz_hf_shards: tiny decoder checkpoints (hidden 2, head_dim 2, 2 query heads over 1 K/V head, 1 layer) over the harness
tokenizer's ids (fuzz_common.h small_bpe: 256 bytes + 38 merges = 294 ids), in the input layout that
fuzz_hf_shards.cpp documents; fuzz_decoder_config: tests/fixtures/modern's configs and variants; fuzz_tokenizer_modern:
the four modes of fuzz_tokenizer_modern.cpp.
"""
import glob
import json
import os
import random
import struct

random.seed(31)
OUT = 'fuzz/corpus'
V, D, H, KV, HD, I = 294, 2, 2, 1, 2, 2


def bf16(values):
    return b''.join(struct.pack('<f', v)[2:] for v in values)


def safetensors(tensors, dtype='BF16'):
    header, data = {}, b''
    for name, shape in tensors:
        n = 1
        for s in shape:
            n *= s
        vals = [1.0 if name.endswith('norm.weight') else random.uniform(-0.5, 0.5) for _ in range(n)]
        raw = bf16(vals) if dtype == 'BF16' else struct.pack(f'<{n}e', *vals) if dtype == 'F16' else struct.pack(f'<{n}f', *vals)
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    return struct.pack('<Q', len(h)) + h + data


def layer_tensors(kind, layer=0):
    p = f'model.layers.{layer}.'
    t = [(p + 'input_layernorm.weight', [D]), (p + 'post_attention_layernorm.weight', [D]),
         (p + 'self_attn.o_proj.weight', [D, H * HD]), (p + 'mlp.down_proj.weight', [D, I])]
    if kind == 'phi3':
        t += [(p + 'self_attn.qkv_proj.weight', [(H + 2 * KV) * HD, D]), (p + 'mlp.gate_up_proj.weight', [2 * I, D])]
    else:
        t += [(p + 'self_attn.q_proj.weight', [H * HD, D]), (p + 'self_attn.k_proj.weight', [KV * HD, D]),
              (p + 'self_attn.v_proj.weight', [KV * HD, D]), (p + 'mlp.gate_proj.weight', [I, D]),
              (p + 'mlp.up_proj.weight', [I, D])]
    if kind == 'qwen3':
        t += [(p + 'self_attn.q_norm.weight', [HD]), (p + 'self_attn.k_norm.weight', [HD])]
    if kind == 'gemma2':
        t += [(p + 'pre_feedforward_layernorm.weight', [D]), (p + 'post_feedforward_layernorm.weight', [D])]
    return t


def config(kind, **extra):
    c = {'model_type': kind, 'vocab_size': V, 'hidden_size': D, 'intermediate_size': I, 'num_hidden_layers': 1,
         'num_attention_heads': H, 'num_key_value_heads': KV, 'head_dim': HD, 'max_position_embeddings': 16,
         'tie_word_embeddings': True, 'eos_token_id': 257}
    if kind == 'gemma2':
        c.update(query_pre_attn_scalar=2, sliding_window=3, attn_logit_softcapping=5.0, final_logit_softcapping=3.0)
    c.update(extra)
    return json.dumps(c, separators=(',', ':')).encode()


def shards_input(cfg, files, flags, stream=False):
    out = bytes([flags]) + struct.pack('<H', len(cfg) | (0x8000 if stream else 0)) + cfg
    for f in files[:-1]:
        out += struct.pack('<H', len(f)) + f
    return out + files[-1]


def write(target, name, data):
    assert len(data) <= 4096, (target, name, len(data))
    with open(os.path.join(OUT, target, name), 'wb') as f:
        f.write(data)


# ---- fuzz_hf_shards
for kind, dtype in [('llama', 'BF16'), ('qwen3', 'F16'), ('gemma2', 'BF16'), ('phi3', 'BF16'), ('mistral', 'BF16')]:
    base = [('model.embed_tokens.weight', [V, D]), ('model.norm.weight', [D])] + layer_tensors(kind)
    cfg = config(kind)
    one = safetensors(base, dtype)
    write('fuzz_hf_shards', f'{kind}_{dtype.lower()}_1shard', shards_input(cfg, [one], 0))
    half = len(base) // 2
    a, b = safetensors(base[:half], dtype), safetensors(base[half:], dtype)
    write('fuzz_hf_shards', f'{kind}_{dtype.lower()}_2shards_reverse', shards_input(cfg, [a, b], 1 | 4))
    write('fuzz_hf_shards', f'{kind}_{dtype.lower()}_2shards_chunk5', shards_input(cfg, [b, a], 1 | 4 | (5 << 3)))
    if kind == 'llama':
        third = len(base) // 3
        parts = [safetensors(base[:third], dtype), safetensors(base[third:2 * third], dtype), safetensors(base[2 * third:], dtype)]
        write('fuzz_hf_shards', 'llama_3shards', shards_input(cfg, parts, 2 | 4 | (3 << 3)))
        dup = safetensors(base[:half + 1], dtype)  # one tensor in two shards
        write('fuzz_hf_shards', 'llama_tensor_in_two_shards', shards_input(cfg, [dup, b], 1 | 4))
        write('fuzz_hf_shards', 'llama_missing_tensor', shards_input(cfg, [a], 0))
        write('fuzz_hf_shards', 'llama_rope_llama3', shards_input(config(kind, rope_scaling={'rope_type': 'llama3', 'factor': 8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0, 'original_max_position_embeddings': 8}), [a, b], 1 | 4))

# ---- fuzz_decoder_config
for path in sorted(glob.glob('tests/fixtures/modern/*/config.json')):
    write('fuzz_decoder_config', os.path.basename(os.path.dirname(path)), open(path, 'rb').read())
variants = {
    'llama_yarn': config('llama', rope_scaling={'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 8, 'beta_fast': 32, 'beta_slow': 1}),
    'llama_dynamic': config('llama', rope_scaling={'type': 'dynamic', 'factor': 2.0}),
    'llama_v5_rope_parameters': config('llama', rope_parameters={'rope_type': 'linear', 'factor': 2.0, 'rope_theta': 10000.0}),
    'llama_longrope': config('llama', rope_scaling={'rope_type': 'longrope', 'factor': 2.0}),
    'qwen2_window': config('qwen2', use_sliding_window=True, sliding_window=4, max_window_layers=0),
    'gemma3_local': config('gemma3_text', sliding_window=3, rope_local_base_freq=10000.0, sliding_window_pattern=2, num_hidden_layers=3),
    'phi3_partial': config('phi3', partial_rotary_factor=0.5, tie_word_embeddings=False),
    'gemma_hidden_act': config('gemma', hidden_activation='gelu_pytorch_tanh'),
}
for name, data in variants.items():
    write('fuzz_decoder_config', name, data)

# ---- fuzz_tokenizer_modern (byte 0: mode; byte 1: flags; then the part, 0x00, the text)
LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
TEXT = "Hello world, it's 12345 \u4e2d\u6587 caf\u00e9 \U0001F600\n\n  x".encode()
seeds = {
    'raw_fixture': (0, 0, open('tests/fixtures/modern/llama-f32-untied-gqa-llama3/tokenizer.json', 'rb').read()),
    'split_llama3': (1, 0, LLAMA3.encode()),
    'split_llama3_nfc_ignore_merges': (1, 6, LLAMA3.encode()),
    'split_qwen2': (1, 4, QWEN2.encode()),
    'split_gpt2': (1, 0, GPT2.encode()),
    'norm_nfc_prepend': (2, 1, json.dumps({'type': 'Sequence', 'normalizers': [{'type': 'NFC'}, {'type': 'Prepend', 'prepend': '\u2581'}, {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '\u2581'}]}).encode()),
    'norm_nfkc_strip': (2, 1, json.dumps({'type': 'Sequence', 'normalizers': [{'type': 'NFKC'}, {'type': 'Strip', 'strip_left': True, 'strip_right': True}]}).encode()),
    'norm_replace_regex': (2, 0, json.dumps({'type': 'Replace', 'pattern': {'Regex': ' {2,}'}, 'content': '\u2581'}).encode()),
    'norm_lowercase': (2, 3, json.dumps({'type': 'Lowercase'}).encode()),
    'post_bos_eos': (3, 1, json.dumps({'type': 'TemplateProcessing', 'single': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': '</s>', 'type_id': 0}}], 'pair': [], 'special_tokens': {'<s>': {'id': '<s>', 'ids': [1], 'tokens': ['<s>']}, '</s>': {'id': '</s>', 'ids': [2], 'tokens': ['</s>']}}}).encode()),
    'post_sequence': (3, 1, json.dumps({'type': 'Sequence', 'processors': [{'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False}, {'type': 'TemplateProcessing', 'single': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}], 'pair': [], 'special_tokens': {'<s>': {'id': '<s>', 'ids': [1], 'tokens': ['<s>']}}}]}).encode()),
    'post_unknown_id': (3, 0, json.dumps({'type': 'TemplateProcessing', 'single': [{'SpecialToken': {'id': '<x>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}], 'special_tokens': {'<x>': {'id': '<x>', 'ids': [99999], 'tokens': ['<x>']}}}).encode()),
}
for name, (mode, flags, part) in seeds.items():
    write('fuzz_tokenizer_modern', name, bytes([mode, flags]) + part + b'\0' + TEXT)
print('seeds written')

# ---- fuzz_hf_shards with streamWeights (the length field's top bit; written last so that the seeds above keep their
# bytes): 2-layer checkpoints, each layer read into layer 0's buffer while the model runs
for kind, dtype in [('llama', 'BF16'), ('qwen3', 'F16'), ('phi3', 'BF16')]:
    base = [('model.embed_tokens.weight', [V, D]), ('model.norm.weight', [D])] + layer_tensors(kind, 0) + layer_tensors(kind, 1)
    cfg = config(kind, num_hidden_layers=2)
    write('fuzz_hf_shards', f'{kind}_{dtype.lower()}_2layers_stream', shards_input(cfg, [safetensors(base, dtype)], 0, stream=True))
    half = len(base) // 2
    a, b = safetensors(base[:half], dtype), safetensors(base[half:], dtype)
    write('fuzz_hf_shards', f'{kind}_{dtype.lower()}_2layers_2shards_stream', shards_input(cfg, [a, b], 1 | 4 | (7 << 3), stream=True))
