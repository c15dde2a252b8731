import { createDataset, createProject, createUseCase, csv, importAnnotations, importReports, jsonl, ok } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

describe('chance-corrected agreement', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("Krippendorff's published example through the API: nominal α 0.743 (categorical), interval α 0.849 (numeric); Cohen's κ of a pair by hand", async () => {
    const project = await createProject(t, 'Chance-corrected agreement');
    const useCase = await createUseCase(t, project.id, {
      variables: [
        { key: 'grade', type: 'CATEGORICAL', options: ['1', '2', '3', '4', '5'] },
        { key: 'count', type: 'NUMERIC' },
        { key: 'note', type: 'FREE_TEXT' },
      ],
    });
    const datasetId = await createDataset(t, useCase.id);
    const ids = Array.from({ length: 12 }, (_, i) => `U${i + 1}`);
    await importReports(t, datasetId, jsonl(ids.map((id) => ({ id, text: `Unit ${id}` }))));
    // Krippendorff (2011), example C: observers A–D, 12 units, blanks = not rated.
    const data: Record<string, (number | null)[]> = {
      A: [1, 2, 3, 3, 2, 1, 4, 1, 2, null, null, null],
      B: [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, null, 3],
      C: [null, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, null],
      D: [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, null],
    };
    const annotators: Record<string, string> = {};
    for (const [name, values] of Object.entries(data)) {
      const rows = ids.flatMap((id, i) => (values[i] === null ? [] : [[id, String(values[i]), String(values[i]), 'x']]));
      const imported = await importAnnotations(t, datasetId, name, 'CSV', csv([['id', 'grade', 'count', 'note'], ...rows]), { isReference: name === 'A' });
      annotators[name] = imported.annotator.id;
    }
    const result = ok(
      await t.gql(
        `query ($d: ID!) { node(id: $d) { ... on Dataset { chanceCorrectedAgreement(options: { resamples: 200 }) {
          annotators { name }
          variables { variable { key } alphaLevel krippendorffAlpha { value ciLow ciHigh resamples } fleissKappa { value } fleissReports
            pairs { a { name } b { name } n kappa { value ciLow ciHigh } } } } } } }`,
        { d: datasetId },
      ),
    );
    const agreement = result.node.chanceCorrectedAgreement;
    expect(agreement.annotators.map((a: any) => a.name)).toEqual(['A', 'B', 'C', 'D']);
    // Free text has no chance-corrected agreement.
    expect(agreement.variables.map((v: any) => v.variable.key)).toEqual(['grade', 'count']);
    const [grade, count] = agreement.variables;
    expect(grade.alphaLevel).toBe('NOMINAL');
    expect(grade.krippendorffAlpha.value).toBeCloseTo(0.743, 3);
    expect(count.alphaLevel).toBe('INTERVAL');
    expect(count.krippendorffAlpha.value).toBeCloseTo(0.849, 3);
    expect(grade.krippendorffAlpha.ciLow).toBeLessThanOrEqual(grade.krippendorffAlpha.value);
    expect(grade.krippendorffAlpha.ciHigh).toBeGreaterThanOrEqual(grade.krippendorffAlpha.value);
    // Units every observer rated: 2–9 (unit 1 lacks C).
    expect(grade.fleissReports).toBe(8);
    const ab = grade.pairs.find((p: any) => p.a.name === 'A' && p.b.name === 'B');
    // Units 1–9: agreement 8/9; marginals A {1:3, 2:3, 3:2, 4:1}, B {1:2, 2:4, 3:2, 4:1}: p_e = 23/81, κ = 49/58.
    expect(ab.n).toBe(9);
    expect(ab.kappa.value).toBeCloseTo(49 / 58, 12);
    expect(grade.pairs).toHaveLength(6);
  });
});
