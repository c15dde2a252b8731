import { AnalyticsError } from '../../../src/analytics/errors';
import { cellsEqual } from '../../../src/analytics/normalise';
import {
  DEFAULT_TARGET_ACCURACY,
  calibration,
  calibrationBin,
  coverageAtAccuracy,
  logprobConfidence,
  medoidConfidence,
  riskCoverage,
  selfConsistencyConfidence,
} from '../../../src/analytics/selective-prediction';
import type { ConfidentField } from '../../../src/analytics/selective-prediction';
import type { NormalisedCell } from '../../../src/analytics/types';

const f = (confidence: number | null, score: number): ConfidentField => ({ confidence, score });

function expectCode(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AnalyticsError);
    expect((e as AnalyticsError).code).toBe(code);
    return;
  }
  throw new Error('expected an AnalyticsError');
}

describe('risk–coverage and AURC (§11)', () => {
  it('enters a block of equal confidences whole, whatever the input order', () => {
    // sorted: 0.9 (right), block 0.8 (wrong, right), 0.5 (wrong)
    // risks of the first i fields: 0, 1/3, 1/3, 1/2
    const fields = [f(0.8, 0), f(0.9, 1), f(0.5, 0), f(0.8, 1)];
    const rc = riskCoverage(fields);
    expect(rc.aurc).toBeCloseTo(7 / 24, 15);
    expect(rc.curve.map((p) => [p.confidence, p.fields, p.coverage])).toEqual([
      [0.9, 1, 0.25],
      [0.8, 3, 0.75],
      [0.5, 4, 1],
    ]);
    expect(rc.curve[1]!.risk).toBeCloseTo(1 / 3, 15);
    const swapped = riskCoverage([f(0.8, 1), f(0.9, 1), f(0.5, 0), f(0.8, 0)]);
    expect(swapped.aurc).toBe(rc.aurc);
  });

  it('uses only the fields with a confidence, and reports their share', () => {
    const rc = riskCoverage([f(null, 0), f(1, 1), f(null, 1), f(0.3, 0)]);
    expect(rc.withConfidence).toBe(2);
    expect(rc.confidenceShare).toBe(0.5);
    expect(rc.aurc).toBe((0 + 0.5) / 2);
    const none = riskCoverage([f(null, 1)]);
    expect(none.aurc).toBeNull();
    expect(none.curve).toEqual([]);
    expect(riskCoverage([]).confidenceShare).toBeNull();
  });

  it('takes real-valued item scores (free text) as they are', () => {
    expect(riskCoverage([f(0.9, 0.5), f(0.1, 0.25)]).aurc).toBe((0.5 + (1 - 0.375)) / 2);
  });
});

describe('coverage at target accuracy (§11)', () => {
  // selective accuracies by coverage: 0, 1/2, 2/3, 3/4, 4/5
  const dipping = [f(0.9, 0), f(0.8, 1), f(0.7, 1), f(0.6, 1), f(0.5, 1)];

  it('takes the largest coverage that reaches the target, even past a dip', () => {
    expect(coverageAtAccuracy(dipping, 0.8)).toBe(1);
    expect(coverageAtAccuracy(dipping, 0.7)).toBe(1);
    expect(coverageAtAccuracy(dipping, 0.5)).toBe(1);
    expect(coverageAtAccuracy(riskCoverage(dipping), 0.8)).toBe(1);
  });

  it('is 0 when no point reaches the target and null without fields', () => {
    expect(coverageAtAccuracy(dipping, 0.95)).toBe(0);
    expect(coverageAtAccuracy([f(null, 1)], 0.5)).toBeNull();
    expect(coverageAtAccuracy([], 0.5)).toBeNull();
  });

  it('defaults to 0.95 and compares with the score tolerance', () => {
    expect(DEFAULT_TARGET_ACCURACY).toBe(0.95);
    // (0.95 + 0.95 + 0.95) / 3 is 0.9499999999999998 in floating point: the same score as 0.95
    const fields = [f(0.9, 0.95), f(0.9, 0.95), f(0.9, 0.95), f(0.2, 0)];
    expect(riskCoverage(fields).curve[0]!.selectiveAccuracy).toBeLessThan(0.95);
    expect(coverageAtAccuracy(fields)).toBe(0.75);
    expect(coverageAtAccuracy([f(0.9, 1), f(0.8, 0.9)], 0.95 + 1e-9)).toBe(0.5);
  });

  it('refuses a target outside [0, 1]', () => {
    expectCode(() => coverageAtAccuracy(dipping, 1.2), 'OUT_OF_RANGE');
    expectCode(() => coverageAtAccuracy(dipping, Number.NaN), 'OUT_OF_RANGE');
  });
});

