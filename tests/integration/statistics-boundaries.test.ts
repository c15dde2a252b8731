import { createDataset, createProject, createUseCase, csv, importAnnotations, importPredictions, importReports, jsonl, ok } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Boundary rules of docs/scoring.md §1 (numeric tolerance inclusive in spite of binary rounding) and
 * §6 (scores compared with relative tolerance 1e-12), through the API.
 */
describe('statistics at the boundaries', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('numeric tolerance 0.1 counts 1.1 against 1.0 as equal: accuracy 0.75, not 0.25', async () => {
    const project = await createProject(t, 'Tolerance boundary');
    const useCase = await createUseCase(t, project.id, { variables: [{ key: 'size', type: 'NUMERIC', tolerance: 0.1 }] });
    const datasetId = await createDataset(t, useCase.id);
    const ids = ['T1', 'T2', 'T3', 'T4'];
    await importReports(t, datasetId, jsonl(ids.map((id) => ({ id, text: `Report ${id}` }))));
    await importAnnotations(t, datasetId, 'Reference', 'CSV', csv([['id', 'size'], ['T1', '1.0'], ['T2', '0.0'], ['T3', '2.0'], ['T4', '5.0']]), { isReference: true });
    const predictions = ['1.1', '0,1', 2.1, 5.2];
    const { run } = await importPredictions(t, datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'm',
      content: jsonl(ids.map((id, i) => ({ id, extracted_data: { size: predictions[i] } }))),
    });
    const data = ok(
      await t.gql(`query ($id: ID!) { node(id: $id) { ... on Run { scores(options: { resamples: 0 }) { macroAverage { value } variables { metric estimate { value } } } } } }`, {
        id: run.id,
      }),
    );
    expect(data.node.scores.variables[0].metric).toBe('ACCURACY');
    expect(data.node.scores.variables[0].estimate.value).toBe(0.75);
    expect(data.node.scores.macroAverage.value).toBe(0.75);
  });

  it('worked case: two balanced accuracies of 7/18 that differ in the last bit are no preference; the optimum is [B, A], score 1', async () => {
    const project = await createProject(t, 'Tie within rounding');
    const useCase = await createUseCase(t, project.id, {
      variables: [
        { key: 'v1', type: 'CATEGORICAL', options: ['c1', 'c2', 'c3'] },
        { key: 'v2', type: 'NUMERIC' },
        { key: 'v3', type: 'NUMERIC' },
        { key: 'v4', type: 'NUMERIC' },
      ],
    });
    const datasetId = await createDataset(t, useCase.id);
    const ids = Array.from({ length: 16 }, (_, i) => `R${String(i + 1).padStart(2, '0')}`);
    await importReports(t, datasetId, jsonl(ids.map((id) => ({ id, text: `Report ${id}` }))));
    // Reference v1: 3 × c1, 6 × c2, 7 × c3; numeric references: the report number.
    const v1 = [...Array(3).fill('c1'), ...Array(6).fill('c2'), ...Array(7).fill('c3')] as string[];
    await importAnnotations(t, datasetId, 'Reference', 'CSV', csv([['id', 'v1', 'v2', 'v3', 'v4'], ...ids.map((id, i) => [id, v1[i]!, i, i, i])]), {
      isReference: true,
    });
    // A: recalls 0, 1/6, 1; v2 and v4 right on 8 reports; v3 right on all 16.
    const aV1 = [...Array(4).fill('c2'), ...Array(5).fill('c1'), ...Array(7).fill('c3')] as string[];
    // B: recalls 2/3, 1/2, 0; v2 and v4 right on 9 reports; v3 right on none.
    const bV1 = ['c1', 'c1', 'c2', 'c2', 'c2', 'c2', 'c1', 'c1', 'c1', ...Array(7).fill('c1')] as string[];
    const rows = (v1s: string[], rightV2: number, rightV3: number) =>
      jsonl(ids.map((id, i) => ({ id, extracted_data: { v1: v1s[i], v2: i < rightV2 ? i : i + 100, v3: i < rightV3 ? i : i + 100, v4: i < rightV2 ? i : i + 100 } })));
    await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'model-a', name: 'A', content: rows(aV1, 8, 16) });
    await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'model-b', name: 'B', content: rows(bV1, 9, 0) });

    const data = ok(
      await t.gql(
        `query ($u: ID!, $d: ID!) { node(id: $u) { ... on UseCase {
          runs: leaderboard(datasetId: $d, options: { resamples: 50 }) { exact score lowerBound voterCount entries { rank rankCiLow rankCiHigh run { name scores(options: { resamples: 0 }) { variables { variable { key } estimate { value } } } } } }
          models: leaderboard(datasetId: $d, level: MODEL, options: { resamples: 0 }) { exact score entries { model { servedName } } }
        } } }`,
        { u: useCase.id, d: datasetId },
      ),
    );
    const runs = data.node.runs;
    const v1Scores = runs.entries.map((e: any) => e.run.scores.variables.find((v: any) => v.variable.key === 'v1').estimate.value);
    // The two scores really differ in floating point: the test guards the comparison, not the sum.
    expect(new Set(v1Scores)).toEqual(new Set([0.3888888888888889, 0.38888888888888884]));
    expect(runs.entries.map((e: any) => e.run.name)).toEqual(['B', 'A']);
    expect(runs.score).toBe(1);
    expect(runs.lowerBound).toBe(1);
    expect(runs.exact).toBe(true);
    expect(runs.voterCount).toBe(4);
    for (const e of runs.entries) expect(e.rankCiLow).toBeLessThanOrEqual(e.rank), expect(e.rankCiHigh).toBeGreaterThanOrEqual(e.rank);
    expect(data.node.models.entries.map((e: any) => e.model.servedName)).toEqual(['model-b', 'model-a']);
    expect(data.node.models.score).toBe(1);
  });
});
