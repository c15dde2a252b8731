import { AnalyticsError } from '../../../src/analytics/errors';
import {
  MISSING_CLASS,
  accuracy,
  balancedAccuracy,
  encodeReferences,
  groupedMean,
  itemScore,
  itemScores,
  macroAverage,
  perReportScores,
  primaryMetric,
  scoreVariable,
  symmetricSimilarity,
} from '../../../src/analytics/metrics';
import { normaliseRecord, normaliseValue } from '../../../src/analytics/normalise';
import type { RecordCell } from '../../../src/analytics/normalise';
import type { NormalisedCell, VariableSpec } from '../../../src/analytics/types';

const V = (value: string | number | string[]): NormalisedCell => ({ status: 'VALUE', value });
const M: NormalisedCell = { status: 'MISSING' };
const I = (category: 'MISSING' | 'OUT_OF_FORMAT' | 'MULTI_VALUED' | 'AMBIGUOUS' | 'OTHER'): NormalisedCell => ({
  status: 'INVALID',
  category,
});
const noSimilarity = () => {
  throw new Error('similarity must not be called');
};

describe('groupedMean', () => {
  it('averages group means over non-empty groups and skips group -1', () => {
    expect(groupedMean([0, 0, 1, -1], [1, 0, 1, 0])).toBe(0.75);
    expect(groupedMean([0, 0, 1], [1, 0, 1], [2, 0, 1])).toBe(1);
    expect(groupedMean([0, 0, 1], [1, 0, 1], [1, 1, 0])).toBe(0.5);
    expect(groupedMean([-1, -1], [1, 1])).toBeNaN();
    expect(groupedMean([], [])).toBeNaN();
    expect(() => groupedMean([0], [1, 2])).toThrow(AnalyticsError);
  });
});

describe('balancedAccuracy', () => {
  it('matches the scikit-learn documentation example', () => {
    // sklearn.metrics.balanced_accuracy_score([0, 1, 0, 0, 1, 0], [0, 1, 0, 0, 0, 1]) == 0.625
    expect(balancedAccuracy([0, 1, 0, 0, 1, 0], [0, 1, 0, 0, 0, 1])).toBe(0.625);
  });

  it('ignores predicted-only classes and counts null (INVALID) as wrong', () => {
    expect(balancedAccuracy(['a', 'a', 'b'], ['a', 'c', 'b'])).toBe(0.75);
    expect(balancedAccuracy(['a', 'b'], [null, 'b'])).toBe(0.5);
    expect(balancedAccuracy([1, 2], ['1', '2'])).toBe(0);
    expect(() => balancedAccuracy([], [])).toThrow(AnalyticsError);
    expect(() => balancedAccuracy(['a'], [])).toThrow(AnalyticsError);
  });

  it('accuracy counts exact matches', () => {
    expect(accuracy([1, 2, 3, 4], [1, 2, 0, null])).toBe(0.5);
  });
});

describe('symmetricSimilarity', () => {
  const table: Record<string, number> = { 'liver|lever': 0.9, 'liver|lung': 0.2, 'lung|lever': 0.3, 'lung|long': 0.8, 'liver|long': 0.1 };
  const sim = (a: string, b: string) => table[`${a}|${b}`] ?? table[`${b}|${a}`] ?? 0;

  it('averages the two directional mean-max similarities', () => {
    // G = [liver, lung], P = [lever]: G→P mean(0.9, 0.3) = 0.6; P→G max(0.9, 0.3) = 0.9
    expect(symmetricSimilarity(['liver', 'lung'], ['lever'], sim)).toBeCloseTo(0.5 * (0.6 + 0.9), 15);
    // G = [liver, lung], P = [lever, long]: G→P (0.9 + 0.8)/2; P→G (0.9 + 0.8)/2
    expect(symmetricSimilarity(['liver', 'lung'], ['lever', 'long'], sim)).toBeCloseTo(0.85, 15);
    expect(symmetricSimilarity(['liver'], ['liver'], noSimilarity)).toBe(1);
  });

  it('handles empty lists', () => {
    expect(symmetricSimilarity([], [], noSimilarity)).toBe(1);
    expect(symmetricSimilarity(['a'], [], noSimilarity)).toBe(0);
    expect(symmetricSimilarity([], ['a'], noSimilarity)).toBe(0);
  });
});

