import { bootstrapMultiplicities } from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import {
  alignedSpans,
  evidenceRates,
  ratioEstimate,
  ratioReplicates,
  spanCounts,
  spanF1,
  spanScoreEstimates,
  spanScoreReplicates,
  spanScoresWeighted,
  weightedRatio,
} from '../../../src/analytics/evidence-scores';
import type { QuoteEvidence, SpanReport } from '../../../src/analytics/evidence-scores';

const q = (start: number, end: number, status: QuoteEvidence['status'] = 'EXACT'): QuoteEvidence => ({ status, start, end });
const unaligned: QuoteEvidence = { status: 'UNALIGNED', start: null, end: null };
const s = (start: number, end: number) => ({ start, end });

function scores(reports: SpanReport[]) {
  const c = spanCounts(reports);
  return {
    strict: spanScoresWeighted(c.strict),
    lenient: spanScoresWeighted(c.lenient),
    character: spanScoresWeighted(c.character),
    counts: c,
  };
}

function expectCode(f: () => unknown, code: string): void {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AnalyticsError);
    expect((e as AnalyticsError).code).toBe(code);
    return;
  }
  throw new Error('expected an AnalyticsError');
}

describe('grounding and unaligned-quote rates (§10 without gold spans)', () => {
  it('grounds only valid non-missing values, and counts the quotes of every field', () => {
    const r = evidenceRates([
      { cell: { status: 'VALUE', value: 'G2' }, quotes: [q(0, 4), unaligned] },
      { cell: { status: 'VALUE', value: 3 }, quotes: [unaligned] },
      { cell: { status: 'VALUE', value: 'pT1' }, quotes: [] },
      // a missing value and an invalid one: not in the grounding denominator, their quotes counted
      { cell: { status: 'MISSING' }, quotes: [q(5, 9)] },
      { cell: { status: 'INVALID', category: 'OTHER' }, quotes: [unaligned, unaligned] },
      undefined,
    ]);
    expect(r.grounding).toEqual({ numerator: 1, denominator: 3, ratio: 1 / 3 });
    expect(r.unalignedQuotes).toEqual({ numerator: 4, denominator: 6, ratio: 4 / 6 });
    expect([...r.perReport.grounding.denominator]).toEqual([1, 1, 1, 0, 0, 0]);
    expect([...r.perReport.unalignedQuotes.numerator]).toEqual([1, 1, 0, 0, 2, 0]);
  });

  it('is null on a zero denominator', () => {
    const r = evidenceRates([{ cell: { status: 'MISSING' }, quotes: [] }]);
    expect(r.grounding.ratio).toBeNull();
    expect(r.unalignedQuotes.ratio).toBeNull();
  });

  it('resamples as a ratio of weighted sums', () => {
    const counts = { numerator: Float64Array.from([1, 0, 2]), denominator: Float64Array.from([1, 1, 4]) };
    expect(weightedRatio(counts)).toBe(3 / 6);
    expect(weightedRatio(counts, [2, 1, 0])).toBe(2 / 3);
    expect(weightedRatio(counts, [0, 0, 0])).toBeNull();
    const W = Int32Array.from([2, 1, 0, 0, 3, 0]);
    const reps = ratioReplicates(counts, W, 2);
    expect(reps[0]).toBe(2 / 3);
    expect(reps[1]).toBe(0);
    const est = ratioEstimate(counts, { resamples: 200, seed: 7 });
    expect(est.value).toBe(0.5);
    expect(est.ciLow).toBeLessThanOrEqual(est.ciHigh);
    expect(ratioEstimate(counts, { multiplicities: bootstrapMultiplicities(3, 200, 7) })).toEqual(est);
  });
});

