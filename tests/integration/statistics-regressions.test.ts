import {
  CREATE_DATASET,
  createApiKey,
  createDataset,
  createLoadedDataset,
  createProject,
  createProjectWithKeys,
  createUseCase,
  failure,
  importAnnotations,
  importPredictions,
  importReports,
  IMPORT_REPORTS,
  isBookkeeping,
  jsonl,
  ok,
  rowId,
  STANDARD_VARIABLES,
  UPDATE_USE_CASE,
  STANDARD_REFERENCE,
  standardPredictions,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';


describe('statistics and access regressions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('consensusRanking(level: RUN) ranks every model × strategy, not only each model’s best run', async () => {
    const project = await createProject(t, 'Consensus at run level');
    const { useCase, datasetId } = await createLoadedDataset(t, project.id);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true, kind: 'CONSENSUS' });
    await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm1', strategy: 'ZERO_SHOT', content: standardPredictions(['G2', 'G3', 'G1', 'G1', 'G2']) });
    await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm1', strategy: 'FEW_SHOT', content: standardPredictions(['G2', 'G1', 'G1', 'G1', 'G1']) });
    await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm2', strategy: 'ZERO_SHOT', content: standardPredictions(['G1', 'G1', 'G1', 'G1', 'G1']) });
    const data = ok(
      await t.gql(
        `query ($p: ID!, $u: [ID!]!) { project(id: $p) { consensusRanking(useCaseIds: $u, level: RUN, options: { resamples: 0 }) {
          entries { rank strategy model { servedName } } } } }`,
        { p: project.id, u: [useCase.id] },
      ),
    );
    const entries = data.project.consensusRanking.entries as { strategy: string; model: { servedName: string } }[];
    // Three candidates (m1|ZERO_SHOT, m1|FEW_SHOT, m2|ZERO_SHOT); the service keeps only two.
    expect(entries.map((e) => `${e.model.servedName}|${e.strategy}`).sort()).toEqual(['m1|FEW_SHOT', 'm1|ZERO_SHOT', 'm2|ZERO_SHOT']);
  });

  it('StatsOptions fields are nullable with defaults as in API.md (resamples: Int = 1000, …)', async () => {
    const project = await createProject(t, 'Nullable stats options');
    const { datasetId } = await createLoadedDataset(t, project.id);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true });
    const run = await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm1', content: standardPredictions(['G2', 'G3', 'G1', 'G1', 'G2']) });
    // A client that forwards an unset variable sends null; API.md declares `resamples: Int = 1000`.
    const result = await t.gql(
      `query ($id: ID!, $b: Int) { node(id: $id) { ... on Run { scores(options: { resamples: $b, seed: null }) { macroAverage { value } } } } }`,
      { id: run.run.id, b: null },
    );
    expect(result.errors).toBeUndefined();
  });

  it('an EDITOR cannot delete annotations (an ADMIN-only delete) by renaming variables', async () => {
    const project = await createProjectWithKeys(t, 'Editor deletes annotations');
    const useCase = await createUseCase(t, project.id, {}, project.admin);
    const datasetId = await createDataset(t, useCase.id, 'set', project.admin);
    await importReports(t, datasetId, undefined, {}, project.admin);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true }, project.admin);
    const count = async () => Number((await t.dataSource.query('SELECT count(*) AS n FROM annotations WHERE dataset_id = $1', [rowId(datasetId)]))[0].n);
    expect(await count()).toBe(20);
    // An EDITOR replaces the variable list (a renamed key); deleteUseCase would need ADMIN.
    const renamed = STANDARD_VARIABLES.map((v) => ({ ...v, key: `${v.key}_v2` }));
    const result = await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables: renamed } }, project.editor);
    if (!result.errors) {
      // Every annotation is gone, raw values included, and renaming back does not restore them.
      ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables: STANDARD_VARIABLES } }, project.editor));
    }
    expect(await count()).toBe(20);
  });

  it('Run.scores over a list of runs does not issue queries per run', async () => {
    const counts: number[] = [];
    for (const n of [2, 5]) {
      const project = await createProject(t, `Scores per run ${n}`);
      const { useCase, datasetId } = await createLoadedDataset(t, project.id);
      await importAnnotations(t, datasetId, 'A', 'CSV', STANDARD_REFERENCE, { isReference: true });
      await importAnnotations(t, datasetId, 'B', 'CSV', STANDARD_REFERENCE);
      for (let i = 0; i < n; i++) {
        await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: `m${i}`, content: standardPredictions(['G2', 'G3', 'G1', 'G1', 'G2']) });
      }
      t.queries.length = 0;
      ok(
        await t.gql(`query ($id: ID!) { node(id: $id) { ... on UseCase { runs { nodes { scores(options: { resamples: 10 }) { macroAverage { value } } } } } } }`, {
          id: useCase.id,
        }),
      );
      counts.push(t.queries.filter((sql) => !isBookkeeping(sql)).length);
    }
    expect(counts[1]).toBe(counts[0]);
  });

  it('leaderboard answers BAD_USER_INPUT (not INTERNAL_SERVER_ERROR) when the reference has no valid value left', async () => {
    const project = await createProject(t, 'Reference emptied');
    const { useCase, datasetId } = await createLoadedDataset(t, project.id);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', 'id,grade\nR1,G1\nR2,G2\nR3,G3\n', { isReference: true });
    await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm1', content: standardPredictions(['G1', 'G2', 'G3', 'G1', 'G2']) });
    // The grade options are renamed: the stored reference values no longer normalise (INVALID) and are skipped.
    const variables = STANDARD_VARIABLES.map((v) => (v.key === 'grade' ? { ...v, options: ['Grade 1', 'Grade 2', 'Grade 3'], aliases: null } : v));
    ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables } }));
    const board = await t.gql(`query ($u: ID!, $d: ID!) { node(id: $u) { ... on UseCase { leaderboard(datasetId: $d) { entries { rank } } } } }`, {
      u: useCase.id,
      d: datasetId,
    });
    expect(board.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const consensus = await t.gql(`query ($p: ID!, $u: [ID!]!) { project(id: $p) { consensusRanking(useCaseIds: $u) { voterCount } } }`, {
      p: project.id,
      u: [useCase.id],
    });
    // across use cases a dataset without scorable references is left out
    expect(consensus.errors).toBeUndefined();
    expect(consensus.data?.project.consensusRanking.voterCount).toBe(0);
  });

  it('a write transaction in one dataset does not block imports into another dataset of the project', async () => {
    const project = await createProject(t, 'Revision row lock');
    const a = await createLoadedDataset(t, project.id);
    const b = await createLoadedDataset(t, project.id);
    // Any write in the project, still open (as a long renormalisation or a big import is).
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    await runner.query('UPDATE reports SET metadata = metadata WHERE dataset_id = $1', [rowId(a.datasetId)]);
    const pending = t.gql(IMPORT_REPORTS, { input: { datasetId: b.datasetId, format: 'JSONL', content: jsonl([{ id: 'B-new', text: 'x' }]) } });
    let settled = false;
    void pending.then(() => (settled = true));
    let waiting: { wait_event_type: string; query: string }[] = [];
    for (let i = 0; i < 50 && waiting.length === 0 && !settled; i++) {
      await new Promise((r) => setTimeout(r, 100));
      waiting = (await t.dataSource.query(
        `SELECT wait_event_type, query FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO reports%'`,
      )) as typeof waiting;
    }
    await runner.commitTransaction();
    await runner.release();
    ok(await pending);
    // The import into dataset B waited on the project's revision row held by the write in dataset A.
    expect(waiting).toEqual([]);
  });

  it('a single VIEWER request cannot ask for unbounded statistics work (aliases × resamples)', async () => {
    const project = await createProject(t, 'Query cost');
    const viewer = await createApiKey(t, project.id, 'VIEWER', project.adminKey);
    const useCase = await createUseCase(t, project.id);
    const datasetId = await createDataset(t, useCase.id);
    const ids = Array.from({ length: 2000 }, (_, i) => `R${i}`);
    const grades = ['G1', 'G2', 'G3', 'Not specified'];
    await importReports(t, datasetId, jsonl(ids.map((id) => ({ id, text: `report ${id}` }))));
    await importAnnotations(t, datasetId, 'Consensus', 'JSONL', jsonl(ids.map((id, i) => ({ id, grade: grades[i % 4], metastasis: i % 3 ? 'Yes' : 'No', breslow_mm: i % 7 }))), { isReference: true });
    const run = await importPredictions(t, datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'm',
      content: jsonl(ids.map((id, i) => ({ id, extracted_data: { grade: grades[(i * 7) % 4], metastasis: i % 2 ? 'Yes' : 'No', breslow_mm: i % 5 } }))),
    });
    const aliases = Array.from({ length: 10 }, (_, i) => `s${i}: scores(options: { resamples: 10000, seed: ${i} }) { macroAverage { value } }`).join('\n');
    const result = await t.gql(`query ($id: ID!) { node(id: $id) { ... on Run { ${aliases} } } }`, { id: run.run.id }, viewer.secret);
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.data).toBeUndefined();
  });

  void CREATE_DATASET;
  void createApiKey;
  void failure;

  it('consensusRanking(voters: USE_CASES) has one voter per use case, whatever its number of datasets', async () => {
    const project = await createProject(t, 'Voters per use case');
    const { useCase, datasetId } = await createLoadedDataset(t, project.id);
    const second = await createDataset(t, useCase.id, 'second set');
    await importReports(t, second);
    for (const ds of [datasetId, second]) {
      await importAnnotations(t, ds, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true, kind: 'CONSENSUS' });
      await importPredictions(t, ds, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm1', content: standardPredictions(['G2', 'G3', 'G1', 'G1', 'G2']) });
      await importPredictions(t, ds, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm2', content: standardPredictions(['G1', 'G1', 'G1', 'G1', 'G1']) });
    }
    const data = ok(
      await t.gql(
        `query ($p: ID!, $u: [ID!]!) { project(id: $p) { consensusRanking(useCaseIds: $u, voters: USE_CASES, options: { resamples: 0 }) { voterCount } } }`,
        { p: project.id, u: [useCase.id] },
      ),
    );
    expect(data.project.consensusRanking.voterCount).toBe(1);
    const groups = ok(
      await t.gql(`query ($p: ID!, $u: [ID!]!) { project(id: $p) { groupSummary(useCaseIds: $u, groupBy: FAMILY, options: { resamples: 0 }) { memberCount } } }`, {
        p: project.id,
        u: [useCase.id],
      }),
    );
    // one member per model and use case
    expect(groups.project.groupSummary.map((g: { memberCount: number }) => g.memberCount)).toEqual([2]);
  });
});
