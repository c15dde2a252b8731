import { bootstrapGrid } from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import { lexicalSimilarity } from '../../../src/analytics/embedding/lexical';
import { buildGridInput, codeCells, codedItemScores, decodeCells, gridItemScores, RunItemScorer, type GridInputOptions } from '../../../src/analytics/grid-input';
import { scoreVariable } from '../../../src/analytics/metrics';
import { cellOf, normaliseRecord, type RecordCell } from '../../../src/analytics/normalise';
import type { VariableSpec } from '../../../src/analytics/types';

const specs: VariableSpec[] = [
  { key: 'birads', type: 'CATEGORICAL', options: ['3', '4A', '4B'], collapseMap: { '4A': '4', '4B': '4' }, weight: 2 },
  { key: 'size', type: 'NUMERIC' },
  { key: 'organs', type: 'LIST' },
];
const refs = [
  { birads: '4A', size: 10, organs: ['liver'] },
  { birads: '3', organs: [] },
  { birads: '4B', size: 2, organs: ['lung', 'bone'] },
].map((r) => normaliseRecord(specs, r, 'reference'));
const runRecords = [
  { birads: '4B', size: '10', organs: ['liver'] },
  { birads: '3', size: 1, organs: 'none' },
  undefined,
].map((r) => (r === undefined ? undefined : normaliseRecord(specs, r, 'prediction')));
const similarity = () => 0.5;

describe('buildGridInput', () => {
  it('gives the same points as scoreVariable', () => {
    const input = buildGridInput(specs, refs, [{ id: 'run', records: runRecords }], { similarity });
    const grid = bootstrapGrid({ ...input, resamples: 10, seed: 1 });
    specs.forEach((spec, v) => {
      const s = scoreVariable(
        spec,
        refs.map((r) => r[spec.key]),
        runRecords.map((r) => r?.[spec.key]),
        { similarity },
      );
      expect(grid.points[v]).toBeCloseTo(s.value, 15);
    });
    expect(input.variables.map((v) => v.weight)).toEqual([2, 1, 1]);
    expect(Array.from(input.variables[1]!.groups)).toEqual([0, -1, 0]);
  });

  it('supports collapsed and plain-accuracy scoring', () => {
    const collapsed = buildGridInput(specs, refs, [{ id: 'run', records: runRecords }], { similarity, collapsed: true });
    const g = bootstrapGrid({ ...collapsed, resamples: 5 });
    const s = scoreVariable(specs[0]!, refs.map((r) => r.birads), runRecords.map((r) => r?.birads));
    expect(g.points[0]).toBeCloseTo(s.collapsed!.primary.effective, 15);
    const acc = buildGridInput(specs, refs, [{ id: 'run', records: runRecords }], { metric: 'ACCURACY' });
    const ga = bootstrapGrid({ ...acc, resamples: 5 });
    expect(ga.points[0]).toBeCloseTo(s.accuracy.effective, 15);
    // organs: [liver]=[liver] right, []=none right, third report has no prediction
    expect(ga.points[2]).toBeCloseTo(2 / 3, 15);
  });

  it('checks run lengths', () => {
    expect(() => buildGridInput(specs, refs, [{ id: 'short', records: [] }])).toThrow(AnalyticsError);
  });
});

describe('variables named like inherited object properties', () => {
  it('a record without the key has no cell, whatever its prototype holds', () => {
    const spec: VariableSpec = { key: 'constructor', type: 'CATEGORICAL', options: ['a', 'b'] };
    const proto: VariableSpec = { key: '__proto__', type: 'CATEGORICAL', options: ['a', 'b'] };
    const references = [JSON.parse('{"constructor": {"status": "VALUE", "value": "a"}, "__proto__": {"status": "VALUE", "value": "b"}}'), {}];
    const predictions = [{}, JSON.parse('{"constructor": {"status": "VALUE", "value": "a"}, "__proto__": {"status": "VALUE", "value": "b"}}')];
    const { variables, runs } = buildGridInput([spec, proto], references, [{ id: 'r', records: predictions }]);
    // Report 2 has no reference for either variable (no group, no item score); report 1's
    // prediction has no cell (scored 0).
    expect(Array.from(variables[0]!.groups)).toEqual([0, -1]);
    expect(Array.from(variables[1]!.groups)).toEqual([0, -1]);
    expect(Array.from(runs[0]!.items[0]!)).toEqual([0, NaN]);
    expect(Array.from(runs[0]!.items[1]!)).toEqual([0, NaN]);
    expect(cellOf({}, 'toString')).toBeUndefined();
    expect(cellOf(JSON.parse('{"__proto__": 1}'), '__proto__')).toBe(1);
  });
});

