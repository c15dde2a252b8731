import oracle from '../../fixtures/analytics/evidence-oracle.json';
import {
  evidenceRates,
  spanCounts,
  spanScoreEstimates,
  spanScoreReplicates,
  spanScoresWeighted,
} from '../../../src/analytics/evidence-scores';
import type { EvidenceField, QuoteEvidence, SpanCounts, SpanReport } from '../../../src/analytics/evidence-scores';
import {
  calibration,
  coverageAtAccuracy,
  logprobConfidence,
  riskCoverage,
} from '../../../src/analytics/selective-prediction';
import type { NormalisedCell } from '../../../src/analytics/types';

// Values from tests/fixtures/analytics/generate_evidence_oracle.py (brute force, scikit-learn).
const TOL = 1e-12;

function expectClose(actual: number | null, expected: number | null): void {
  if (expected === null) {
    expect(actual).toBeNull();
    return;
  }
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - expected)).toBeLessThanOrEqual(TOL);
}

function cellOf(status: string): NormalisedCell {
  if (status === 'VALUE') return { status: 'VALUE', value: 'G2' };
  if (status === 'MISSING') return { status: 'MISSING' };
  return { status: 'INVALID', category: 'OTHER' };
}

type Kind = 'strict' | 'lenient' | 'character';
const KINDS: Kind[] = ['strict', 'lenient', 'character'];

function countsRow(c: SpanCounts, i: number): number[] {
  return [c.matchedPredicted[i]!, c.predicted[i]!, c.matchedGold[i]!, c.gold[i]!];
}

describe('evidence scores against the brute-force oracle', () => {
  it('records its generator and versions', () => {
    expect(oracle.generatedBy).toBe('tests/fixtures/analytics/generate_evidence_oracle.py');
    expect(oracle.versions.sklearn).toMatch(/^\d+\.\d+/);
  });

  it.each(oracle.rates.map((c, i) => [i, c] as const))('grounding and unaligned-quote rates, case %i', (_i, c) => {
    const fields = c.fields.map((f) =>
      f === null ? undefined : ({ cell: cellOf(f.cell), quotes: f.quotes as QuoteEvidence[] } satisfies EvidenceField),
    );
    const r = evidenceRates(fields);
    expect([r.grounding.numerator, r.grounding.denominator]).toEqual(c.grounding.slice(0, 2));
    expectClose(r.grounding.ratio, c.grounding[2] as number | null);
    expect([r.unalignedQuotes.numerator, r.unalignedQuotes.denominator]).toEqual(c.unalignedQuotes.slice(0, 2));
    expectClose(r.unalignedQuotes.ratio, c.unalignedQuotes[2] as number | null);
  });

  it.each(oracle.spans.map((c, i) => [i, c] as const))('span and character P/R/F1, case %i', (_i, c) => {
    const reports: SpanReport[] = c.reports.map((r) => ({
      predicted: r.predicted as QuoteEvidence[] | null,
      gold: r.gold === null ? null : r.gold.map(([start, end]) => ({ start: start!, end: end! })),
    }));
    const counts = spanCounts(reports);
    const W = Int32Array.from(c.multiplicities);
    for (const kind of KINDS) {
      reports.forEach((_r, i) => {
        const expected = c.perReport[i] as Record<Kind, number[]> | null;
        expect(counts.counting[i]).toBe(expected === null ? 0 : 1);
        expect(countsRow(counts[kind], i)).toEqual(expected === null ? [0, 0, 0, 0] : expected[kind]);
      });
      const e = c.expected[kind];
      const point = spanScoresWeighted(counts[kind]);
      expectClose(point.precision, e.point[0] ?? null);
      expectClose(point.recall, e.point[1] ?? null);
      expectClose(point.f1, e.point[2] ?? null);
      const reps = spanScoreReplicates(counts[kind], W, c.resamples);
      e.replicates.forEach((row, b) => {
        const toNull = (x: number) => (Number.isNaN(x) ? null : x);
        expectClose(toNull(reps.precision[b]!), row[0] ?? null);
        expectClose(toNull(reps.recall[b]!), row[1] ?? null);
        expectClose(toNull(reps.f1[b]!), row[2] ?? null);
        // A replicate is the weighted function with that row's multiplicities.
        const weighted = spanScoresWeighted(counts[kind], W.subarray(b * reports.length, (b + 1) * reports.length));
        expect(weighted.f1).toBe(toNull(reps.f1[b]!));
      });
      const est = spanScoreEstimates(counts[kind], { multiplicities: W });
      [est.precision, est.recall, est.f1].forEach((x, k) => {
        const interval = e.intervals[k] as number[] | null;
        if (interval === null) {
          expect(x.resamples).toBe(0);
        } else {
          expectClose(x.ciLow, interval[0]!);
          expectClose(x.ciHigh, interval[1]!);
        }
      });
    }
    expect(counts.reports).toBe(c.perReport.filter((x) => x !== null).length);
  });
});

describe('selective prediction against the brute-force and scikit-learn oracle', () => {
  it.each(oracle.selective.map((c, i) => [i, c] as const))('risk–coverage, AURC, coverage at target, calibration, case %i', (_i, c) => {
    const fields = c.fields as { confidence: number | null; score: number }[];
    const rc = riskCoverage(fields);
    const e = c.riskCoverage;
    expect(rc.withConfidence).toBe(e.n);
    expectClose(rc.confidenceShare, e.share);
    expectClose(rc.aurc, e.aurc);
    expect(rc.curve.map((p) => [p.confidence, p.fields])).toEqual(e.curve.map((p) => [p.confidence, p.fields]));
    rc.curve.forEach((p, k) => {
      expectClose(p.coverage, e.curve[k]!.coverage);
      expectClose(p.selectiveAccuracy, e.curve[k]!.selectiveAccuracy);
    });
    for (const target of c.targets) {
      const key = target === 1 ? '1.0' : target === 0 ? '0.0' : String(target);
      expectClose(coverageAtAccuracy(fields, target), (e.coverage as Record<string, number | null>)[key]!);
    }
    if (c.binary) {
      const cal = calibration(fields);
      const expected = c.calibration!;
      expectClose(cal.brier, expected.brier);
      expectClose(cal.ece, expected.ece);
      expect(cal.bins.map((b) => b.count)).toEqual(expected.bins);
    }
  });

  it.each(oracle.logprob.map((c, i) => [i, c] as const))('token log-probability confidence, case %i', (_i, c) => {
    expectClose(logprobConfidence(c.tokens, c.start, c.end), c.expected);
  });

  it('covers the edge rules: absent and empty gold, 0.3 and 1.0 confidences, ties', () => {
    const reports = oracle.spans.flatMap((c) => c.reports);
    expect(reports.some((r) => r.gold === null)).toBe(true);
    expect(reports.some((r) => Array.isArray(r.gold) && r.gold.length === 0)).toBe(true);
    const points = oracle.spans.flatMap((c) => KINDS.map((k) => c.expected[k].point));
    expect(points.some((p) => p[2] === null)).toBe(true);
    expect(points.some((p) => p[0] === null && p[1] !== null && p[2] === 0)).toBe(true);
    const confidences = oracle.selective.flatMap((c) => c.fields.map((f) => f.confidence));
    expect(confidences).toContain(0.3);
    expect(confidences).toContain(1);
    expect(confidences).toContain(null);
    expect(oracle.selective.some((c) => c.riskCoverage.curve.length < c.riskCoverage.n)).toBe(true);
  });
});
