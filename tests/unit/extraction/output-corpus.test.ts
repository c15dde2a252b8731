import corpus from '../../fixtures/extraction/output-corpus.json';
import { parseOutput } from '../../../src/extraction/output-parser';
import type { NormalisedCell } from '../../../src/analytics/types';
import type { ExtractionVariable } from '../../../src/extraction/types';

type Expected = { v: unknown } | string;
interface Case {
  name: string;
  variables: string;
  raw: string;
  reasoning: string | null;
  finishReason: string | null;
  expected: {
    json: boolean;
    parseError: boolean;
    truncated: boolean;
    cells: Record<string, Expected>;
    rest?: string;
    reasoningContains?: string;
  };
}

const sets = corpus.variableSets as unknown as Record<string, ExtractionVariable[]>;
const cases = corpus.cases as unknown as Case[];

function simplify(cell: NormalisedCell): Expected {
  if (cell.status === 'VALUE') return { v: cell.value };
  if (cell.status === 'MISSING') return 'MISSING';
  return `INVALID:${cell.category}`;
}

describe('output corpus', () => {
  it('has at least 60 cases with unique names', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const variables = sets[c.variables];
    expect(variables).toBeDefined();
    const out = parseOutput({ content: c.raw, reasoning: c.reasoning, finishReason: c.finishReason }, variables!);
    const expectedCells: Record<string, Expected> = {};
    for (const v of variables!) {
      const e = c.expected.cells[v.key] ?? c.expected.rest;
      if (e === undefined) throw new Error(`case "${c.name}" says nothing about "${v.key}"`);
      expectedCells[v.key] = e;
    }
    const got: Record<string, Expected> = {};
    for (const v of variables!) got[v.key] = simplify(out.cells[v.key]!);
    expect(got).toEqual(expectedCells);
    expect(out.json !== null).toBe(c.expected.json);
    expect(out.parseError !== null).toBe(c.expected.parseError);
    expect(out.truncated).toBe(c.expected.truncated);
    if (c.expected.reasoningContains) expect(out.reasoning ?? '').toContain(c.expected.reasoningContains);
  });
});
