/**
 * Replicate matrices built as updates of a base matrix equal `pairwiseMatrix` of the same
 * scores entry for entry: ties, near-ties within the score tolerance, scores tied in the base,
 * missing and infinite scores, zero weights, and bases near to and far from the profiles.
 */
import fc from 'fast-check';
import { pairwiseMatrix } from '../../../src/analytics/kemeny';
import { PairwiseUpdates } from '../../../src/analytics/pairwise-updates';

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

describe('PairwiseUpdates', () => {
  it('equals pairwiseMatrix on every profile', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.constantFrom('coarse', 'near-ties', 'continuous', 'missing', 'infinite'),
        fc.constantFrom('mean', 'coarse', 'reversed'),
        fc.constantFrom('unit', 'integer', 'zero'),
        (n, V, seed, kind, baseKind, weightKind) => {
          const rnd = lcg(seed);
          const value = (): number => {
            switch (kind) {
              case 'coarse':
                return Math.floor(rnd() * 4) / 4;
              case 'near-ties':
                return 0.5 + Math.floor(rnd() * 3) * 1e-13 + (rnd() < 0.5 ? 0.1 : 0);
              case 'missing':
                return rnd() < 0.1 ? Number.NaN : Math.floor(rnd() * 10);
              case 'infinite':
                return rnd() < 0.05 ? Infinity : rnd();
              default:
                return rnd();
            }
          };
          const profiles = Array.from({ length: 5 }, () => Float64Array.from({ length: V * n }, value));
          const base = new Float64Array(V * n);
          for (let k = 0; k < base.length; k++) {
            const xs = profiles.map((p) => p[k]!).filter((x) => !Number.isNaN(x));
            const mean = xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
            base[k] = baseKind === 'mean' ? mean : baseKind === 'coarse' ? Math.round(2 * mean) : -mean;
          }
          const weights = Float64Array.from({ length: V }, (_, v) => (weightKind === 'unit' ? 1 : weightKind === 'integer' ? 1 + (v % 3) : v % 2));
          const updates = new PairwiseUpdates(n, V, weights, base);
          const w = new Float64Array(n * n);
          for (const p of profiles) {
            updates.matrix(p, w);
            const scores = Array.from({ length: V }, (_, v) => p.subarray(v * n, (v + 1) * n));
            expect(Array.from(w)).toEqual(Array.from(pairwiseMatrix(scores, { voterWeights: weights }).w));
          }
        },
      ),
      { numRuns: 400, seed: 11 },
    );
  });
});
