import { interRaterAgreement } from '../../../src/analytics/agreement';
import { bootstrapMultiplicities } from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import { balancedAccuracy, groupedMean } from '../../../src/analytics/metrics';
import { normaliseRecord } from '../../../src/analytics/normalise';
import type { VariableSpec } from '../../../src/analytics/types';

const grade: VariableSpec = { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'] };
const size: VariableSpec = { key: 'size', type: 'NUMERIC' };
const site: VariableSpec = { key: 'site', type: 'FREE_TEXT' };
const specs = [grade, size];

function annotator(id: string, raws: (Record<string, unknown> | undefined)[]) {
  return { id, records: raws.map((r) => (r === undefined ? undefined : normaliseRecord(specs, r, 'reference'))) };
}

describe('interRaterAgreement', () => {
  const a = annotator('A', [
    { grade: 'G1', size: 10 },
    { grade: 'G1', size: 12 },
    { grade: 'G2', size: 3 },
    { grade: 'G3' },
    { grade: 'G2', size: 'not specified' },
  ]);
  const b = annotator('B', [
    { grade: 'G1', size: '10,0' },
    { grade: 'G2', size: 12 },
    { grade: 'G2', size: 4 },
    { grade: 'G3', size: 5 },
    undefined,
  ]);

  it('averages both directions of each pair on the common reports', () => {
    const r = interRaterAgreement({ specs, annotators: [a, b], resamples: 50, seed: 1 });
    const g = r.perVariable[0]!;
    // common reports 0..3: A = [G1,G1,G2,G3], B = [G1,G2,G2,G3]
    const bAgainstA = balancedAccuracy(['G1', 'G1', 'G2', 'G3'], ['G1', 'G2', 'G2', 'G3']);
    const aAgainstB = balancedAccuracy(['G1', 'G2', 'G2', 'G3'], ['G1', 'G1', 'G2', 'G3']);
    expect(g.pairs).toEqual([{ a: 'A', b: 'B', n: 4, bAgainstA, aAgainstB, value: (bAgainstA + aAgainstB) / 2 }]);
    expect(g.estimate.value).toBeCloseTo((5 / 6 + 5 / 6) / 2, 15);
    // size: common reports 0..2 (A has no size on report 3): 10 = "10,0", 12 = 12, 3 ≠ 4
    expect(r.perVariable[1]!.estimate.value).toBeCloseTo(2 / 3, 15);
    expect(r.macro.value).toBeCloseTo((5 / 6 + 2 / 3) / 2, 15);
    expect(r.embedder).toBeNull();
  });

  it('recomputes every direction on each replicate (brute force)', () => {
    const B = 40;
    const W = bootstrapMultiplicities(5, B, 3);
    const r = interRaterAgreement({ specs, annotators: [a, b], multiplicities: W });
    expect(r.resamples).toBe(B);
    const gA = [0, 0, 1, 2, -1];
    const gB = [0, 1, 1, 2, -1];
    const items = [1, 0, 1, 1, NaN];
    for (let k = 0; k < B; k++) {
      const w = W.subarray(k * 5, (k + 1) * 5);
      const expected = (groupedMean(gA, items, w) + groupedMean(gB, items, w)) / 2;
      if (Number.isNaN(expected)) expect(r.replicates[k]).toBeNaN();
      else expect(r.replicates[k]).toBeCloseTo(expected, 12);
    }
  });

  it('averages over pairs and skips pairs without common reports', () => {
    const c = annotator('C', [{ grade: 'G1' }, { grade: 'G1' }, { grade: 'G2' }, { grade: 'G3' }, { grade: 'G2' }]);
    const d = annotator('D', [undefined, undefined, undefined, undefined, undefined]);
    const r = interRaterAgreement({ specs, annotators: [a, b, c, d], resamples: 20 });
    const g = r.perVariable[0]!;
    expect(g.pairs.map((p) => `${p.a}-${p.b}`)).toEqual(['A-B', 'A-C', 'B-C']);
    expect(g.pairs[1]!.value).toBe(1);
    expect(g.estimate.value).toBeCloseTo((g.pairs[0]!.value + 1 + g.pairs[2]!.value) / 3, 15);
    expect(r.annotators).toEqual(['A', 'B', 'C', 'D']);
  });

  it('gives NaN for a variable nobody annotated twice and leaves it out of the macro', () => {
    const only = annotator('E', [{ grade: 'G1' }, { grade: 'G1' }, {}, {}, {}]);
    const other = annotator('F', [{ size: 1 }, { size: 2 }, {}, {}, {}]);
    const r = interRaterAgreement({ specs, annotators: [only, other], resamples: 10 });
    expect(r.perVariable[0]!.estimate.value).toBeNaN();
    expect(r.macro.value).toBeNaN();
  });

  it('uses the similarity lookup for free text and records the embedder', () => {
    const textSpecs = [site];
    const x = { id: 'X', records: [{ site: { status: 'VALUE' as const, value: 'liver' } }] };
    const y = { id: 'Y', records: [{ site: { status: 'VALUE' as const, value: 'lever' } }] };
    const r = interRaterAgreement({
      specs: textSpecs,
      annotators: [x, y],
      similarity: () => 0.8,
      embedder: { provider: 'lexical', model: 'm' },
      resamples: 5,
    });
    expect(r.perVariable[0]!.estimate.value).toBeCloseTo(0.8, 15);
    expect(r.embedder).toEqual({ provider: 'lexical', model: 'm' });
  });

  it('validates its input', () => {
    expect(() => interRaterAgreement({ specs, annotators: [a] })).toThrow(AnalyticsError);
    expect(() => interRaterAgreement({ specs, annotators: [a, { ...b, id: 'A' }] })).toThrow(AnalyticsError);
    expect(() => interRaterAgreement({ specs, annotators: [a, { id: 'Z', records: [] }] })).toThrow(AnalyticsError);
  });
});
