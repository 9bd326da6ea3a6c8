// The page's one seeded generator (layer: web; no DOM, Node imports it): mulberry32, a 32-bit state stepped by
// the Weyl constant 0x6d2b79f5 and mixed by two multiply–xorshift rounds. Seeded data only (the guided path's
// random vectors, the attention-family views' inputs and noise): every attention number comes from the module.

/** mulberry32(seed): a function returning the next float in [0, 1) of the sequence seeded by `seed` (taken as uint32). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
