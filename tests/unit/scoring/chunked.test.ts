import { bootstrapGrid, bootstrapMultiplicities } from '../../../src/analytics/bootstrap';
import { kemenyRankIntervals } from '../../../src/analytics/rank-intervals';
import { concatGrids, rankIntervalsInSlices } from '../../../src/modules/scoring/chunked';

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('statistics computed in slices equal the one-piece computation', () => {
  const random = lcg(11);
  const n = 40;
  const V = 3;
  const R = 7;
  const B = 250;
  const variables = Array.from({ length: V }, (_, v) => ({ key: `v${v}`, groups: Int32Array.from({ length: n }, () => Math.floor(random() * (v + 2))) }));
  const runs = Array.from({ length: R }, (_, r) => ({
    id: `r${r}`,
    items: variables.map(() => Float64Array.from({ length: n }, () => (random() < 0.4 + r * 0.07 ? 1 : 0))),
  }));
  const multiplicities = bootstrapMultiplicities(n, B, 3);
  const whole = bootstrapGrid({ variables, runs, multiplicities });

  it('concatenating grids of run slices gives the grid of all runs, bit for bit', () => {
    const sliced = concatGrids([
      bootstrapGrid({ variables, runs: runs.slice(0, 3), multiplicities }),
      bootstrapGrid({ variables, runs: runs.slice(3), multiplicities }),
    ]);
    expect(Array.from(sliced.replicates)).toEqual(Array.from(whole.replicates));
    expect(Array.from(sliced.macroReplicates)).toEqual(Array.from(whole.macroReplicates));
    expect(sliced.macro).toEqual(whole.macro);
    expect(sliced.perVariable).toEqual(whole.perVariable);
    expect(sliced.runIds).toEqual(whole.runIds);
  });

  it('rank intervals over replicate slices equal those over all replicates at once', async () => {
    const names = runs.map((r) => r.id);
    const expected = kemenyRankIntervals(
      { data: whole.replicates, candidates: R, voters: V, replicates: B, strides: { candidate: V * B, voter: B, replicate: 1 } },
      { level: 0.9, names, macro: { data: whole.macroReplicates, strides: { candidate: B, replicate: 1 } } },
    );
    const sliced = await rankIntervalsInSlices(
      { data: whole.replicates, macro: whole.macroReplicates, candidates: R, voters: V, replicates: B },
      { level: 0.9, names },
    );
    expect(sliced).toEqual(expected.intervals.map((i) => ({ candidate: i.candidate, lower: i.lower, upper: i.upper })));
    // the intervals are not trivially all the same
    expect(new Set(sliced.map((i) => `${i.lower}-${i.upper}`)).size).toBeGreaterThan(1);
  });
});
