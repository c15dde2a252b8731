import { Run } from '../../src/modules/run/run.entity';
import { UseCase } from '../../src/modules/use-case/use-case.entity';
import { createScoringServices, type ScoringServices } from '../../src/modules/scoring/scoring-services';
import { ThreadedStatistics } from '../../src/modules/scoring/statistics-threads';
import {
  createDataset,
  createLoadedDataset,
  createProject,
  importAnnotations,
  importPredictions,
  importReports,
  REPORT_TEXTS,
  reportsJsonl,
  rowId,
  STANDARD_REFERENCE,
  standardPredictions,
} from '../support/graphql-fixtures';
import { SERVER_ADMIN, startTestApp, type TestApp } from '../support/test-app';

/**
 * The scores of many runs (the records path, also taken with an embedding model) are
 * bootstrapped in the grid slices of the statistics threads: about two per grid the threads
 * compute at once, larger than the runs read at a time, with the numbers of one run per slice
 * on the request thread.
 */
describe('grid slices of the records path', () => {
  let t: TestApp;
  let datasetId: string;
  let useCaseId: string;
  const RUNS = 62;

  beforeAll(async () => {
    t = await startTestApp();
    const project = await createProject(t, 'grid slices');
    const loaded = await createLoadedDataset(t, project.id);
    datasetId = loaded.datasetId;
    useCaseId = loaded.useCase.id;
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true });
    let state = 7;
    const grade = () => {
      state = (state * 48271) % 2147483647;
      // G4 is no option of the grade: an invalid prediction, which conditional scoring leaves out.
      return ['G1', 'G2', 'G3', 'Not specified', 'G4'][state % 5]!;
    };
    for (let r = 0; r < RUNS; r++) {
      const grades = Array.from({ length: 5 }, grade);
      // Two strategies per model, crossed (variance partitioning below).
      await importPredictions(t, datasetId, {
        format: 'JSONL',
        layout: 'JSON_COLUMN',
        modelName: `model-${r >> 1}`,
        strategy: r % 2 === 0 ? 'ZERO_SHOT' : 'FEW_SHOT',
        content: standardPredictions(grades),
      });
    }
  });
  afterAll(() => t.close());

  it('takes slices of about runs / (2 · threads), with the numbers of one run per slice', async () => {
    const runs = await t.dataSource.getRepository(Run).find({ where: { datasetId: rowId(datasetId) }, order: { createdAt: 'ASC', id: 'ASC' } });
    expect(runs).toHaveLength(RUNS);
    const engine = new ThreadedStatistics(2);
    const slices: number[] = [];
    const grid = engine.grid.bind(engine);
    engine.grid = (variables, sliceRuns, multiplicities, confidence) => {
      slices.push(sliceRuns.length);
      return grid(variables, sliceRuns, multiplicities, confidence);
    };
    const threaded = createScoringServices(t.dataSource, null, { statistics: engine });
    const oneByOne = createScoringServices(t.dataSource, null, { runsPerSlice: 1 });
    try {
      for (const scoring of ['EFFECTIVE', 'CONDITIONAL'] as const) {
        slices.length = 0;
        const scoresOf = (service: ScoringServices) => service.runScores.runScoresMany(SERVER_ADMIN, runs, service.scoring.resolveOptions({ resamples: 200, seed: 3, scoring } as never));
        const [onThreads, inline] = [await scoresOf(threaded), await scoresOf(oneByOne)];
        // 62 runs, two grids at once: slices of 16 (at least 14, the slice on the request thread
        // at this size), the last one shorter; a conditional grid is one run per grid.
        expect(slices).toEqual(scoring === 'EFFECTIVE' ? [16, 16, 16, 14] : Array(RUNS).fill(1));
        const numbers = (all: typeof onThreads) =>
          all.map((s) => {
            if (s instanceof Error) throw s;
            return { macro: s.macroAverage, variables: s.variables.map((v) => ({ estimate: v.estimate, conditional: v.conditional })) };
          });
        expect(numbers(onThreads)).toEqual(numbers(inline));
      }
    } finally {
      await threaded.scoring.close();
      await oneByOne.scoring.close();
    }
  });

  it('partitions the variance of the same runs without drawing resamples or computing a grid', async () => {
    const engine = new ThreadedStatistics(1);
    const asked: string[] = [];
    const grid = engine.grid.bind(engine);
    const multiplicities = engine.multiplicities.bind(engine);
    engine.grid = (...args) => {
      asked.push('grid');
      return grid(...args);
    };
    engine.multiplicities = (...args) => {
      asked.push('multiplicities');
      return multiplicities(...args);
    };
    const service = createScoringServices(t.dataSource, null, { statistics: engine });
    try {
      const useCase = await t.dataSource.getRepository(UseCase).findOneByOrFail({ id: rowId(useCaseId) });
      const variance = await service.variance.varianceDecomposition(SERVER_ADMIN, useCase, rowId(datasetId));
      // Every run's five reports, each with a reference value: one observation each.
      expect(variance.observations).toBe(RUNS * 5);
      expect(variance.components.map((c) => [c.name, c.levelCount])).toEqual([
        ['model', RUNS / 2],
        ['strategy', 2],
      ]);
      expect(variance.warnings).toEqual([]);
      expect(asked).toEqual([]);
      // The same engine still bootstraps when asked for scores.
      const [scores] = await service.runScores.runScoresMany(SERVER_ADMIN, [(await t.dataSource.getRepository(Run).findOneByOrFail({ datasetId: rowId(datasetId) }))], service.scoring.resolveOptions({ resamples: 50, seed: 1 } as never));
      expect(scores).not.toBeInstanceOf(Error);
      expect(asked).toEqual(['multiplicities', 'grid']);
    } finally {
      await service.scoring.close();
    }
  });

  // Crossed random intercepts for model and strategy need two levels of each, and a fit needs
  // scores that vary: each case is a new dataset of the same use case.
  const PREDICTION = ['G1', 'G2', 'G3', 'G1', 'G2'];
  // Nothing extracted: every item scores 0, so every per-report score is 0.
  const NOTHING = null;
  it.each([
    {
      name: 'two models, one strategy',
      runs: [['model-a', 'ZERO_SHOT', PREDICTION], ['model-b', 'ZERO_SHOT', PREDICTION]],
      reports: 5,
      message: 'Variance partitioning needs scored runs of at least two models and at least two prompting strategies on this dataset; it has 2 models and 1 strategy',
    },
    {
      name: 'one model, two strategies',
      runs: [['model-a', 'ZERO_SHOT', PREDICTION], ['model-a', 'FEW_SHOT', PREDICTION]],
      reports: 5,
      message: 'Variance partitioning needs scored runs of at least two models and at least two prompting strategies on this dataset; it has 1 model and 2 strategies',
    },
    {
      name: 'nothing extracted by any run',
      runs: [['model-a', 'ZERO_SHOT', NOTHING], ['model-b', 'ZERO_SHOT', NOTHING], ['model-a', 'FEW_SHOT', NOTHING], ['model-b', 'FEW_SHOT', NOTHING]],
      reports: 5,
      message: 'Every per-report score on this dataset is the same, so there is no variance to partition',
    },
    {
      name: 'one report',
      runs: [['model-a', 'ZERO_SHOT', PREDICTION], ['model-b', 'FEW_SHOT', PREDICTION]],
      reports: 1,
      message: 'Variance partitioning needs at least three per-report scores on this dataset; it has 2',
    },
  ] as const)('says what is missing when variance partitioning cannot be fitted: $name', async ({ name, runs, reports, message }) => {
    const dataset = await createDataset(t, useCaseId, name);
    await importReports(t, dataset, reportsJsonl(Object.fromEntries(Object.entries(REPORT_TEXTS).slice(0, reports))));
    // The first `reports` reports: the reference CSV's header and rows, the predictions' lines.
    const reference = STANDARD_REFERENCE.split('\n').slice(0, reports + 1).join('\n') + '\n';
    await importAnnotations(t, dataset, 'Consensus', 'CSV', reference, { isReference: true });
    for (const [modelName, strategy, grades] of runs) {
      const lines = grades === null ? ['R1', 'R2', 'R3', 'R4', 'R5'].map((id) => JSON.stringify({ id, extracted_data: {} })) : standardPredictions([...grades]).split('\n');
      const content = lines.slice(0, reports).join('\n') + '\n';
      await importPredictions(t, dataset, { format: 'JSONL', layout: 'JSON_COLUMN', modelName, strategy, content });
    }
    const result = await t.gql('query($u: ID!, $d: ID!) { node(id: $u) { ... on UseCase { varianceDecomposition(datasetId: $d) { observations } } } }', { u: useCaseId, d: dataset });
    expect(result.errors?.map((e) => [e.extensions?.code, e.message])).toEqual([['BAD_USER_INPUT', message]]);
  });
});