describe('span scores against gold spans (§10)', () => {
  it('counts a report with an empty gold list: every predicted span there is unmatched', () => {
    const r = scores([{ predicted: [q(0, 3)], gold: [] }]);
    expect(r.counts.reports).toBe(1);
    expect(r.strict).toEqual({ precision: 0, recall: null, f1: 0 });
    expect(r.character).toEqual({ precision: 0, recall: null, f1: 0 });
  });

  it('leaves out a report whose gold spans are absent, with its predictions', () => {
    const r = scores([
      { predicted: [q(0, 3), q(10, 12)], gold: null },
      { predicted: [q(0, 3)], gold: [s(0, 3)] },
      { predicted: [q(4, 5)] },
    ]);
    expect([...r.counts.counting]).toEqual([0, 1, 0]);
    expect(r.counts.reports).toBe(1);
    expect(r.strict).toEqual({ precision: 1, recall: 1, f1: 1 });
  });

  it('treats predicted and gold spans as sets', () => {
    const r = scores([{ predicted: [q(0, 3), q(0, 3, 'FUZZY'), q(5, 8)], gold: [s(0, 3), s(0, 3)] }]);
    expect([...r.counts.strict.predicted]).toEqual([2]);
    expect([...r.counts.strict.gold]).toEqual([1]);
    expect(r.strict).toEqual({ precision: 1 / 2, recall: 1, f1: 2 / 3 });
  });

  it('matches strictly only identical start and end; leniently on one shared code unit, not one-to-one', () => {
    // predicted [2, 10) overlaps both gold spans; [10, 12) only touches [8, 10) and shares nothing
    const r = scores([{ predicted: [q(2, 10), q(10, 12)], gold: [s(0, 4), s(8, 10)] }]);
    expect(r.strict).toEqual({ precision: 0, recall: 0, f1: 0 });
    expect([...r.counts.lenient.matchedPredicted]).toEqual([1]);
    expect([...r.counts.lenient.matchedGold]).toEqual([2]);
    expect(r.lenient).toEqual({ precision: 1 / 2, recall: 1, f1: 2 / 3 });
    // one code unit of overlap is enough
    expect(scores([{ predicted: [q(3, 5)], gold: [s(0, 4)] }]).lenient).toEqual({ precision: 1, recall: 1, f1: 1 });
  });

  it('scores characters on the union of each side\'s spans', () => {
    // predicted covers [0, 6) once although its spans overlap; gold covers [4, 10)
    const r = scores([{ predicted: [q(0, 5), q(2, 6)], gold: [s(4, 8), s(6, 10)] }]);
    expect([...r.counts.character.predicted]).toEqual([6]);
    expect([...r.counts.character.gold]).toEqual([6]);
    expect([...r.counts.character.matchedPredicted]).toEqual([2]);
    expect(r.character).toEqual({ precision: 2 / 6, recall: 2 / 6, f1: 2 / 6 });
  });

  it('micro-averages: sums over reports first', () => {
    const r = scores([
      { predicted: [q(0, 2)], gold: [s(0, 2)] },
      { predicted: [q(0, 2), q(3, 4), q(5, 6)], gold: [s(9, 10)] },
    ]);
    // mean of per-report precisions would be (1 + 0) / 2
    expect(r.strict.precision).toBe(1 / 4);
    expect(r.strict.recall).toBe(1 / 2);
  });

  it('ignores unaligned quotes: a field with only those predicted nothing', () => {
    const r = scores([{ predicted: [unaligned], gold: [s(0, 2)] }]);
    expect(r.strict).toEqual({ precision: null, recall: 0, f1: 0 });
  });

  it('follows the F1 rules: 0 when P + R = 0 or one side is null, null when both are', () => {
    expect(spanF1(null, null)).toBeNull();
    expect(spanF1(null, 0.5)).toBe(0);
    expect(spanF1(0.5, null)).toBe(0);
    expect(spanF1(0, 0)).toBe(0);
    expect(spanF1(0.5, 1)).toBe(2 / 3);
    expect(scores([{ predicted: [], gold: [] }]).strict).toEqual({ precision: null, recall: null, f1: null });
  });

  it('computes a replicate\'s F1 from that replicate\'s P and R', () => {
    const c = spanCounts([
      { predicted: [q(0, 2)], gold: [s(0, 2)] },
      { predicted: [q(0, 2), q(4, 6)], gold: [s(7, 9), s(10, 12)] },
    ]).strict;
    // weights 1, 3: P = (1 + 0)/(1 + 6), R = (1 + 0)/(1 + 6)
    expect(spanScoresWeighted(c, [1, 3])).toEqual({ precision: 1 / 7, recall: 1 / 7, f1: 1 / 7 });
    const reps = spanScoreReplicates(c, Int32Array.from([1, 3, 2, 0, 0, 2]), 3);
    expect([...reps.f1]).toEqual([1 / 7, 1, 0]);
    // weights 0, 2: nothing predicted matched and no gold matched
    expect(spanScoresWeighted(c, [0, 2])).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it('pairs with the value scores: the seeded matrix is the dataset\'s shared one', () => {
    const reports: SpanReport[] = [
      { predicted: [q(0, 2)], gold: [s(0, 2)] },
      { predicted: [q(3, 5)], gold: [s(3, 4)] },
      { predicted: [], gold: [s(8, 9)] },
      { predicted: [q(1, 2)], gold: null },
    ];
    const c = spanCounts(reports).lenient;
    const seeded = spanScoreEstimates(c, { resamples: 300, seed: 11 });
    const shared = spanScoreEstimates(c, { multiplicities: bootstrapMultiplicities(4, 300, 11) });
    expect(shared).toEqual(seeded);
    // the point estimate is the full sample's, not the replicates' mean
    expect(seeded.point).toEqual({ precision: 1, recall: 2 / 3, f1: 0.8 });
    expect(seeded.f1.value).toBe(0.8);
    expect(seeded.f1.ciLow).toBeLessThanOrEqual(0.8);
    expect(seeded.f1.ciHigh).toBe(1);
  });

  it('refuses spans it cannot place, and mismatched weights', () => {
    expectCode(() => alignedSpans([{ status: 'EXACT', start: null, end: 3 }]), 'BAD_INPUT');
    expectCode(() => alignedSpans([{ status: 'FUZZY', start: 4, end: 4 }]), 'BAD_INPUT');
    expectCode(() => alignedSpans([{ status: 'GUESSED' as never, start: 0, end: 1 }]), 'BAD_INPUT');
    expectCode(() => spanCounts([{ predicted: [], gold: [s(5, 2)] }]), 'BAD_INPUT');
    expectCode(() => spanCounts([{ predicted: [], gold: [s(-1, 2)] }]), 'BAD_INPUT');
    expectCode(() => spanCounts([{ predicted: [], gold: [s(0.5, 2)] }]), 'BAD_INPUT');
    const c = spanCounts([{ predicted: [q(0, 1)], gold: [s(0, 1)] }]).strict;
    expectCode(() => spanScoresWeighted(c, [1, 1]), 'LENGTH_MISMATCH');
    expectCode(() => spanScoresWeighted(c, [-1]), 'BAD_INPUT');
    expectCode(() => spanScoreReplicates(c, Int32Array.from([1, 0]), 3), 'LENGTH_MISMATCH');
    expectCode(() => spanScoreEstimates(c, { confidence: 1 }), 'OUT_OF_RANGE');
  });
});
