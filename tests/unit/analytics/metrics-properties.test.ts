import fc from 'fast-check';
import { bootstrapGrid } from '../../../src/analytics/bootstrap';
import { balancedAccuracy, groupedMean, itemScore, scoreVariable } from '../../../src/analytics/metrics';
import { normaliseValue } from '../../../src/analytics/normalise';
import type { InvalidCategory, NormalisedCell, VariableSpec } from '../../../src/analytics/types';

const labels = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const labelled = fc
  .array(fc.tuple(labels, fc.option(labels, { nil: null })), { minLength: 1, maxLength: 40 })
  .map((pairs) => ({ yTrue: pairs.map((p) => p[0]), yPred: pairs.map((p) => p[1]) }));

describe('balanced accuracy properties', () => {
  it('is invariant under relabelling of classes', () => {
    fc.assert(
      fc.property(labelled, fc.shuffledSubarray(['v', 'w', 'x', 'y', 'z'], { minLength: 5, maxLength: 5 }), ({ yTrue, yPred }, perm) => {
        const map = new Map(['a', 'b', 'c', 'd', 'e'].map((l, i) => [l, perm[i]!]));
        const relabelled = balancedAccuracy(
          yTrue.map((y) => map.get(y)!),
          yPred.map((p) => (p === null ? null : map.get(p)!)),
        );
        return relabelled === balancedAccuracy(yTrue, yPred);
      }),
    );
  });

  it('is invariant under permutation of reports', () => {
    fc.assert(
      fc.property(labelled, fc.integer(), ({ yTrue, yPred }, seed) => {
        const order = yTrue.map((_, i) => i).sort((i, j) => ((i * 7919 + seed) % 101) - ((j * 7919 + seed) % 101) || i - j);
        const a = balancedAccuracy(order.map((i) => yTrue[i]!), order.map((i) => yPred[i]!));
        return Math.abs(a - balancedAccuracy(yTrue, yPred)) < 1e-12;
      }),
    );
  });

  it('lies in [0, 1] and is 1 exactly when every prediction is right', () => {
    fc.assert(
      fc.property(labelled, ({ yTrue, yPred }) => {
        const s = balancedAccuracy(yTrue, yPred);
        return s >= 0 && s <= 1 && (s === 1) === yTrue.every((y, i) => yPred[i] === y);
      }),
    );
  });
});

const cellArb = (values: fc.Arbitrary<string | number>): fc.Arbitrary<NormalisedCell> =>
  fc.oneof(
    values.map((value) => ({ status: 'VALUE' as const, value })),
    fc.constant({ status: 'MISSING' as const }),
    fc
      .constantFrom<InvalidCategory>('MISSING', 'OUT_OF_FORMAT', 'MULTI_VALUED', 'AMBIGUOUS', 'OTHER')
      .map((category) => ({ status: 'INVALID' as const, category })),
  );

describe('INVALID never counts as correct', () => {
  const specs: VariableSpec[] = [
    { key: 'c', type: 'CATEGORICAL', options: ['x', 'y'] },
    { key: 'n', type: 'NUMERIC', tolerance: 0.5 },
    { key: 'e', type: 'EXACT_STRING' },
    { key: 't', type: 'FREE_TEXT' },
    { key: 'l', type: 'LIST' },
  ];
  const similarity = () => 0.7;

  it('an INVALID prediction scores 0 against any reference, MISSING included', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...specs),
        cellArb(fc.constantFrom('x', 'y')),
        fc.constantFrom<InvalidCategory>('MISSING', 'OUT_OF_FORMAT', 'MULTI_VALUED', 'AMBIGUOUS', 'OTHER'),
        (spec, ref, category) => itemScore(spec, ref, { status: 'INVALID', category }, { similarity }) === 0,
      ),
    );
  });

  it('turning predictions INVALID never raises a variable score', () => {
    const grade: VariableSpec = { key: 'g', type: 'CATEGORICAL', options: ['x', 'y', 'z'] };
    fc.assert(
      fc.property(
        fc.array(fc.tuple(cellArb(fc.constantFrom('x', 'y', 'z')), cellArb(fc.constantFrom('x', 'y', 'z')), fc.boolean()), {
          minLength: 1,
          maxLength: 30,
        }),
        (rows) => {
          const refs = rows.map((r) => (r[0].status === 'INVALID' ? undefined : r[0]));
          const preds = rows.map((r) => r[1]);
          const spoiled = rows.map((r): NormalisedCell => (r[2] ? { status: 'INVALID', category: 'OTHER' } : r[1]));
          const a = scoreVariable(grade, refs, preds);
          const b = scoreVariable(grade, refs, spoiled);
          if (a.n === 0) return Number.isNaN(b.value);
          return b.value <= a.value + 1e-12 && b.accuracy.effective <= a.accuracy.effective + 1e-12;
        },
      ),
    );
  });

  it('a non-numeric answer is wrong even when the reference is MISSING', () => {
    const num: VariableSpec = { key: 'n', type: 'NUMERIC' };
    fc.assert(
      fc.property(fc.constantFrom('about ten', '>1', '3-4', 'ten', '3 or 4', 'possibly 2'), (raw) => {
        const pred = normaliseValue(num, raw);
        return pred.status === 'INVALID' && itemScore(num, { status: 'MISSING' }, pred) === 0;
      }),
    );
  });
});