describe('codedItemScores', () => {
  const lcg = (seed: number) => {
    let x = seed >>> 0;
    return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  };
  const typed: VariableSpec[] = [
    { key: 'c', type: 'CATEGORICAL', options: ['a', 'b', 'c', 'd'], collapseMap: { a: 'ab', b: 'ab' } },
    { key: 'b', type: 'BINARY', options: ['yes', 'no'] },
    { key: 'n', type: 'NUMERIC', tolerance: 0.5 },
    { key: 'e', type: 'EXACT_STRING' },
    { key: 't', type: 'FREE_TEXT' },
    { key: 'l', type: 'LIST' },
  ];
  const lexical = lexicalSimilarity();
  /** A column of `n` reports drawn from `distinct` cells of the spec's kind, as shared objects, with absent and invalid cells. */
  const column = (spec: VariableSpec, n: number, distinct: number, rnd: () => number, nulls: boolean): (RecordCell | null)[] => {
    const pool: (RecordCell | null)[] = [{ status: 'MISSING' }, { status: 'INVALID', category: 'OUT_OF_FORMAT' }];
    if (nulls) pool.push(null);
    for (let k = 0; pool.length < distinct; k++) {
      const value =
        spec.type === 'NUMERIC' ? k * 0.4 : spec.type === 'LIST' ? [`x${k % 5}`, `y${k % 3}`].slice(0, 1 + (k % 2)) : spec.options ? spec.options[k % spec.options.length]! : `text ${k} of ${k % 7}`;
      pool.push({ status: 'VALUE', value } as RecordCell);
    }
    return Array.from({ length: n }, () => (rnd() < 0.1 ? undefined : pool[Math.floor(rnd() * pool.length)]!));
  };
  const same = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

  it('equals gridItemScores bit for bit for every variable type and option, through the table and without it', () => {
    const rnd = lcg(7);
    const options: GridInputOptions[] = [{ similarity: lexical }, { similarity: lexical, collapsed: true }, { metric: 'ACCURACY' }];
    let compared = 0;
    for (const spec of typed) {
      for (const opts of options) {
        // 12 distinct cells of each side: a table of pairs; 400 × 400: more pairs than a table holds.
        for (const [n, distinct] of [
          [300, 12],
          [3000, 400],
        ] as const) {
          const references = column(spec, n, distinct, rnd, false) as RecordCell[];
          const predictions = column(spec, n, distinct, rnd, true);
          const expected = gridItemScores(spec, references, predictions, opts);
          const coded = codedItemScores(spec, codeCells(references), codeCells(predictions), opts);
          expect({ spec: spec.key, opts, n, same: same(coded, expected) }).toEqual({ spec: spec.key, opts, n, same: true });
          compared++;
        }
      }
    }
    expect(compared).toBe(36);
  });

  it('RunItemScorer gives each run what gridItemScores gives, equal cells of different runs scored once', () => {
    const rnd = lcg(11);
    let compared = 0;
    let scorings = 0;
    for (const spec of typed) {
      for (const opts of [{ similarity: lexical }, { similarity: lexical, collapsed: true }, { metric: 'ACCURACY' }] as GridInputOptions[]) {
        // 2,000 distinct cells a run: free text outgrows the shared table after a few runs.
        for (const [n, distinct] of [
          [300, 12],
          [2500, 2000],
        ] as const) {
          const references = column(spec, n, distinct, rnd, false) as RecordCell[];
          const counting: GridInputOptions = { ...opts, similarity: opts.similarity ? (a, b) => (scorings++, opts.similarity!(a, b)) : undefined };
          const scorer = new RunItemScorer(spec, codeCells(references), counting);
          const before = scorings;
          for (let run = 0; run < 5; run++) {
            // Each run read on its own: equal cells are separate objects (a JSON round trip).
            const predictions = (JSON.parse(JSON.stringify(column(spec, n, distinct, lcg(100 + run), true))) as (RecordCell | null)[]).map((c): RecordCell | null => c ?? undefined);
            predictions.forEach((c, i) => c === undefined && i % 5 === 0 && (predictions[i] = null));
            const out = new Float64Array(n);
            scorer.scoresInto(codeCells(predictions), out);
            const expected = gridItemScores(spec, references, predictions, opts);
            expect({ spec: spec.key, opts: Object.keys(opts), n, run, same: same(out, expected) }).toEqual({ spec: spec.key, opts: Object.keys(opts), n, run, same: true });
            compared++;
          }
          // Free text with few distinct cells: the five runs' pairs were scored once, not five times.
          if (spec.type === 'FREE_TEXT' && opts.similarity && distinct === 12) expect(scorings - before).toBeLessThan(12 * 12);
        }
      }
    }
    expect(compared).toBe(180);
    // One reference cell (all MISSING) and thousands of distinct texts: the cells kept, not the table, run out first.
    const text = typed.find((t) => t.type === 'FREE_TEXT')!;
    const missing: RecordCell = { status: 'MISSING' };
    const scorer = new RunItemScorer(text, codeCells(new Array<RecordCell>(6000).fill(missing)), { similarity: lexical });
    for (let run = 0; run < 2; run++) {
      const predictions = Array.from({ length: 6000 }, (_, i): RecordCell => (i % 7 === 0 ? { status: 'MISSING' } : { status: 'VALUE', value: `note ${run} ${i}` }));
      const out = new Float64Array(6000);
      scorer.scoresInto(codeCells(predictions), out);
      expect(same(out, gridItemScores(text, new Array<RecordCell>(6000).fill(missing), predictions, { similarity: lexical }))).toBe(true);
    }
    expect((scorer as unknown as { predictionCells: unknown[] }).predictionCells.length).toBeLessThanOrEqual(4096);
    expect(() => new RunItemScorer(typed[0]!, codeCells([undefined])).scoresInto(codeCells([undefined]), new Float64Array(2))).toThrow(AnalyticsError);
  });

  it('codes equal objects alike and absent cells as −1, and decodes to the column', () => {
    const a: RecordCell = { status: 'VALUE', value: 'a' };
    const copy: RecordCell = { status: 'VALUE', value: 'a' };
    const cells = [a, undefined, copy, a, null];
    const coded = codeCells(cells);
    expect(Array.from(coded.codes)).toEqual([0, -1, 1, 0, 2]);
    expect(coded.cells).toEqual([a, copy, null]);
    expect(decodeCells(coded)).toEqual(cells);
    expect(decodeCells(coded)[3]).toBe(a);
  });

  it('checks the columns have one length', () => {
    expect(() => codedItemScores(typed[0]!, codeCells([undefined, undefined]), codeCells([undefined]))).toThrow(AnalyticsError);
  });
});
