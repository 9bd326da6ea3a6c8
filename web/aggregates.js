// Aggregates over a trace's attention weights (layer: web; pure functions, no DOM, like playground's
// nn.ts): the mean and the max over heads, attention rollout across layers (Abnar & Zuidema 2020), per-head
// entropy and mean attention distance, and a threshold / top-k filter that hides weak links.
// Weights are laid out as the trace stores them: [H, n, m] row-major (head, query, key); sums run in
// float64. Bad shapes throw an Error naming the function and argument ("fn: arg (value) must be …").

function checkShape(fn, weights, H, n, m) {
  for (const [name, v] of [['H', H], ['n', n], ['m', m]]) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`${fn}: ${name} (${v}) must be a positive integer`);
  }
  if (!weights || weights.length !== H * n * m) {
    throw new RangeError(`${fn}: weights length (${weights?.length}) must be H·n·m (${H * n * m})`);
  }
}

/** Mean over heads: [H, n, m] → [n, m]. */
export function meanOverHeads(weights, H, n, m = n) {
  checkShape('meanOverHeads', weights, H, n, m);
  const out = new Float32Array(n * m);
  for (let c = 0; c < n * m; c++) {
    let s = 0;
    for (let hd = 0; hd < H; hd++) s += weights[hd * n * m + c];
    out[c] = s / H;
  }
  return out;
}

/** Max over heads: [H, n, m] → [n, m]. */
export function maxOverHeads(weights, H, n, m = n) {
  checkShape('maxOverHeads', weights, H, n, m);
  const out = new Float32Array(n * m);
  for (let c = 0; c < n * m; c++) {
    let mx = -Infinity;
    for (let hd = 0; hd < H; hd++) if (weights[hd * n * m + c] > mx) mx = weights[hd * n * m + c];
    out[c] = mx;
  }
  return out;
}

/**
 * Attention rollout (Abnar & Zuidema 2020) of self-attention layers, each [H, n, n]: per layer the
 * head mean W, then Â = (W + I) with every row renormalised to sum 1, then R₁ = Â₁, R_l = Â_l · R_{l−1}.
 * Returns [R₁, …, R_L], each [n, n]: R_l[i, j] is how much of token j reaches position i after layer l.
 */
export function rollout(layers, H, n) {
  if (!Array.isArray(layers) || layers.length === 0) {
    throw new RangeError(`rollout: layers (${Array.isArray(layers) ? 0 : typeof layers}) must be a non-empty array of [H, n, n] weights`);
  }
  const out = [];
  let R = null;
  layers.forEach((w, l) => {
    try {
      checkShape('rollout', w, H, n, n);
    } catch (e) {
      throw new RangeError(e.message.replace('rollout: weights', `rollout: layers[${l}]`));
    }
    const A = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let j = 0; j < n; j++) {
        let s = i === j ? 1 : 0;
        for (let hd = 0; hd < H; hd++) s += w[hd * n * n + i * n + j] / H;
        A[i * n + j] = s;
        sum += s;
      }
      for (let j = 0; j < n; j++) A[i * n + j] /= sum; // sum ≥ 1: the identity was added
    }
    if (R) {
      const next = new Float64Array(n * n);
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < n; k++) {
          const a = A[i * n + k];
          if (a === 0) continue;
          for (let j = 0; j < n; j++) next[i * n + j] += a * R[k * n + j];
        }
      }
      R = next;
    } else R = A;
    out.push(Float32Array.from(R));
  });
  return out;
}

/**
 * Per-head entropy in nats, −Σ_j w ln w (0 ln 0 = 0), averaged over the query rows that attend to
 * something (a fully blocked row is skipped): [H, n, m] → Float64Array(H). Uniform over m keys is ln m.
 */
export function headEntropy(weights, H, n, m = n) {
  checkShape('headEntropy', weights, H, n, m);
  return perHead(weights, H, n, m, (w) => (w > 0 ? -w * Math.log(w) : 0));
}

/**
 * Per-head mean attention distance in token positions, Σ_j w_ij·|i − j| averaged over the query rows
 * that attend to something: [H, n, m] → Float64Array(H).
 */
export function headDistance(weights, H, n, m = n) {
  checkShape('headDistance', weights, H, n, m);
  return perHead(weights, H, n, m, (w, i, j) => w * Math.abs(i - j));
}

function perHead(weights, H, n, m, term) {
  const out = new Float64Array(H);
  for (let hd = 0; hd < H; hd++) {
    let total = 0;
    let rows = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      let mass = 0;
      for (let j = 0; j < m; j++) {
        const w = weights[hd * n * m + i * m + j];
        mass += w;
        s += term(w, i, j);
      }
      if (mass > 0) {
        total += s;
        rows += 1;
      }
    }
    out[hd] = rows ? total / rows : 0;
  }
  return out;
}

/**
 * Hides weak links of a [rows, cols] map: a cell is kept when it is ≥ threshold and (topK > 0) among
 * the topK largest of its row (ties: the lower key index first); hidden cells become 0.
 * Returns { values: Float32Array, hidden: number of non-zero cells that were hidden }.
 */
export function filterLinks(values, rows, cols, { threshold = 0, topK = 0 } = {}) {
  checkShape('filterLinks', values, 1, rows, cols);
  if (!Number.isFinite(threshold)) throw new RangeError(`filterLinks: threshold (${threshold}) must be a finite number`);
  if (!Number.isInteger(topK) || topK < 0) throw new RangeError(`filterLinks: topK (${topK}) must be a non-negative integer`);
  const out = Float32Array.from(values);
  let hidden = 0;
  const order = [...Array(cols).keys()];
  for (let i = 0; i < rows; i++) {
    const row = out.subarray(i * cols, (i + 1) * cols);
    const keep = new Uint8Array(cols).fill(1);
    if (topK > 0 && topK < cols) {
      order.sort((a, b) => (row[b] - row[a]) || (a - b));
      for (let r = topK; r < cols; r++) keep[order[r]] = 0;
      order.sort((a, b) => a - b);
    }
    for (let j = 0; j < cols; j++) {
      if (keep[j] && row[j] >= threshold) continue;
      if (row[j] !== 0) hidden += 1;
      row[j] = 0;
    }
  }
  return { values: out, hidden };
}
