import fc from 'fast-check';
import {
  bootstrapGrid,
  bootstrapMultiplicities,
  estimateFrom,
  gridPairedDifference,
  groupedMeanReplicates,
  pairedDifference,
  percentileInterval,
  quantileType7,
} from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import { groupedMean } from '../../../src/analytics/metrics';

/** Brute force: call the metric once per replicate with that replicate's weights. */
function bruteReplicates(groups: ArrayLike<number>, items: ArrayLike<number>, W: Int32Array, B: number): Float64Array {
  const n = groups.length;
  const out = new Float64Array(B);
  for (let b = 0; b < B; b++) out[b] = groupedMean(groups, items, W.subarray(b * n, (b + 1) * n));
  return out;
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('bootstrapMultiplicities', () => {
  it('rows sum to n, depend only on (n, B, seed)', () => {
    const W = bootstrapMultiplicities(50, 20, 7);
    for (let b = 0; b < 20; b++) expect(W.subarray(b * 50, (b + 1) * 50).reduce((a, x) => a + x, 0)).toBe(50);
    expect(bootstrapMultiplicities(50, 20, 7)).toEqual(W);
    expect(bootstrapMultiplicities(50, 20, 8)).not.toEqual(W);
    expect(() => bootstrapMultiplicities(0, 1)).toThrow(AnalyticsError);
    expect(() => bootstrapMultiplicities(3, 1, 1.5)).toThrow(AnalyticsError);
  });

  it('draws each report with mean multiplicity 1', () => {
    const n = 20;
    const B = 2000;
    const W = bootstrapMultiplicities(n, B, 42);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let b = 0; b < B; b++) s += W[b * n + i]!;
      expect(Math.abs(s / B - 1)).toBeLessThan(0.1);
    }
  });
});

describe('quantileType7 / percentileInterval', () => {
  it('interpolates linearly between order statistics (R type 7)', () => {
    const x = [1, 2, 3, 4];
    expect(quantileType7(x, 0)).toBe(1);
    expect(quantileType7(x, 1)).toBe(4);
    expect(quantileType7(x, 0.5)).toBe(2.5);
    expect(quantileType7(x, 0.25)).toBe(1.75);
    expect(quantileType7([5], 0.3)).toBe(5);
    expect(() => quantileType7([], 0.5)).toThrow(AnalyticsError);
    expect(() => quantileType7(x, 1.5)).toThrow(AnalyticsError);
  });

  it('drops non-finite replicates', () => {
    const r = percentileInterval([NaN, 1, 2, 3, NaN], 0.5);
    expect(r).toEqual({ low: 1.5, high: 2.5, resamples: 3 });
    expect(percentileInterval([NaN], 0.9).resamples).toBe(0);
    expect(() => percentileInterval([1], 1)).toThrow(AnalyticsError);
    expect(estimateFrom(0.3, [0.1, 0.2, 0.4], 0.5)).toEqual({ value: 0.3, ciLow: 0.15000000000000002, ciHigh: 0.30000000000000004, confidence: 0.5, resamples: 3 });
  });
});

