import { createHash } from 'node:crypto';
import { bootstrapGrid, bootstrapMultiplicities, multiplicityRows } from '../../../src/analytics/bootstrap';
import { kemenyRankIntervals, rankIntervalSteps } from '../../../src/analytics/rank-intervals';
import { bootstrapMultiplicitiesInSlices, concatGrids, jsonDigestInSlices, rankIntervalsInSlices } from '../../../src/modules/scoring/chunked';

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

describe('bootstrapMultiplicitiesInSlices', () => {
  it('draws the same matrix as bootstrapMultiplicities, bit for bit, whatever the slicing', async () => {
    // 20,000 × 100 and 3,001 × 700 are drawn in several slices (rows per slice not dividing B);
    // 50 × 30 in one call.
    for (const [n, B, seed] of [[20000, 100, 7], [3001, 700, 12345], [50, 30, -3], [1, 2000, 0]] as const) {
      expect(Buffer.from((await bootstrapMultiplicitiesInSlices(n, B, seed)).buffer).equals(Buffer.from(bootstrapMultiplicities(n, B, seed).buffer))).toBe(true);
    }
  });

  it('continues the generator across fills', () => {
    const n = 997;
    const whole = bootstrapMultiplicities(n, 40, 99);
    const w = new Int32Array(40 * n);
    const rows = multiplicityRows(n, 99);
    for (const [from, to] of [[0, 1], [1, 17], [17, 17], [17, 40]] as const) rows.fill(w, from, to);
    expect(w).toEqual(whole);
  });

  it('rejects what bootstrapMultiplicities rejects', async () => {
    await expect(bootstrapMultiplicitiesInSlices(0, 10, 1)).rejects.toThrow();
    await expect(bootstrapMultiplicitiesInSlices(10, 10, 0.5)).rejects.toThrow();
  });
});

describe('rankIntervalSteps', () => {
  it('pauses once per replicate and returns what kemenyRankIntervals returns, with one base matrix for all', () => {
    const random = lcg(5);
    const K = 30;
    const V = 6;
    const B = 57;
    // Close candidates, so replicates disagree and the updates of the base matrix matter.
    const data = Float64Array.from({ length: K * V * B }, (_, i) => 0.5 + 0.01 * Math.floor(i / (V * B)) + 0.2 * random());
    const input = { data, candidates: K, voters: V, replicates: B };
    const steps = rankIntervalSteps(input, { level: 0.9 });
    let pauses = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) pauses++;
    expect(pauses).toBe(B);
    const whole = kemenyRankIntervals(input, { level: 0.9 });
    expect(step.value.ranks).toEqual(whole.ranks);
    expect(step.value.intervals).toEqual(whole.intervals);
    // Replicate by replicate as separate calls (each its own base matrix): the same ranks.
    for (let b = 0; b < B; b += 19) {
      const one = kemenyRankIntervals({ data: data.subarray(b), candidates: K, voters: V, replicates: 1, strides: { candidate: V * B, voter: B, replicate: 1 } });
      for (let c = 0; c < K; c++) expect(one.ranks[c]).toBe(whole.ranks[c * B + b]);
    }
    expect(new Set(Array.from({ length: B }, (_, b) => whole.ranks[b])).size).toBeGreaterThan(1);
  });
});

describe('jsonDigestInSlices', () => {
  const rows = Array.from({ length: 5000 }, (_, i) => (i % 97 === 0 ? undefined : { a: { status: 'VALUE', value: `class ${i % 7}` }, b: { status: 'MISSING' } }));

  it('is SHA-256 of the head and the rows, a row per line, whatever the pauses', async () => {
    const expected = createHash('sha256')
      .update([JSON.stringify({ reports: ['r1'] }), ...rows.map((row) => JSON.stringify(row) ?? 'undefined')].join('\n'))
      .digest('hex');
    expect(await jsonDigestInSlices({ reports: ['r1'] }, rows)).toBe(expected);
  });

  it('tells apart a changed value, a missing row from null, and rows moved between head and body', async () => {
    const base = await jsonDigestInSlices({ h: 1 }, rows);
    const changed = rows.map((row, i) => (i === 4321 ? { ...row, b: { status: 'VALUE', value: 'x' } } : row));
    expect(await jsonDigestInSlices({ h: 1 }, changed)).not.toBe(base);
    expect(await jsonDigestInSlices({ h: 1 }, [undefined])).not.toBe(await jsonDigestInSlices({ h: 1 }, [null]));
    expect(await jsonDigestInSlices({ h: 1 }, [[1, 2]])).not.toBe(await jsonDigestInSlices({ h: 1 }, [[1], [2]]));
  });
});
