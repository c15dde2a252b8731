import { RankingLevel } from '../../src/modules/scoring/stats.types';
import { createScoringServices } from '../../src/modules/scoring/scoring-services';
import { UseCase } from '../../src/modules/use-case/use-case.entity';
import {
  createLoadedDataset,
  createProject,
  importAnnotations,
  importPredictions,
  ok,
  rowId,
  STANDARD_REFERENCE,
  standardPredictions,
} from '../support/graphql-fixtures';
import { SERVER_ADMIN, startTestApp, type TestApp } from '../support/test-app';

/**
 * The leaderboard keeps each run's item scores by the content of its predictions: after one run
 * lands or changes only that run's predictions are read, and the ranking equals one computed
 * from nothing cached.
 */
describe('leaderboard with item scores cached per run', () => {
  let t: TestApp;
  let useCaseId: string;
  let datasetId: string;

  const BOARD = `query($id: ID!, $ds: ID!, $scoring: ScoringMode!) { node(id: $id) { ... on UseCase {
    leaderboard(datasetId: $ds, options: { resamples: 200, seed: 11, scoring: $scoring }) {
      exact score lowerBound voterCount entries { rank rankCiLow rankCiHigh strategy run { id name } macroAverage { value ciLow ciHigh resamples } } } } } }`;

  async function board(scoring: 'EFFECTIVE' | 'CONDITIONAL') {
    return ok(await t.gql(BOARD, { id: useCaseId, ds: datasetId, scoring })).node.leaderboard;
  }

  /** The same leaderboard from a service with nothing cached, in GraphQL's shape. */
  async function fresh(scoring: 'EFFECTIVE' | 'CONDITIONAL', runsPerSlice?: number) {
    const service = createScoringServices(t.dataSource, null, runsPerSlice === undefined ? {} : { runsPerSlice });
    try {
      const useCase = await t.dataSource.getRepository(UseCase).findOneByOrFail({ id: rowId(useCaseId) });
      const options = service.scoring.resolveOptions({ resamples: 200, seed: 11, scoring } as never);
      const ranking = await service.leaderboards.leaderboard(SERVER_ADMIN, useCase, rowId(datasetId), RankingLevel.RUN, options);
      expect(service.scoring.runItems.stats.hits).toBe(0);
      return ranking.entries.map((e) => ({
        rank: e.rank,
        rankCiLow: e.rankCiLow,
        rankCiHigh: e.rankCiHigh,
        run: e.run!.id,
        macroAverage: { value: e.macroAverage!.value, ciLow: e.macroAverage!.ciLow, ciHigh: e.macroAverage!.ciHigh },
      }));
    } finally {
      await service.scoring.revisions.close();
    }
  }

  function shape(entries: any[]) {
    return entries.map((e) => ({
      rank: e.rank,
      rankCiLow: e.rankCiLow,
      rankCiHigh: e.rankCiHigh,
      run: rowId(e.run.id),
      macroAverage: { value: e.macroAverage.value, ciLow: e.macroAverage.ciLow, ciHigh: e.macroAverage.ciHigh },
    }));
  }

  /** Each entry's macro average equals the run's own scores (computed from its cells, not the run cache), to the bit. */
  async function expectRunScoresAgree(entries: any[], scoring: 'EFFECTIVE' | 'CONDITIONAL') {
    for (const entry of entries) {
      const scores = ok(
        await t.gql(`query($id: ID!, $scoring: ScoringMode!) { node(id: $id) { ... on Run { scores(options: { resamples: 200, seed: 11, scoring: $scoring }) {
          macroAverage { value ciLow ciHigh } } } } }`, { id: entry.run.id, scoring }),
      ).node.scores;
      expect(scores.macroAverage).toEqual({ value: entry.macroAverage.value, ciLow: entry.macroAverage.ciLow, ciHigh: entry.macroAverage.ciHigh });
    }
  }

  const rowsRead = () => t.services.scoring.runItems.stats.predictionRowsRead;
  /** Statements that read prediction cells, stored as columns or grouped from the predictions (one per slice of runs and kind). */
  const cellReads = () => t.queries.filter((sql) => /^\s*SELECT/.test(sql) && /FROM run_cell_columns s WHERE|jsonb_each\(p\.cells\)/.test(sql)).length;
  /** Statements that group prediction cells (reads of runs whose columns are not stored, and stores). */
  const groupings = () => t.queries.filter((sql) => /jsonb_each\(p\.cells\)/.test(sql)).length;
  /** The first word of each statement that groups prediction cells or writes stored columns: a store is a grouping SELECT, then an INSERT. */
  const groupingsAndStores = () =>
    t.queries.filter((sql) => /jsonb_each\(p\.cells\)|INSERT INTO run_cell_columns/.test(sql)).map((sql) => sql.trim().split(/\s/)[0]);

  beforeAll(async () => {
    t = await startTestApp();
    const project = await createProject(t, 'run cache');
    const loaded = await createLoadedDataset(t, project.id);
    useCaseId = loaded.useCase.id;
    datasetId = loaded.datasetId;
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true });
    for (const [i, grades] of [['G2', 'G3', 'G1', 'G1', 'G2'], ['G1', 'G3', 'G1', 'G2', 'G2'], ['G3', 'G3', 'G2', 'G1', 'G1']].entries()) {
      await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: `model-${i}`, content: standardPredictions(grades) });
    }
  });
  afterAll(() => t.close());

  it('reads and scores the runs a slice at a time with the same numbers as all at once', async () => {
    for (const scoring of ['EFFECTIVE', 'CONDITIONAL'] as const) {
      const whole = await fresh(scoring);
      t.queries.length = 0;
      const oneByOne = await fresh(scoring, 1);
      // One read of cells per run: only one run's cells are held at a time.
      expect(cellReads()).toBe(3);
      expect(oneByOne).toEqual(whole);
      expect(await fresh(scoring, 2)).toEqual(whole);
    }
  });

  it('reads every run once, then only the run that lands, and equals a fresh computation', async () => {
    for (const scoring of ['EFFECTIVE', 'CONDITIONAL'] as const) {
      const before = rowsRead();
      const first = await board(scoring);
      expect(first.entries).toHaveLength(3);
      // Conditional scoring reuses the item scores the effective board cached.
      expect(rowsRead() - before).toBe(scoring === 'EFFECTIVE' ? 15 : 0);
      expect(shape(first.entries)).toEqual(await fresh(scoring));
    }

    const landed = await importPredictions(t, datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'model-late',
      content: standardPredictions(['G2', 'G3', 'G1', 'Not specified', 'G2']),
    });
    for (const scoring of ['EFFECTIVE', 'CONDITIONAL'] as const) {
      const before = rowsRead();
      t.queries.length = 0;
      const after = await board(scoring);
      expect(after.entries).toHaveLength(4);
      expect(after.entries.map((e: { run: { id: string } }) => e.run.id)).toContain(landed.run.id);
      expect(rowsRead() - before).toBe(scoring === 'EFFECTIVE' ? 5 : 0);
      expect(cellReads()).toBe(scoring === 'EFFECTIVE' ? 1 : 0);
      expect(shape(after.entries)).toEqual(await fresh(scoring));
      await expectRunScoresAgree(after.entries, scoring);
    }
  });

  it('a prediction rewritten in place gives its run a new fingerprint: only that run is read again', async () => {
    const entries = (await board('EFFECTIVE')).entries as { run: { id: string }; macroAverage: { value: number } }[];
    const target = entries[entries.length - 1]!.run.id;
    const [{ cells }] = (await t.dataSource.query(
      `SELECT p.cells FROM predictions p JOIN reports r ON r.id = p.report_id WHERE p.run_id = $1 AND r.external_id = 'R1'`,
      [rowId(target)],
    )) as [{ cells: Record<string, { status: string; value?: unknown }> }];
    const changed = { ...cells, grade: { status: 'VALUE', value: cells.grade?.value === 'G2' ? 'G3' : 'G2' } };
    await t.dataSource.query(
      `UPDATE predictions p SET cells = $2 FROM reports r WHERE r.id = p.report_id AND p.run_id = $1 AND r.external_id = 'R1'`,
      [rowId(target), JSON.stringify(changed)],
    );
    t.services.scoring.revisions.afterWrite();
    const storedBefore = await storedVersion(target);
    const before = rowsRead();
    t.queries.length = 0;
    const after = await board('EFFECTIVE');
    expect(rowsRead() - before).toBe(5);
    // Its stored columns no longer match its fingerprint: grouped from its predictions, then stored again.
    await t.services.scoring.columnStoresSettled();
    expect(groupingsAndStores()).toEqual(['SELECT', 'SELECT', 'INSERT']);
    expect(await storedVersion(target)).not.toBe(storedBefore);
    const moved = after.entries.find((e: { run: { id: string } }) => e.run.id === target);
    expect(moved.macroAverage.value).not.toBe(entries.find((e) => e.run.id === target)!.macroAverage.value);
    t.queries.length = 0;
    expect(shape(after.entries)).toEqual(await fresh('EFFECTIVE'));
    // A service with nothing cached reads every run's stored columns, the changed one's too.
    expect(groupings()).toBe(0);
    expect(cellReads()).toBe(1);
    await expectRunScoresAgree(after.entries, 'EFFECTIVE');
  });

  it('stores no columns of a run still executing, and stores them once it ended without another prediction', async () => {
    const entries = (await board('EFFECTIVE')).entries as { run: { id: string } }[];
    const target = rowId(entries[0]!.run.id);
    const stored = await storedVersion(entries[0]!.run.id);
    await t.dataSource.query(`UPDATE runs SET status = 'RUNNING' WHERE id = $1`, [target]);
    try {
      await t.dataSource.query(`UPDATE predictions SET cells = cells WHERE run_id = $1`, [target]);
      t.services.scoring.revisions.afterWrite();
      t.queries.length = 0;
      await board('EFFECTIVE');
      await t.services.scoring.columnStoresSettled();
      // Read by grouping its predictions, and not stored.
      expect(groupingsAndStores()).toEqual(['SELECT']);
      expect(await storedVersion(entries[0]!.run.id)).toBe(stored);
      // Cancelled: no prediction changes, its item scores stay cached, and its columns are stored now.
      await t.dataSource.query(`UPDATE runs SET status = 'CANCELLED' WHERE id = $1`, [target]);
      t.services.scoring.revisions.afterWrite();
      t.queries.length = 0;
      await board('EFFECTIVE');
      await t.services.scoring.columnStoresSettled();
      expect(groupingsAndStores()).toEqual(['SELECT', 'INSERT']);
      expect(await storedVersion(entries[0]!.run.id)).toBe(await cellVersion(target));
    } finally {
      await t.dataSource.query(`UPDATE runs SET status = 'SUCCEEDED' WHERE id = $1`, [target]);
    }
  });

  it('reports a store that failed and goes on storing; closing waits for the stores begun', async () => {
    const entries = (await board('EFFECTIVE')).entries as { run: { id: string } }[];
    const target = rowId(entries[0]!.run.id);
    await t.dataSource.query(`UPDATE predictions SET cells = cells WHERE run_id = $1`, [target]);
    const errors: unknown[] = [];
    const service = createScoringServices(t.dataSource, null, {
      onStoreError: (error) => {
        errors.push(error);
        throw new Error('the reporter failed too');
      },
    });
    const useCase = await t.dataSource.getRepository(UseCase).findOneByOrFail({ id: rowId(useCaseId) });
    const ask = (seed: number) => service.leaderboards.leaderboard(SERVER_ADMIN, useCase, rowId(datasetId), RankingLevel.RUN, service.scoring.resolveOptions({ resamples: 50, seed } as never));
    await t.dataSource.query('ALTER TABLE run_cell_columns ADD CONSTRAINT refuse_stores CHECK (false) NOT VALID');
    try {
      await ask(1);
      await service.scoring.columnStoresSettled();
    } finally {
      await t.dataSource.query('ALTER TABLE run_cell_columns DROP CONSTRAINT refuse_stores');
    }
    expect(errors.map((e) => String(e))).toEqual([expect.stringMatching(/refuse_stores/)]);
    expect(await storedVersion(entries[0]!.run.id)).not.toBe(await cellVersion(target));
    // Another computation of the same service (its item scores cached): the run is still not stored, so it is stored now.
    await ask(2);
    await service.scoring.close();
    expect(await storedVersion(entries[0]!.run.id)).toBe(await cellVersion(target));
    expect(errors).toHaveLength(1);
  });

  async function cellVersion(runId: string): Promise<string | undefined> {
    const rows = (await t.dataSource.query('SELECT version FROM run_cell_versions WHERE run_id = $1', [runId])) as { version: string }[];
    return rows[0]?.version;
  }

  async function storedVersion(runId: string): Promise<string | undefined> {
    const rows = (await t.dataSource.query('SELECT version FROM run_cell_columns WHERE run_id = $1', [rowId(runId)])) as { version: string }[];
    return rows[0]?.version;
  }
});