describe('groupedMeanReplicates', () => {
  it('equals the brute-force per-replicate metric (binary, packed path)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer(),
        (n, G, R, seed) => {
          const rnd = lcg(seed);
          const groups = Array.from({ length: n }, () => Math.floor(rnd() * (G + 1)) - 1);
          const runs = Array.from({ length: R }, () => Float64Array.from({ length: n }, () => (rnd() < 0.6 ? 1 : 0)));
          const B = 13;
          const W = bootstrapMultiplicities(n, B, seed);
          const reps = groupedMeanReplicates(groups, runs, W, B);
          runs.forEach((x, r) => {
            const brute = bruteReplicates(groups, x, W, B);
            for (let b = 0; b < B; b++) {
              const got = reps[r * B + b]!;
              if (Number.isNaN(brute[b]!)) expect(got).toBeNaN();
              else expect(Math.abs(got - brute[b]!)).toBeLessThan(1e-12);
            }
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('equals the brute force for fractional item scores (similarities)', () => {
    const rnd = lcg(3);
    const n = 30;
    const groups = Array.from({ length: n }, (_, i) => (i % 7 === 0 ? -1 : 0));
    const runs = [Float64Array.from({ length: n }, () => rnd()), Float64Array.from({ length: n }, () => (rnd() < 0.5 ? 1 : 0))];
    const W = bootstrapMultiplicities(n, 25, 1);
    const reps = groupedMeanReplicates(groups, runs, W, 25);
    runs.forEach((x, r) => {
      const brute = bruteReplicates(groups, x, W, 25);
      for (let b = 0; b < 25; b++) expect(reps[r * 25 + b]).toBeCloseTo(brute[b]!, 12);
    });
  });

  it('stays exact when few lanes fit (large n)', () => {
    const n = 300000;
    const groups = new Int32Array(n).map((_, i) => i % 3);
    const runs = [0, 1, 2].map((k) => new Float64Array(n).map((_, i) => ((i + k) % 5 === 0 ? 1 : 0)));
    const W = bootstrapMultiplicities(n, 2, 5);
    const reps = groupedMeanReplicates(groups, runs, W, 2);
    runs.forEach((x, r) => {
      const brute = bruteReplicates(groups, x, W, 2);
      for (let b = 0; b < 2; b++) expect(Math.abs(reps[r * 2 + b]! - brute[b]!)).toBeLessThan(1e-12);
    });
  });

  it('rejects non-finite item scores of annotated reports and bad shapes', () => {
    const W = bootstrapMultiplicities(2, 3, 1);
    expect(() => groupedMeanReplicates([0, 0], [[1, NaN]], W, 3)).toThrow(AnalyticsError);
    expect(() => groupedMeanReplicates([0, -1], [[1, NaN]], W, 3)).not.toThrow();
    expect(() => groupedMeanReplicates([0, 0], [[1]], W, 3)).toThrow(AnalyticsError);
    expect(() => groupedMeanReplicates([0, 0], [[1, 1]], W, 4)).toThrow(AnalyticsError);
  });
});

function syntheticGrid(seed: number, n = 60, R = 5) {
  const rnd = lcg(seed);
  const variables = [
    { key: 'cat3', groups: Int32Array.from({ length: n }, () => Math.floor(rnd() * 3)) },
    { key: 'bin', groups: Int32Array.from({ length: n }, () => (rnd() < 0.1 ? -1 : Math.floor(rnd() * 2))), weight: 2 },
    { key: 'num', groups: Int32Array.from({ length: n }, () => (rnd() < 0.2 ? -1 : 0)) },
    { key: 'text', groups: new Int32Array(n) },
  ];
  const runs = Array.from({ length: R }, (_, r) => ({
    id: `run${r}`,
    items: variables.map((v) =>
      Float64Array.from({ length: n }, (_, i) => {
        if (v.groups[i]! < 0) return NaN;
        return v.key === 'text' ? rnd() : rnd() < 0.5 + 0.08 * r ? 1 : 0;
      }),
    ),
  }));
  return { variables, runs };
}

describe('bootstrapGrid', () => {
  it('gives bit-identical results for the same seed', () => {
    const { variables, runs } = syntheticGrid(1);
    const a = bootstrapGrid({ variables, runs, resamples: 200, seed: 11 });
    const b = bootstrapGrid({ variables, runs, resamples: 200, seed: 11 });
    expect(Buffer.from(a.replicates.buffer).equals(Buffer.from(b.replicates.buffer))).toBe(true);
    expect(a.perVariable).toEqual(b.perVariable);
    expect(a.macro).toEqual(b.macro);
    const c = bootstrapGrid({ variables, runs, resamples: 200, seed: 12 });
    expect(c.macro).not.toEqual(a.macro);
  });

  it('point estimates are the full-sample values, not replicate means', () => {
    const { variables, runs } = syntheticGrid(2);
    const g = bootstrapGrid({ variables, runs, resamples: 100, seed: 3 });
    runs.forEach((run, r) => {
      variables.forEach((v, k) => {
        expect(g.perVariable[r]![k]!.value).toBe(groupedMean(v.groups, run.items[k]!));
        expect(g.points[r * variables.length + k]).toBe(g.perVariable[r]![k]!.value);
      });
      const w = [1, 2, 1, 1];
      const macro = variables.reduce((s, _, k) => s + w[k]! * g.perVariable[r]![k]!.value, 0) / 5;
      expect(g.macro[r]!.value).toBeCloseTo(macro, 14);
      let mean = 0;
      for (let b = 0; b < 100; b++) mean += g.macroReplicates[r * 100 + b]! / 100;
      expect(g.macro[r]!.value).not.toBe(mean);
    });
  });

  it('macro replicates recompute every variable in the replicate (reports resampled, not variables)', () => {
    const { variables, runs } = syntheticGrid(4);
    const B = 50;
    const g = bootstrapGrid({ variables, runs, resamples: B, seed: 9 });
    const V = variables.length;
    const W = bootstrapMultiplicities(60, B, 9);
    for (let r = 0; r < runs.length; r++) {
      for (let b = 0; b < B; b++) {
        const w = W.subarray(b * 60, (b + 1) * 60);
        const scores = variables.map((v, k) => groupedMean(v.groups, runs[r]!.items[k]!, w));
        expect(g.replicates[(r * V + 1) * B + b]).toBeCloseTo(scores[1]!, 12);
        const macro = (scores[0]! + 2 * scores[1]! + scores[2]! + scores[3]!) / 5;
        expect(g.macroReplicates[r * B + b]).toBeCloseTo(macro, 12);
      }
    }
    expect(g.multiplicities).toEqual(W);
  });

  it('packed and unpacked kernels agree bit for bit on 0/1 items', () => {
    const { variables, runs } = syntheticGrid(10);
    const binaryVariables = variables.slice(0, 3);
    const binaryRuns = runs.map((r) => ({ id: r.id, items: r.items.slice(0, 3) }));
    const packed = bootstrapGrid({ variables: binaryVariables, runs: binaryRuns, resamples: 70, seed: 5 });
    const plain = bootstrapGrid({ variables: binaryVariables, runs: binaryRuns, resamples: 70, seed: 5, packBinary: false });
    expect(Array.from(packed.replicates)).toEqual(Array.from(plain.replicates));
  });

  it('accepts a shared multiplicity matrix (paired across calls)', () => {
    const { variables, runs } = syntheticGrid(5);
    const W = bootstrapMultiplicities(60, 80, 21);
    const all = bootstrapGrid({ variables, runs, multiplicities: W });
    const one = bootstrapGrid({ variables, runs: [runs[3]!], multiplicities: W });
    expect(one.seed).toBeNull();
    expect(one.resamples).toBe(80);
    expect(Array.from(one.macroReplicates)).toEqual(Array.from(all.macroReplicates.subarray(3 * 80, 4 * 80)));
    expect(one.perVariable[0]).toEqual(all.perVariable[3]);
  });

  it('intervals contain the point estimate for a well-behaved statistic', () => {
    const { variables, runs } = syntheticGrid(6, 200);
    const g = bootstrapGrid({ variables, runs, resamples: 300, seed: 1 });
    for (const e of g.macro) {
      expect(e.ciLow).toBeLessThanOrEqual(e.value);
      expect(e.ciHigh).toBeGreaterThanOrEqual(e.value);
      expect(e.resamples).toBe(300);
      expect(e.confidence).toBe(0.95);
    }
  });

  it('validates shapes', () => {
    const { variables, runs } = syntheticGrid(7);
    expect(() => bootstrapGrid({ variables: [], runs })).toThrow(AnalyticsError);
    expect(() => bootstrapGrid({ variables, runs: [{ id: 'x', items: [] }] })).toThrow(AnalyticsError);
    expect(() => bootstrapGrid({ variables, runs, confidence: 95 })).toThrow(AnalyticsError);
    expect(() => bootstrapGrid({ variables, runs, multiplicities: new Int32Array(7) })).toThrow(AnalyticsError);
    expect(() => bootstrapGrid({ variables: [{ key: 'a', groups: [0] }, { key: 'b', groups: [0, 0] }], runs: [] })).toThrow(
      AnalyticsError,
    );
  });
});

describe('paired differences', () => {
  it('difference of a run with itself: 0, CI [0, 0], p = 1', () => {
    const { variables, runs } = syntheticGrid(8);
    const g = bootstrapGrid({ variables, runs: [runs[0]!, runs[0]!], resamples: 100, seed: 2 });
    const d = gridPairedDifference(g, 0, 1);
    expect(d.estimate.value).toBe(0);
    expect(d.estimate.ciLow).toBe(0);
    expect(d.estimate.ciHigh).toBe(0);
    expect(d.pValue).toBe(1);
  });

  it('uses the documented p-value definition', () => {
    // d = [-1, 1, 2, 3]: #{d <= 0} = 1, #{d >= 0} = 3 → p = 2 (1 + 1) / 5
    const d = pairedDifference(1, 0, [0, 2, 3, 4], [1, 1, 1, 1], 0.5);
    expect(d.pValue).toBeCloseTo(0.8, 15);
    expect(d.estimate.value).toBe(1);
    const all = pairedDifference(1, 0, [2, 2, 2], [1, 1, 1]);
    expect(all.pValue).toBeCloseTo(0.5, 15);
    expect(() => pairedDifference(0, 0, [1], [1, 2])).toThrow(AnalyticsError);
  });

  it('pairs per-variable replicates', () => {
    const { variables, runs } = syntheticGrid(9);
    const g = bootstrapGrid({ variables, runs, resamples: 60, seed: 4 });
    const d = gridPairedDifference(g, 4, 0, 2);
    const V = variables.length;
    expect(d.estimate.value).toBe(g.points[4 * V + 2]! - g.points[2]!);
    expect(() => gridPairedDifference(g, 0, 9)).toThrow(AnalyticsError);
    expect(() => gridPairedDifference(g, 0, 1, 4)).toThrow(AnalyticsError);
  });
});