describe('normalisation properties', () => {
  const num: VariableSpec = { key: 'n', type: 'NUMERIC' };
  it('a number, its decimal string and its decimal-comma string normalise alike', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const a = normaliseValue(num, x);
        const b = normaliseValue(num, String(x));
        const c = normaliseValue(num, String(x).replace('.', ','));
        const want = { status: 'VALUE', value: x === 0 ? 0 : x };
        const norm = (cell: NormalisedCell) => (cell.status === 'VALUE' && cell.value === 0 ? { status: 'VALUE', value: 0 } : cell);
        return [a, b, c].every((cell) => JSON.stringify(norm(cell)) === JSON.stringify(want));
      }),
    );
  });

  it('categorical matching ignores case and surrounding/internal whitespace', () => {
    const spec: VariableSpec = { key: 'c', type: 'CATEGORICAL', options: ['Střední stupeň', 'Mírná', 'G2'] };
    fc.assert(
      fc.property(
        fc.constantFrom(...(spec.options ?? [])),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
        fc.constantFrom(' ', '  ', '\t', ' \n '),
        (option, upper, ws) => {
          const variant = ws + [...option].map((ch, i) => (upper[i % 20] ? ch.toUpperCase() : ch.toLowerCase())).join('').replace(' ', ws) + ws;
          const cell = normaliseValue(spec, variant);
          return cell.status === 'VALUE' && cell.value === option;
        },
      ),
    );
  });
});

describe('bootstrap properties', () => {
  const gridArb = fc.record({
    n: fc.integer({ min: 2, max: 25 }),
    seed: fc.integer(),
    data: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 80, maxLength: 80 }),
  });
  const build = ({ n, data }: { n: number; data: number[] }) => {
    const at = (k: number) => data[k % data.length]!;
    const variables = [
      { key: 'cat', groups: Int32Array.from({ length: n }, (_, i) => (at(i) % 4) - 1) },
      { key: 'sim', groups: new Int32Array(n) },
    ];
    const runs = [0, 1].map((r) => ({
      id: `r${r}`,
      items: [
        Float64Array.from({ length: n }, (_, i) => (variables[0]!.groups[i]! < 0 ? NaN : at(i + 7 * r + 3) % 2)),
        Float64Array.from({ length: n }, (_, i) => at(i + 11 * r + 5) / 1000),
      ],
    }));
    return { variables, runs };
  };

  it('the same seed gives bit-identical intervals', () => {
    fc.assert(
      fc.property(gridArb, (g) => {
        const { variables, runs } = build(g);
        const a = bootstrapGrid({ variables, runs, resamples: 30, seed: g.seed });
        const b = bootstrapGrid({ variables, runs, resamples: 30, seed: g.seed });
        return Object.is(JSON.stringify(a.perVariable), JSON.stringify(b.perVariable)) && JSON.stringify(a.macro) === JSON.stringify(b.macro);
      }),
      { numRuns: 40 },
    );
  });

  it('the point estimate is the full-sample estimate', () => {
    fc.assert(
      fc.property(gridArb, (g) => {
        const { variables, runs } = build(g);
        const res = bootstrapGrid({ variables, runs, resamples: 20, seed: g.seed });
        return runs.every((run, r) =>
          variables.every((v, k) => Object.is(res.perVariable[r]![k]!.value, groupedMean(v.groups, run.items[k]!))),
        );
      }),
      { numRuns: 40 },
    );
  });
});
