import type { Principal } from '../../src/modules/api-key/principal';
import { Run } from '../../src/modules/run/run.entity';
import { ScoringService } from '../../src/modules/scoring/scoring.service';
import { ThreadedStatistics } from '../../src/modules/scoring/statistics-threads';
import { createLoadedDataset, createProject, importAnnotations, importPredictions, rowId, STANDARD_REFERENCE, standardPredictions } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The scores of many runs (the records path, also taken with an embedding model) are
 * bootstrapped in the grid slices of the statistics threads: about two per grid the threads
 * compute at once, larger than the runs read at a time, with the numbers of one run per slice
 * on the request thread.
 */
describe('grid slices of the records path', () => {
  let t: TestApp;
  let datasetId: string;
  const admin: Principal = { keyId: 'test', projectId: null, role: null, serverAdmin: true };
  const RUNS = 62;

  beforeAll(async () => {
    t = await startTestApp();
    const project = await createProject(t, 'grid slices');
    datasetId = (await createLoadedDataset(t, project.id)).datasetId;
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true });
    let state = 7;
    const grade = () => {
      state = (state * 48271) % 2147483647;
      // G4 is no option of the grade: an invalid prediction, which conditional scoring leaves out.
      return ['G1', 'G2', 'G3', 'Not specified', 'G4'][state % 5]!;
    };
    for (let r = 0; r < RUNS; r++) {
      const grades = Array.from({ length: 5 }, grade);
      await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: `model-${r}`, content: standardPredictions(grades) });
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
    const threaded = new ScoringService(t.dataSource, null, { statistics: engine });
    const oneByOne = new ScoringService(t.dataSource, null, { runsPerSlice: 1 });
    try {
      for (const scoring of ['EFFECTIVE', 'CONDITIONAL'] as const) {
        slices.length = 0;
        const scoresOf = (service: ScoringService) => service.runScoresMany(admin, runs, service.resolveOptions({ resamples: 200, seed: 3, scoring } as never));
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
      await threaded.close();
      await oneByOne.close();
    }
  });
});