describe('calibration (§11)', () => {
  it('bins in IEEE double: 0.3 in bin 3, 0.7 in bin 7, 1.0 in bin 9', () => {
    expect(calibrationBin(0.3)).toBe(3);
    expect(calibrationBin(0.7)).toBe(7);
    expect(calibrationBin(1)).toBe(9);
    expect(calibrationBin(0)).toBe(0);
    expect(calibrationBin(0.0999999999999)).toBe(0);
  });

  it('computes Brier and ECE by hand', () => {
    const cal = calibration([f(1, 1), f(0.3, 0), f(0.35, 1), f(null, 0)]);
    expect(cal.n).toBe(3);
    expect(cal.brier).toBeCloseTo((0 + 0.09 + 0.65 * 0.65) / 3, 15);
    // bin 3: mean c 0.325, accuracy 1/2; bin 9: c 1, accuracy 1
    expect(cal.ece).toBeCloseTo((2 / 3) * Math.abs(0.325 - 0.5), 15);
    expect(cal.bins[3]).toMatchObject({ count: 2, accuracy: 0.5 });
    expect(cal.bins[3]!.meanConfidence).toBeCloseTo(0.325, 15);
    expect(cal.bins[9]).toEqual({ count: 1, meanConfidence: 1, accuracy: 1 });
    expect(cal.bins[0]).toEqual({ count: 0, meanConfidence: null, accuracy: null });
  });

  it('is null without a confidence and refuses item scores other than 0 or 1', () => {
    expect(calibration([f(null, 1)])).toMatchObject({ n: 0, brier: null, ece: null });
    expectCode(() => calibration([f(0.5, 0.5)]), 'BAD_INPUT');
    expectCode(() => calibration([f(1.5, 1)]), 'OUT_OF_RANGE');
    expectCode(() => riskCoverage([f(Number.NaN, 1)]), 'OUT_OF_RANGE');
    expectCode(() => riskCoverage([f(0.5, 2)]), 'OUT_OF_RANGE');
  });
});

describe('confidence of a field (§11)', () => {
  it('self-consistency: the share of samples equal to the chosen normalised value', () => {
    const g2: NormalisedCell = { status: 'VALUE', value: 'G2' };
    const samples: NormalisedCell[] = [
      g2,
      { status: 'VALUE', value: 'G2' },
      { status: 'VALUE', value: 'G3' },
      { status: 'MISSING' },
      { status: 'INVALID', category: 'OTHER' },
    ];
    expect(selfConsistencyConfidence(samples, g2, cellsEqual)).toBe(2 / 5);
    expect(selfConsistencyConfidence(samples, { status: 'MISSING' }, cellsEqual)).toBe(1 / 5);
    expect(selfConsistencyConfidence([], g2, cellsEqual)).toBeNull();
  });

  it('self-consistency of free text and lists: the medoid\'s mean similarity to the other samples', () => {
    expect(medoidConfidence([1, 0.5, 0.75])).toBe(0.75);
    expect(medoidConfidence([])).toBeNull();
    expectCode(() => medoidConfidence([1.5]), 'OUT_OF_RANGE');
  });

  it('log-probabilities: the tokens that spell the value, keys and quotes excluded', () => {
    // {"grade": "G2"}: G2 is [11, 13)
    const tokens = [
      { token: '{"', logprob: -0.01 },
      { token: 'grade', logprob: -0.02 },
      { token: '":', logprob: -0.03 },
      { token: ' "', logprob: -0.04 },
      { token: 'G', logprob: -0.5 },
      { token: '2', logprob: -0.1 },
      { token: '"}', logprob: -0.05 },
    ];
    expect(logprobConfidence(tokens, 11, 13)).toBe(Math.exp((-0.5 + -0.1) / 2));
    // a token that joins the opening quote to the value spells part of the value
    const joined = [
      { token: '{"grade": ', logprob: -0.01 },
      { token: '"G', logprob: -0.4 },
      { token: '2', logprob: -0.2 },
      { token: '"}', logprob: -0.05 },
    ];
    expect(logprobConfidence(joined, 11, 13)).toBe(Math.exp((-0.4 + -0.2) / 2));
  });

  it('counts offsets in UTF-16 code units (an emoji is two)', () => {
    const tokens = [
      { token: '{"s": "', logprob: -0.01 },
      { token: '🙂', logprob: -0.3 },
      { token: 'ř', logprob: -0.7 },
      { token: '"}', logprob: -0.02 },
    ];
    expect(logprobConfidence(tokens, 7, 9)).toBe(Math.exp(-0.3));
    expect(logprobConfidence(tokens, 9, 10)).toBe(Math.exp(-0.7));
  });

  it('is null for an empty value range, also one inside a token', () => {
    const tokens = [{ token: 'abc', logprob: -1 }, { token: '', logprob: -2 }];
    expect(logprobConfidence(tokens, 1, 1)).toBeNull();
    expect(logprobConfidence(tokens, 3, 3)).toBeNull();
  });

  it('refuses ranges past the tokens and impossible log-probabilities', () => {
    const tokens = [{ token: 'ab', logprob: -1 }];
    expectCode(() => logprobConfidence(tokens, 1, 3), 'BAD_INPUT');
    expectCode(() => logprobConfidence(tokens, 2, 1), 'BAD_INPUT');
    expectCode(() => logprobConfidence([{ token: 'ab', logprob: 0.5 }], 0, 1), 'OUT_OF_RANGE');
    expectCode(() => logprobConfidence([{ token: 'ab', logprob: Number.NEGATIVE_INFINITY }], 0, 1), 'OUT_OF_RANGE');
  });
});
