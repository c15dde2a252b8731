import { bootstrapGrid } from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import { groupMembersFromGrid, groupSummary, sizeClass } from '../../../src/analytics/groups';

describe('sizeClass', () => {
  it.each([
    [0.5, 'TINY'],
    [3.99, 'TINY'],
    [4, 'SMALL'],
    [39.9, 'SMALL'],
    [40, 'MEDIUM'],
    [150, 'MEDIUM'],
    [150.1, 'LARGE'],
    [671, 'LARGE'],
  ])('%d B → %s', (p, c) => expect(sizeClass(p)).toBe(c));
  it('rejects invalid counts', () => {
    expect(() => sizeClass(-1)).toThrow(AnalyticsError);
    expect(() => sizeClass(NaN)).toThrow(AnalyticsError);
  });
});

describe('groupSummary', () => {
  it('averages members and their replicates', () => {
    const s = groupSummary(
      'SMALL',
      [
        { model: 'a', value: 0.6, replicates: [0.5, 0.7, NaN] },
        { model: 'b', value: 0.8, replicates: [0.7, 0.9, 0.8] },
      ],
      0.5,
    );
    expect(s.estimate.value).toBeCloseTo(0.7, 15);
    expect(Array.from(s.replicates)).toEqual([0.6, 0.8, 0.8]);
    expect(s.models).toEqual(['a', 'b']);
    expect(s.estimate.ciLow).toBeCloseTo(0.7, 15);
    expect(s.estimate.ciHigh).toBeCloseTo(0.8, 15);
  });

  it('validates members', () => {
    expect(() => groupSummary('x', [])).toThrow(AnalyticsError);
    expect(() => groupSummary('x', [{ model: 'a', value: 1, replicates: [1] }, { model: 'a', value: 1, replicates: [1] }])).toThrow(
      AnalyticsError,
    );
    expect(() => groupSummary('x', [{ model: 'a', value: 1, replicates: [1] }, { model: 'b', value: 1, replicates: [1, 2] }])).toThrow(
      AnalyticsError,
    );
  });

  it('takes each model best run from a grid', () => {
    const groups = [0, 1, 0, 1, 0, 1];
    const grid = bootstrapGrid({
      variables: [{ key: 'v', groups }],
      runs: [
        { id: 'm1-zero-shot', items: [[1, 0, 1, 0, 1, 1]] },
        { id: 'm1-cot', items: [[1, 1, 1, 0, 1, 1]] },
        { id: 'm2-zero-shot', items: [[0, 0, 1, 0, 1, 1]] },
      ],
      resamples: 30,
      seed: 2,
    });
    const members = groupMembersFromGrid(grid, new Map([['m1', 1], ['m2', 2]]));
    expect(members.map((m) => m.value)).toEqual([grid.macroPoints[1], grid.macroPoints[2]]);
    const s = groupSummary('all', members);
    expect(s.estimate.value).toBeCloseTo((grid.macroPoints[1]! + grid.macroPoints[2]!) / 2, 15);
    expect(s.replicates[7]).toBeCloseTo((grid.macroReplicates[30 + 7]! + grid.macroReplicates[60 + 7]!) / 2, 15);
    expect(() => groupMembersFromGrid(grid, { m3: 5 })).toThrow(AnalyticsError);
  });
});
