/** The bootstrap's multiplicity matrix: how often each report is drawn in each resample. */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import { drawMultiplicityRows } from '../bootstrap-kernel';
import { AnalyticsError } from '../errors';
import { checkCounts, DEFAULT_BOOTSTRAP_SEED } from './options';

/**
 * A B × n multiplicity matrix (row b = resample b). Int32 as {@link bootstrapMultiplicities}
 * draws it; u8 where every entry is at most 255 (a quarter of the memory, the same numbers).
 */
export type MultiplicityMatrix = Int32Array | Uint8Array;

/**
 * Bootstrap multiplicity matrix, row-major B × n: row b holds how often each report was drawn
 * in resample b. Generator: pure-rand `xoroshiro128plus(seed)`; each resample draws n indices
 * uniformly from 0..n−1 with `unsafeUniformIntDistribution` (rejection sampling, unbiased),
 * rows in order. The matrix depends only on (n, B, seed): every run of a dataset gets the same
 * resamples (paired) and the same seed gives bit-identical intervals. O(B·n) time and memory.
 *
 * @throws AnalyticsError BAD_INPUT for n < 1, B < 1 or a non-integer seed.
 */
export function bootstrapMultiplicities(n: number, B: number, seed: number = DEFAULT_BOOTSTRAP_SEED): Int32Array {
  checkCounts(n, B);
  if (!Number.isSafeInteger(seed)) throw new AnalyticsError('BAD_INPUT', `seed must be an integer, got ${seed}`);
  const w = new Int32Array(B * n);
  if (n - 1 > 0xffffffff) {
    const rng = xoroshiro128plus(seed);
    for (let b = 0; b < B; b++) {
      const off = b * n;
      for (let k = 0; k < n; k++) w[off + unsafeUniformIntDistribution(0, n - 1, rng)]!++;
    }
    return w;
  }
  multiplicityRows(n, seed).fill(w, 0, B);
  return w;
}

/**
 * The rows of bootstrapMultiplicities(n, ·, seed) in order, drawn on demand: `fill(w, from, to)`
 * writes rows from..to − 1 of the matrix into `w` (B × n, zero where written), continuing the
 * generator where the previous call stopped, so rows drawn in several calls (`from` = the
 * previous `to`) are the matrix drawn at once, bit for bit. For n − 1 ≤ 2^32 − 1. The rows are
 * drawn by the WebAssembly module where it runs (`kernel` false: in JavaScript), the same numbers.
 */
export function multiplicityRows(n: number, seed: number, kernel = true): { fill(w: Int32Array, from: number, to: number): void } {
  // pure-rand 7's xoroshiro128plus(seed).unsafeNext() and unsafeUniformIntDistribution(0, n − 1)
  // inlined (same state words, same rejection threshold), which draws the same matrix without a
  // call and an object per draw; a unit test compares the two bit for bit.
  const state = [-1, ~seed, seed | 0, 0];
  const maxAllowed = n > 2 ? ~~(0x100000000 / n) * n : 0x100000000;
  return {
    fill(w, from, to) {
      // The same generator in the WebAssembly module, 1.7 times as fast at 1,252 reports and
      // 2.3–2.9 times at 20,000; below, where it is missing.
      if (kernel && drawMultiplicityRows(n, state, w, from, to)) return;
      let s01 = state[0]!;
      let s00 = state[1]!;
      let s11 = state[2]!;
      let s10 = state[3]!;
      for (let b = from; b < to; b++) {
        const off = b * n;
        for (let k = 0; k < n; k++) {
          let v: number;
          do {
            const out = (s00 + s10) | 0;
            const a0 = s10 ^ s00;
            const a1 = s11 ^ s01;
            const t00 = s00;
            const t01 = s01;
            s00 = (t00 << 24) ^ (t01 >>> 8) ^ a0 ^ (a0 << 16);
            s01 = (t01 << 24) ^ (t00 >>> 8) ^ a1 ^ ((a1 << 16) | (a0 >>> 16));
            s10 = (a1 << 5) ^ (a0 >>> 27);
            s11 = (a0 << 5) ^ (a1 >>> 27);
            v = out + 0x80000000;
          } while (v >= maxAllowed);
          // v < 2^32, so the float quotient is within 2^-21 / n of v / n and its floor is exact:
          // this is v % n without the slow float remainder.
          w[off + v - Math.floor(v / n) * n]!++;
        }
      }
      state[0] = s01;
      state[1] = s00;
      state[2] = s11;
      state[3] = s10;
    },
  };
}
