/**
 * Checks src/analytics against values recorded from scikit-learn, SciPy and NumPy by
 * tests/fixtures/analytics/generate_metrics_oracle.py (bootstrap on the multiplicity matrix
 * exported by export-bootstrap-multiplicities.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { interRaterAgreement } from '../../../src/analytics/agreement';
import { bootstrapGrid, bootstrapMultiplicities, gridPairedDifference, quantileType7 } from '../../../src/analytics/bootstrap';
import { cosine, similarityFromEmbeddings } from '../../../src/analytics/embedding/embedder';
import { lexicalEmbed } from '../../../src/analytics/embedding/lexical';
import { accuracy, balancedAccuracy, encodeReferences, itemScores, symmetricSimilarity } from '../../../src/analytics/metrics';
import type { MetricKind } from '../../../src/analytics/metrics';
import type { NormalisedCell, VariableSpec } from '../../../src/analytics/types';

const dir = join(__dirname, '..', '..', 'fixtures', 'analytics');
const oracle = JSON.parse(readFileSync(join(dir, 'metrics-oracle.json'), 'utf8'));
const multiplicities = JSON.parse(readFileSync(join(dir, 'bootstrap-multiplicities.json'), 'utf8'));

interface LabelCase {
  yTrue: string[];
  yPred: (string | null)[];
  weights: number[] | null;
  expected: number;
}

const close = (got: number, want: number | null, tol = 1e-12) => {
  if (want === null) expect(got).toBeNaN();
  else expect(Math.abs(got - want)).toBeLessThanOrEqual(tol);
};

describe('against scikit-learn', () => {
  it('balanced accuracy = balanced_accuracy_score (incl. sample weights, INVALID, predicted-only classes)', () => {
    const cases: LabelCase[] = oracle.balancedAccuracy;
    expect(cases.length).toBeGreaterThan(30);
    for (const c of cases) close(balancedAccuracy(c.yTrue, c.yPred, c.weights), c.expected);
  });

  it('accuracy = accuracy_score', () => {
    for (const c of oracle.accuracy as LabelCase[]) close(accuracy(c.yTrue, c.yPred), c.expected);
  });
});

describe('against SciPy and NumPy', () => {
  it('cosine = 1 − scipy.spatial.distance.cosine', () => {
    for (const c of oracle.cosine as { a: number[]; b: number[]; expected: number }[]) close(cosine(c.a, c.b), c.expected);
  });

  it('type-7 quantiles = numpy.quantile(method="linear"), bit for bit', () => {
    for (const c of oracle.quantiles as { values: number[]; levels: number[]; expected: number[] }[]) {
      const sorted = Float64Array.from(c.values).sort();
      c.levels.forEach((p, k) => expect(quantileType7(sorted, p)).toBe(c.expected[k]));
    }
  });

  it('lexical embedder = independent Python implementation', () => {
    const lex = oracle.lexical as { texts: string[]; nonzero: { index: number[]; value: number[] }[]; pairs: [number, number, number][] };
    const vecs = lex.texts.map((t) => lexicalEmbed(t));
    lex.nonzero.forEach((nz, k) => {
      const v = vecs[k]!;
      const idx = [...v.keys()].filter((i) => v[i] !== 0);
      expect(idx).toEqual(nz.index);
      nz.index.forEach((i, j) => close(v[i]!, nz.value[j]!, 1e-7));
    });
    for (const [i, j, s] of lex.pairs) close(cosine(vecs[i]!, vecs[j]!), s, 1e-6);
  });

  it('symmetric list similarity = NumPy formula', () => {
    const vectors = new Map<string, number[]>(Object.entries(oracle.listItemVectors));
    const sim = similarityFromEmbeddings(vectors);
    for (const c of oracle.symmetricSimilarity as { reference: string[]; prediction: string[]; expected: number }[]) {
      close(symmetricSimilarity(c.reference, c.prediction, sim), c.expected);
    }
  });
});

describe('bootstrap against NumPy/scikit-learn on the same resamples', () => {
  const bs = oracle.bootstrap;
  const N: number = bs.n;
  const B: number = bs.B;
  const W = bootstrapMultiplicities(N, B, bs.seed);

  it('the exported multiplicity matrix is what the generator draws today', () => {
    const rows: number[][] = multiplicities.rows;
    expect(rows.length).toBe(B);
    rows.forEach((row, b) => expect(Array.from(W.subarray(b * N, (b + 1) * N))).toEqual(row));
  });

  const specOf = (kind: MetricKind, key: string): VariableSpec =>
    kind === 'BALANCED_ACCURACY'
      ? { key, type: 'CATEGORICAL', options: ['G1', 'G2', 'G3', 'Yes'] }
      : kind === 'ACCURACY'
        ? { key, type: 'NUMERIC' }
        : { key, type: 'FREE_TEXT' };
  const cell = (kind: MetricKind, x: string | null): NormalisedCell =>
    x === null
      ? { status: 'INVALID', category: 'OTHER' }
      : x === 'MISSING'
        ? { status: 'MISSING' }
        : { status: 'VALUE', value: kind === 'ACCURACY' ? Number(x) : x };
  const similarity = similarityFromEmbeddings(new Map(Object.entries(bs.textVectors as Record<string, number[]>)));
  const variables = (bs.variables as { key: string; kind: MetricKind; reference: (string | null)[] }[]).map((v) => {
    const spec = specOf(v.kind, v.key);
    const refs = v.reference.map((x) => (x === null ? undefined : cell(v.kind, x)));
    return { spec, refs, groups: encodeReferences(spec, refs).groups };
  });
  const runs = (bs.runs as { id: string; predictions: (string | null)[][] }[]).map((r) => ({
    id: r.id,
    items: variables.map((v, k) =>
      itemScores(v.spec, v.refs, r.predictions[k]!.map((x) => cell(bs.variables[k].kind, x)), { similarity }),
    ),
  }));
  const grid = bootstrapGrid({
    variables: variables.map((v) => ({ key: v.spec.key, groups: v.groups })),
    runs,
    resamples: B,
    seed: bs.seed,
    confidence: bs.confidence,
  });
  const V = variables.length;

  it('points, every replicate and every interval match to 1e-12', () => {
    runs.forEach((_, r) => {
      variables.forEach((_, v) => {
        close(grid.points[r * V + v]!, bs.points[r][v]);
        const reps: (number | null)[] = bs.replicates[r][v];
        reps.forEach((x, b) => close(grid.replicates[(r * V + v) * B + b]!, x));
        const [lo, hi, m] = bs.intervals[r][v];
        const e = grid.perVariable[r]![v]!;
        close(e.ciLow, lo);
        close(e.ciHigh, hi);
        expect(e.resamples).toBe(m);
      });
      close(grid.macro[r]!.value, bs.macroPoints[r]);
      close(grid.macro[r]!.ciLow, bs.macroIntervals[r][0]);
      close(grid.macro[r]!.ciHigh, bs.macroIntervals[r][1]);
    });
  });

  it('paired differences and p-values match', () => {
    for (const p of bs.paired as { a: number; b: number; variable: number | null; value: number; ciLow: number; ciHigh: number; pValue: number }[]) {
      const d = gridPairedDifference(grid, p.a, p.b, p.variable);
      close(d.estimate.value, p.value);
      close(d.estimate.ciLow, p.ciLow);
      close(d.estimate.ciHigh, p.ciHigh);
      close(d.pValue, p.pValue);
    }
  });

  it('inter-rater agreement matches pairwise balanced_accuracy_score with sample weights', () => {
    const ag = oracle.agreement;
    const spec: VariableSpec = { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'] };
    const annotators = Object.entries(ag.annotators as Record<string, (string | null)[]>).map(([id, labels]) => ({
      id,
      records: labels.map((x) => (x === null ? undefined : { grade: cell('BALANCED_ACCURACY', x) })),
    }));
    const r = interRaterAgreement({ specs: [spec], annotators, multiplicities: W, confidence: bs.confidence });
    close(r.perVariable[0]!.estimate.value, ag.value);
    (ag.replicates as (number | null)[]).forEach((x, b) => close(r.replicates[b]!, x));
    close(r.perVariable[0]!.estimate.ciLow, ag.interval[0]);
    close(r.perVariable[0]!.estimate.ciHigh, ag.interval[1]);
    close(r.macro.value, ag.value);
  });
});
