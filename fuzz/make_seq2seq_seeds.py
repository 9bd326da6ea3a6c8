#!/usr/bin/env python3
"""Writes fuzz_seq2seq_config's seed corpus: tests/fixtures/encdec's config.json files and variants of them
(relative-bias edges, a GQA-less BART with other activations, scaled embeddings, untied heads, odd sizes).

Run from the repository root: python3 fuzz/make_seq2seq_seeds.py. Every seed stays under fuzz.sh's -max_len (4096).
"""
import glob
import json
import os

OUT = 'fuzz/corpus/fuzz_seq2seq_config'
os.makedirs(OUT, exist_ok=True)
seeds = {}
for path in sorted(glob.glob('tests/fixtures/encdec/*/config.json')):
    with open(path) as f:
        seeds[os.path.basename(os.path.dirname(path))] = json.load(f)
t5 = seeds['t5-f32-relu-untied']
bart = seeds['bart-f16']
variants = {
    't5_buckets_1': dict(t5, relative_attention_num_buckets=1),
    't5_buckets_2_distance_1': dict(t5, relative_attention_num_buckets=2, relative_attention_max_distance=1),
    't5_distance_0': dict(t5, relative_attention_max_distance=0),
    't5_gated_gelu': dict(t5, feed_forward_proj='gated-gelu'),
    't5_decoder_layers_0': dict(t5, num_decoder_layers=0),
    't5_kv_64': dict(t5, d_kv=64),
    'bart_gelu_new_scaled': dict(bart, activation_function='gelu_new', scale_embedding=True),
    'bart_untied': dict(bart, tie_word_embeddings=False),
    'bart_heads_3': dict(bart, encoder_attention_heads=3, decoder_attention_heads=3),
    'bart_layers_0': dict(bart, encoder_layers=0),
}
for name, c in {**seeds, **variants}.items():
    text = json.dumps(c, indent=1)
    assert len(text) < 4096, name
    with open(os.path.join(OUT, name), 'w') as f:
        f.write(text)
print('make_seq2seq_seeds: %d seeds in %s' % (len(seeds) + len(variants), OUT))