describe('itemScore', () => {
  const text: VariableSpec = { key: 't', type: 'FREE_TEXT' };
  const list: VariableSpec = { key: 'l', type: 'LIST' };
  const num: VariableSpec = { key: 'n', type: 'NUMERIC', tolerance: 0.1 };

  it('follows the free-text rules without calling the embedder needlessly', () => {
    const opts = { similarity: noSimilarity };
    expect(itemScore(text, M, M, opts)).toBe(1);
    expect(itemScore(text, M, V('x'), opts)).toBe(0);
    expect(itemScore(text, V('x'), M, opts)).toBe(0);
    expect(itemScore(text, V('x'), I('OTHER'), opts)).toBe(0);
    expect(itemScore(text, M, I('MISSING'), opts)).toBe(0);
    expect(itemScore(text, V('GIST'), V('GIST'), opts)).toBe(1);
    expect(itemScore(text, V('a'), V('b'), { similarity: () => 0.42 })).toBe(0.42);
    expect(() => itemScore(text, V('a'), V('b'))).toThrow(AnalyticsError);
  });

  it('reads a MISSING list as empty and an INVALID list as wrong', () => {
    expect(itemScore(list, M, M, { similarity: noSimilarity })).toBe(1);
    expect(itemScore(list, M, V(['a']), { similarity: noSimilarity })).toBe(0);
    expect(itemScore(list, M, I('OUT_OF_FORMAT'), { similarity: noSimilarity })).toBe(0);
    expect(itemScore(list, V(['a', 'b']), V(['b', 'a']), { similarity: noSimilarity })).toBe(1);
  });

  it('compares numbers within tolerance and never credits INVALID', () => {
    expect(itemScore(num, V(2), V(2.05))).toBe(1);
    expect(itemScore(num, V(2), V(2.2))).toBe(0);
    expect(itemScore(num, M, M)).toBe(1);
    expect(itemScore(num, M, I('AMBIGUOUS'))).toBe(0);
  });
});

