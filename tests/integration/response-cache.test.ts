import {
  createApiKey,
  createLoadedDataset,
  createProject,
  importAnnotations,
  importPredictions,
  isBookkeeping,
  ok,
  STANDARD_REFERENCE,
  standardPredictions,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const LEADERBOARD = `query($u: ID!, $d: ID!) { node(id: $u) { ... on UseCase { leaderboard(datasetId: $d, options: { resamples: 100, seed: 3 }) {
  exact entries { rank run { name } macroAverage { value ciLow ciHigh } } } } } }`;
const PREDICTIONS = `query($r: ID!) { node(id: $r) { ... on Run { predictions(first: 3) { totalCount pageInfo { hasNextPage } edges { node { values report { externalId } } } } } } }`;
const LOG = `query ($p: ID!) { project(id: $p) { auditLog(first: 200, kind: READ) { totalCount nodes { action objects keyName transport } } } }`;

/** The statements a request ran that are not the key check, transaction control or the revision. */
function work(t: TestApp): string[] {
  return t.queries.filter((sql) => !isBookkeeping(sql));
}

describe('answers of unchanged queries reused', () => {
  let t: TestApp;
  let project: { id: string; adminKey: string };
  let viewer: { id: string; secret: string };
  let useCaseId: string;
  let datasetId: string;
  let runId: string;

  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t, 'Cached');
    viewer = await createApiKey(t, project.id, 'VIEWER', project.adminKey);
    const loaded = await createLoadedDataset(t, project.id);
    useCaseId = loaded.useCase.id;
    datasetId = loaded.datasetId;
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true }, project.adminKey);
    for (const [model, grades] of [
      ['model-a', ['G2', 'G3', 'G1', 'G1', 'G2']],
      ['model-b', ['G1', 'G3', 'G1', 'Not specified', 'G3']],
    ] as const) {
      const imported = await importPredictions(t, datasetId, { modelName: model, format: 'JSONL', layout: 'JSON_COLUMN', content: standardPredictions([...grades]) }, project.adminKey);
      runId ||= imported.run.id;
    }
    // Revisions learnt by notification from here on (before, a revision is a query's token).
    await t.services.scoring.revisions.ready();
  });
  afterAll(() => t.close());

  it('a repeated leaderboard is answered without computing or loading anything, until the project changes', async () => {
    const first = ok(await t.gql(LEADERBOARD, { u: useCaseId, d: datasetId }, viewer.secret));
    expect(first.node.leaderboard.entries).toHaveLength(2);
    t.queries.length = 0;
    const second = ok(await t.gql(LEADERBOARD, { u: useCaseId, d: datasetId }, viewer.secret));
    expect(second).toEqual(first);
    expect(work(t)).toEqual([]);
    // Another variable value is another answer.
    t.queries.length = 0;
    ok(await t.gql(LEADERBOARD.replace('seed: 3', 'seed: 4'), { u: useCaseId, d: datasetId }, viewer.secret));
    expect(work(t).length).toBeGreaterThan(0);

    // A new run moves the project's revision on: the next answer has it.
    await importPredictions(t, datasetId, { modelName: 'model-c', format: 'JSONL', layout: 'JSON_COLUMN', content: standardPredictions(['G2', 'G3', 'G1', 'Not specified', 'G2']) }, project.adminKey);
    const third = ok(await t.gql(LEADERBOARD, { u: useCaseId, d: datasetId }, viewer.secret));
    expect(third.node.leaderboard.entries).toHaveLength(3);
    expect(third.node.leaderboard.entries.map((e: { run: { name: string } }) => e.run.name)).toEqual(expect.arrayContaining([expect.stringContaining('model-c')]));
  });

  it('a reused page of predictions is still recorded in the audit log, once per request', async () => {
    const before = ok(await t.gql(LOG, { p: project.id }, project.adminKey)).project.auditLog.totalCount as number;
    const first = ok(await t.gql(PREDICTIONS, { r: runId }, viewer.secret));
    expect(first.node.predictions.edges).toHaveLength(3);
    t.queries.length = 0;
    const second = ok(await t.gql(PREDICTIONS, { r: runId }, viewer.secret));
    expect(second).toEqual(first);
    expect(work(t).filter((sql) => /predictions/i.test(sql) && !/audit_events/.test(sql))).toEqual([]);
    const log = ok(await t.gql(LOG, { p: project.id }, project.adminKey)).project.auditLog;
    const reads = (log.nodes as { action: string; objects: number; keyName: string; transport: string }[]).slice(before);
    expect(reads).toEqual([
      { action: 'PREDICTIONS', objects: 3, keyName: 'viewer key', transport: 'HTTP' },
      { action: 'PREDICTIONS', objects: 3, keyName: 'viewer key', transport: 'HTTP' },
    ]);
  });

  it('a __typename on node(id:) (as Apollo Client adds it) is reused for a run, not for a dataset', async () => {
    const query = `query($x: ID!) { node(id: $x) { __typename id } }`;
    ok(await t.gql(query, { x: runId }, viewer.secret));
    t.queries.length = 0;
    expect(ok(await t.gql(query, { x: runId }, viewer.secret)).node.__typename).toBe('Run');
    expect(work(t)).toEqual([]);
    ok(await t.gql(query, { x: datasetId }, viewer.secret));
    t.queries.length = 0;
    expect(ok(await t.gql(query, { x: datasetId }, viewer.secret)).node.__typename).toBe('Dataset');
    expect(work(t).length).toBeGreaterThan(0);
  });

  it('queries outside what the revision covers are answered afresh', async () => {
    const count = async () => ok(await t.gql(`query ($p: ID!) { node(id: $p) { ... on Project { auditLog(first: 1) { totalCount } } } }`, { p: project.id }, project.adminKey)).node.auditLog.totalCount as number;
    // The audit log is no statistic: a read in between shows in the next count.
    const a = await count();
    ok(await t.gql(PREDICTIONS, { r: runId }, viewer.secret));
    const b = await count();
    expect(b).toBeGreaterThan(a);
  });
});
