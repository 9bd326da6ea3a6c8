// beam.test.js: generate(source, { numBeams }) against a float64 reference of Hugging Face's beam search
// (tests/fixtures/encdec/generate_beam.py: GenerationMixin._beam_search, BeamSearchScorer.process / finalize,
// BeamHypotheses.add / is_done of transformers v4.36-v4.49) over the random T5, mT5, Flan-T5, BART, mBART and Marian
// checkpoints of tests/fixtures/encdec, with num_beams 2 and 4, length_penalty 0.6 / 1.0 / 2.0 and early_stopping
// false / true / "never" given through generation_config.json. The ids must be equal and the returned score (the
// hypothesis' summed log-probabilities / generated_len^length_penalty, Hugging Face's sequences_scores) within
// 2e-4 + 1e-4 relative (float32 / F16 / BF16 weights against float64; the reference's closest top-k decision is
// 3.5e-4 apart, recorded as `margin`).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { createAttnScope } from 'attnscope';
import { SIMD } from './helpers.js';

const as = await createAttnScope({ simd: SIMD, threads: 1 });
const DIR = new URL('../fixtures/encdec/', import.meta.url);
const text = (p) => readFileSync(new URL(p, DIR), 'utf8');
const doc = JSON.parse(text('beam_expected.json'));

function generationConfig(name, lengthPenalty, earlyStopping) {
  const own = existsSync(new URL(`${name}/generation_config.json`, DIR)) ? JSON.parse(text(`${name}/generation_config.json`)) : {};
  return JSON.stringify({ ...own, length_penalty: lengthPenalty, early_stopping: earlyStopping });
}

test('generate numBeams: ids and scores equal the float64 reference of Hugging Face\'s beam search (T5, BART, Marian; 2 and 4 beams; length penalties 0.6, 1, 2; early stopping false, true, "never")', async (t) => {
  const groups = new Map();
  for (const c of doc.cases) {
    const key = `${c.model}|${c.lengthPenalty}|${JSON.stringify(c.earlyStopping)}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c);
  }
  let n = 0; let ended = 0; let maxScoreErr = 0;
  const types = new Set();
  for (const cases of groups.values()) {
    const { model: name, lengthPenalty, earlyStopping } = cases[0];
    const model = await as.loadPretrained({
      config: text(`${name}/config.json`),
      weights: readFileSync(new URL(`${name}/model.safetensors`, DIR)),
      tokenizer: text(`${name}/tokenizer.json`),
      generationConfig: generationConfig(name, lengthPenalty, earlyStopping),
    });
    try {
      types.add(JSON.parse(text(`${name}/config.json`)).model_type);
      for (const c of cases) {
        const what = `${name} ${JSON.stringify(c.source)} numBeams ${c.numBeams} length_penalty ${lengthPenalty} early_stopping ${JSON.stringify(earlyStopping)}`;
        const g = model.generate(c.source, { maxNewTokens: doc.maxNewTokens, numBeams: c.numBeams });
        assert.deepEqual(Array.from(g.ids), c.ids, `${what}: ids`);
        assert.equal(typeof g.score, 'number', `${what}: score`);
        const err = Math.abs(g.score - c.score);
        maxScoreErr = Math.max(maxScoreErr, err);
        assert.ok(err <= 2e-4 + 1e-4 * Math.abs(c.score), `${what}: score ${g.score} != ${c.score}`);
        n++;
        if (c.endedWithEos) ended++;
      }
    } finally {
      model.delete();
    }
  }
  t.diagnostic(`${n} beam searches (${ended} ended with the end token) over ${[...types].sort().join(', ')}; max score error ${maxScoreErr.toExponential(2)}`);
  assert.equal(n, doc.cases.length);
  assert.ok(n >= 300 && ended >= 50 && n - ended >= 50, 'both kinds of ending are covered');
  for (const type of ['t5', 'mt5', 'bart', 'mbart', 'marian']) assert.ok(types.has(type), type);
});

test('generate: greedy results carry no score; beam results do', async () => {
  const model = await as.loadPretrained({
    config: text('marian-f32/config.json'),
    weights: readFileSync(new URL('marian-f32/model.safetensors', DIR)),
    tokenizer: text('marian-f32/tokenizer.json'),
  });
  try {
    assert.equal('score' in model.generate('Hello world', { maxNewTokens: 4 }), false);
    assert.equal(typeof model.generate('Hello world', { maxNewTokens: 4, numBeams: 2 }).score, 'number');
  } finally {
    model.delete();
  }
});