describe('scoreVariable', () => {
  const grade: VariableSpec = { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'] };

  it('computes balanced accuracy with MISSING as a class, validity and the invalid breakdown', () => {
    const refs: RecordCell[] = [V('G1'), V('G1'), V('G2'), M, M, undefined, V('G3')];
    const preds: (NormalisedCell | undefined)[] = [V('G1'), I('MULTI_VALUED'), V('G2'), M, V('G1'), V('G2'), undefined];
    const s = scoreVariable(grade, refs, preds);
    // classes G1: 1/2, G2: 1/1, MISSING: 1/2, G3: 0/1
    expect(s.metric).toBe('BALANCED_ACCURACY');
    expect(s.value).toBeCloseTo((0.5 + 1 + 0.5 + 0) / 4, 15);
    expect(s.n).toBe(6);
    expect(s.valid).toBe(4);
    expect(s.validity).toBeCloseTo(4 / 6, 15);
    expect(s.invalid).toEqual({ MISSING: 1, OUT_OF_FORMAT: 0, MULTI_VALUED: 1, AMBIGUOUS: 0, OTHER: 0 });
    // conditional: drop reports 1 and 6 → G1: 1/1, G2: 1/1, MISSING: 1/2 (G3 has no valid prediction)
    expect(s.primary.conditional).toBeCloseTo((1 + 1 + 0.5) / 3, 15);
    expect(s.accuracy.effective).toBeCloseTo(3 / 6, 15);
    expect(s.accuracy.conditional).toBeCloseTo(3 / 4, 15);
    expect(s.collapsed).toBeNull();
    expect(s.embedder).toBeNull();
  });

  it('reports exact and collapsed variants with a collapse map', () => {
    const birads: VariableSpec = {
      key: 'birads',
      type: 'CATEGORICAL',
      options: ['3', '4A', '4B', '5'],
      collapseMap: { '4A': '4', '4B': '4' },
    };
    const refs = ['4A', '4B', '3', '5'].map((x) => normaliseValue(birads, x));
    const preds = ['4B', '4B', '3', '4A or 4B'].map((x) => normaliseValue(birads, x));
    const s = scoreVariable(birads, refs, preds);
    expect(s.value).toBeCloseTo((0 + 1 + 1 + 0) / 4, 15);
    // collapsed classes: 4 (2 reports, both right), 3 (right), 5 (wrong: MULTI_VALUED stays invalid)
    expect(s.collapsed?.primary.effective).toBeCloseTo((1 + 1 + 0) / 3, 15);
    expect(s.collapsed?.accuracy.effective).toBeCloseTo(3 / 4, 15);
    expect(s.invalid.MULTI_VALUED).toBe(1);
  });

  it('never counts an INVALID prediction as correct against a MISSING reference', () => {
    const num: VariableSpec = { key: 'n', type: 'NUMERIC' };
    const refs = [M, M];
    const preds = [normaliseValue(num, 'about ten'), normaliseValue(num, 'not specified')];
    const s = scoreVariable(num, refs, preds);
    expect(s.value).toBe(0.5);
    expect(s.primary.conditional).toBe(1);
    expect(s.invalid.AMBIGUOUS).toBe(1);
  });

  it('records the embedder for similarity metrics and needs a lookup', () => {
    const text: VariableSpec = { key: 't', type: 'FREE_TEXT' };
    const s = scoreVariable(text, [V('a'), M], [V('b'), M], {
      similarity: () => 0.5,
      embedder: { provider: 'lexical', model: 'x' },
    });
    expect(s.metric).toBe('COSINE_SIMILARITY');
    expect(s.value).toBe(0.75);
    expect(s.accuracy.effective).toBe(0.5);
    expect(s.embedder).toEqual({ provider: 'lexical', model: 'x' });
    expect(() => scoreVariable(text, [V('a')], [V('b')])).toThrow(AnalyticsError);
  });

  it('gives NaN and no conditional score when nothing is annotated', () => {
    const s = scoreVariable(grade, [undefined, undefined], [V('G1'), V('G2')]);
    expect(s.n).toBe(0);
    expect(s.value).toBeNaN();
    expect(s.validity).toBeNaN();
    expect(s.primary.conditional).toBeNull();
  });

  it('works end to end from JSON records', () => {
    const specs: VariableSpec[] = [grade, { key: 'size', type: 'NUMERIC' }];
    const refs = [{ grade: 'G1', size: '1,5' }, { grade: 'G2' }, { grade: 'not specified', size: 3 }].map((r) =>
      normaliseRecord(specs, r, 'reference'),
    );
    const preds = ['{"grade":"g1","size":1.5}', 'no json', { grade: 'Not specified', size: '3.0' }].map((p) =>
      normaliseRecord(specs, typeof p === 'string' ? undefined : p, 'prediction'),
    );
    const gradeScore = scoreVariable(grade, refs.map((r) => r.grade), preds.map((p) => p.grade));
    // report 0 has no parsed JSON in this test (string) → INVALID; G2 wrong (no JSON); MISSING right
    expect(gradeScore.value).toBeCloseTo(1 / 3, 15);
    const sizeScore = scoreVariable(specs[1]!, refs.map((r) => r.size), preds.map((p) => p.size));
    expect(sizeScore.n).toBe(2);
    expect(sizeScore.value).toBe(0.5);
  });
});

describe('encodeReferences / itemScores', () => {
  const grade: VariableSpec = { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2'] };
  it('codes classes by first appearance, MISSING included, absent as -1', () => {
    const enc = encodeReferences(grade, [V('G2'), M, undefined, V('G1'), V('G2')]);
    expect(Array.from(enc.groups)).toEqual([0, 1, -1, 2, 0]);
    expect(enc.classes).toEqual(['G2', MISSING_CLASS, 'G1']);
    expect(enc.n).toBe(4);
    expect(Array.from(encodeReferences(grade, [V('G2'), undefined], 'ACCURACY').groups)).toEqual([0, -1]);
  });
  it('scores items with NaN for unannotated reports', () => {
    const x = itemScores(grade, [V('G1'), undefined, M], [V('G1'), V('G1'), undefined]);
    expect(Array.from(x)).toEqual([1, NaN, 0]);
    expect(() => itemScores(grade, [V('G1')], [])).toThrow(AnalyticsError);
  });
});

describe('aggregates', () => {
  it('macro average: weighted, skipping undefined variables', () => {
    expect(macroAverage([{ value: 0.5 }, { value: 1 }])).toBe(0.75);
    expect(macroAverage([{ value: 0.5, weight: 3 }, { value: 1 }])).toBe(0.625);
    expect(macroAverage([{ value: NaN }, { value: 1 }])).toBe(1);
    expect(macroAverage([])).toBeNaN();
    expect(() => macroAverage([{ value: 1, weight: -1 }])).toThrow(AnalyticsError);
  });

  it('per-report score: mean over annotated variables', () => {
    const s = perReportScores([Float64Array.from([1, 0, NaN]), Float64Array.from([0.5, NaN, NaN])]);
    expect(Array.from(s)).toEqual([0.75, 0, NaN]);
    expect(Array.from(perReportScores([[1], [0]], [3, 1]))).toEqual([0.75]);
    expect(() => perReportScores([[1], [0, 1]])).toThrow(AnalyticsError);
  });

  it('maps types to primary metrics', () => {
    expect(primaryMetric('BINARY')).toBe('BALANCED_ACCURACY');
    expect(primaryMetric('EXACT_STRING')).toBe('ACCURACY');
    expect(primaryMetric('LIST')).toBe('SYMMETRIC_SIMILARITY');
  });
});
