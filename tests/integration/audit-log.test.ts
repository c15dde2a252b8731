import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createApiKey, createLoadedDataset, createProject, importAnnotations, ok, STANDARD_REFERENCE } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const LOG = `query ($p: ID!, $kind: AuditKind) { project(id: $p) { auditLog(first: 200, kind: $kind) { totalCount nodes { kind action outcome objects targets transport keyName serverAdmin at } } } }`;

describe('audit log: who read patient data and who changed what', () => {
  let t: TestApp;
  let project: { id: string; adminKey: string };
  let viewer: { id: string; secret: string };
  let datasetId: string;

  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t, 'Audited');
    viewer = await createApiKey(t, project.id, 'VIEWER', project.adminKey);
    datasetId = (await createLoadedDataset(t, project.id)).datasetId;
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true }, project.adminKey);
  });
  afterAll(() => t.close());

  const log = async (kind?: string) => ok(await t.gql(LOG, { p: project.id, kind: kind ?? null }, project.adminKey)).project.auditLog;

  it('records each mutation with the ids it named, never its values, and its outcome', async () => {
    const changes = (await log('CHANGE')).nodes as { action: string; outcome: string; targets: string[]; keyName: string; serverAdmin: boolean }[];
    expect(changes.map((c) => c.action)).toEqual(expect.arrayContaining(['createApiKey', 'createUseCase', 'createDataset', 'importReports', 'importAnnotations']));
    const imported = changes.find((c) => c.action === 'importReports')!;
    expect(imported.outcome).toBe('OK');
    expect(imported.targets).toEqual([datasetId]);
    // the report texts of the import are nowhere in the log
    expect(JSON.stringify(changes)).not.toMatch(/Breslow|melanom/i);
    // a refused mutation is recorded as FAILED
    await t.gql(`mutation ($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret } }`, { i: { projectId: project.id, name: 'not allowed', role: 'ADMIN' } }, viewer.secret);
    const failed = ((await log('CHANGE')).nodes as { action: string; outcome: string; keyName: string }[]).filter((c) => c.outcome === 'FAILED');
    expect(failed).toEqual([expect.objectContaining({ action: 'createApiKey', keyName: 'viewer key' })]);
  });

  it('counts reads of report texts, annotations and predictions per request, over HTTP and WebSocket', async () => {
    const before = (await log('READ')).totalCount;
    const read = ok(await t.gql(`query ($d: ID!) { node(id: $d) { ... on Dataset { reports(first: 3) { nodes { externalId text annotations { value } } } } } }`, { d: datasetId }, viewer.secret));
    const annotations = (read.node.reports.nodes as { annotations: unknown[] }[]).reduce((n, r) => n + r.annotations.length, 0);
    expect(annotations).toBeGreaterThan(3);
    // fields that are not patient data are not recorded
    ok(await t.gql(`query ($d: ID!) { node(id: $d) { ... on Dataset { reports(first: 3) { nodes { externalId } } } } }`, { d: datasetId }, viewer.secret));
    const client = createClient({ url: `ws://127.0.0.1:${t.port}/graphql`, webSocketImpl: WebSocket, connectionParams: { Authorization: `Bearer ${viewer.secret}` }, retryAttempts: 0 });
    await new Promise<void>((resolve, reject) =>
      client.subscribe({ query: `query ($d: ID!) { node(id: $d) { ... on Dataset { reports(first: 2) { nodes { text } } } } }`, variables: { d: datasetId } }, { next: () => undefined, error: reject, complete: resolve }),
    );
    await client.dispose();
    // the rows of one request share its millisecond, so they are compared in a fixed order
    const reads = ((await log('READ')).nodes as { action: string; objects: number; transport: string; keyName: string }[])
      .slice(before)
      .sort((a, b) => a.transport.localeCompare(b.transport) || a.action.localeCompare(b.action));
    expect(reads).toEqual([
      expect.objectContaining({ action: 'ANNOTATIONS', objects: annotations, transport: 'HTTP', keyName: 'viewer key' }),
      expect.objectContaining({ action: 'REPORT_TEXTS', objects: 3, transport: 'HTTP', keyName: 'viewer key' }),
      expect.objectContaining({ action: 'REPORT_TEXTS', objects: 2, transport: 'WEBSOCKET' }),
    ]);
  });

  it('is for project ADMINs only, and cannot be changed even by the database owner', async () => {
    const asViewer = await t.gql(LOG, { p: project.id, kind: null }, viewer.secret);
    expect(asViewer.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const other = await createProject(t, 'Other');
    const foreign = await t.gql(LOG, { p: project.id, kind: null }, other.adminKey);
    expect(foreign.data?.project ?? null).toBeNull();
    await expect(t.dataSource.query('UPDATE audit_events SET action = $1', ['tampered'])).rejects.toThrow(/append-only/);
    await expect(t.dataSource.query('DELETE FROM audit_events')).rejects.toThrow(/append-only/);
    await expect(t.dataSource.query('TRUNCATE audit_events')).rejects.toThrow(/append-only/);
  });
});
