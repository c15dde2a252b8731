/**
 * Tenant isolation over the live schema: every query field (at the root and on every node type),
 * every argument that takes an ID, every mutation and every subscription, called by each role of
 * project A (and without a key, and with a revoked key) with project B's IDs. The cases are
 * derived from the schema, so a field added tomorrow is walked without anyone listing it; what
 * the walker cannot build arguments for fails the suite by name.
 *
 * Each answer to a foreign ID must be the answer to an unknown ID of the same type (nothing tells
 * that B's object exists), carry no string of B (names, texts, values, IDs), use a code of the
 * expected set, and a refused mutation must leave the database as it was.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getNamedType, isObjectType, type GraphQLField, type GraphQLSchema } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { buildReportQlSchema } from '../../src/graphql/schema';
import { fromGlobalId } from '../../src/graphql/node';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { changedTables, databaseChecksum } from '../support/database-checksum';
import {
  createApiKey,
  createDataset,
  createProjectWithKeys,
  createUseCase,
  csv,
  failure,
  importAnnotations,
  importPredictions,
  importReports,
  jsonl,
  ok,
  REPORT_TEXTS,
  reportsJsonl,
  rowId,
  STANDARD_VARIABLES,
  unknownId,
  type ProjectKeys,
} from '../support/graphql-fixtures';
import {
  idSlotsOf,
  isLeafType,
  nodeFieldOperation,
  nodeTypesOf,
  objectTypesOf,
  requiredArgsOf,
  rootOperation,
  selectionOf,
  Unbuildable,
  withSlot,
  type IdSlot,
  type Operation,
  type ValueContext,
} from '../support/schema-walk';
import { LOG_MARKER } from '../support/test-log';
import { startTestApp, type GraphQLResponse, type TestApp } from '../support/test-app';

/** ID arguments whose node type their name does not tell. */
const EXPLICIT_ID_TYPES: Record<string, string> = {
  'node.id': '*',
};

/**
 * Slots that need a particular object of their type: an imported run cannot be cancelled or
 * resumed, so those take a queued (executed) run, of A and of B alike.
 */
const SLOT_FIXTURES: Record<string, string> = {
  'CancelRunInput.runId': 'QueuedRun',
  'ResumeRunInput.runId': 'QueuedRun',
};

/** Further bases for a slot, beside the field's own required arguments (other paths through the service). */
const SLOT_BASES: Record<string, (a: Tenant) => Record<string, unknown>> = {
  // Ad-hoc texts go with a use case instead of a dataset.
  'StartRunInput.useCaseId': (a) => ({ input: { modelId: a.ids.Model, texts: [{ text: 'Matrix text, no findings.' }] } }),
};

/** Codes a refusal may carry (API.md, DESIGN.md "API conventions"). */
const REFUSAL_CODES = new Set(['NOT_FOUND', 'FORBIDDEN', 'UNAUTHENTICATED']);

/** Depth of the selections under a walked field (object levels). */
const WALK_DEPTH = 3;
/** Mutation payloads and subscription events: shallow, since a refused call has none. */
const PAYLOAD_DEPTH = 2;

const FRAMEWORK_PROMPT = readFileSync(path.join(__dirname, '../fixtures/extraction/framework/melanoma-prompt.yaml'), 'utf8');

interface Tenant {
  marker: string;
  keys: ProjectKeys;
  fake: FakeLlm;
  /** One object per node type (what arguments are built with). */
  ids: Record<string, string>;
  externalIds: string[];
  /** Every ID reachable from the project (crawled through the API). */
  allIds: Map<string, Set<string>>;
}

/** A project with one object of every node type, every text and name carrying `marker`. */
async function populate(t: TestApp, marker: string): Promise<Tenant> {
  const fake = await startFakeLlm({ models: [`model-${marker}`] });
  const keys = await createProjectWithKeys(t, `Project ${marker}`);
  const spareKey = await createApiKey(t, keys.id, 'VIEWER', keys.admin);
  const variables = STANDARD_VARIABLES.map((v) => ({ ...v, description: `${marker} ${v.key}` }));
  const useCase = await createUseCase(t, keys.id, { name: `Use case ${marker}`, description: `${marker} use case`, variables });
  const datasetId = await createDataset(t, useCase.id, `Dataset ${marker}`);
  const texts = Object.fromEntries(Object.entries(REPORT_TEXTS).map(([id, text]) => [`${marker}-${id}`, `${text} ${marker}`]));
  const externalIds = Object.keys(texts);
  await importReports(t, datasetId, reportsJsonl(texts));
  const grades = ['G2', 'G3', 'G1', 'Not specified', 'G2'];
  const reference = csv([['id', 'grade', 'metastasis', 'site'], ...externalIds.map((id, i) => [id, grades[i]!, 'No', `${LOG_MARKER} ${marker} site ${i}`])]);
  const annotator = await importAnnotations(t, datasetId, `Consensus ${marker}`, 'CSV', reference, { isReference: true });
  await importAnnotations(t, datasetId, `Rater ${marker}`, 'CSV', csv([['id', 'grade', 'site'], ...externalIds.map((id, i) => [id, grades[(i + 1) % 5]!, `${LOG_MARKER} ${marker} rater ${i}`])]));
  const prompt = ok(
    await t.gql(`mutation($i: CreatePromptInput!) { createPrompt(input: $i) { prompt { id } } }`, {
      i: {
        useCaseId: useCase.id,
        name: `Prompt ${marker}`,
        system: `${marker} system part`,
        examples: [{ name: `example ${marker}`, input: `${LOG_MARKER} ${marker} example report`, reasoning: `${LOG_MARKER} ${marker} reasoning`, output: { grade: 'G1', site: `${LOG_MARKER} ${marker} example site` } }],
      },
    }),
  ).createPrompt.prompt.id as string;
  const registered = ok(
    await t.gql(`mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } models { id } } }`, {
      i: { projectId: keys.id, name: `Endpoint ${marker}`, baseUrl: fake.baseUrl, apiKey: `sk-${LOG_MARKER}-${marker}-endpoint`, hardware: `${marker} GPU`, gpuCount: 1, timeoutMs: 5000 },
    }),
  ).registerEndpoint;
  const modelId = registered.models[0].id as string;
  const imported = await importPredictions(t, datasetId, {
    format: 'JSONL',
    layout: 'JSON_COLUMN',
    modelName: `imported-${marker}`,
    name: `Imported ${marker}`,
    rawField: 'raw',
    reasoningField: 'reasoning',
    content: jsonl(externalIds.map((id, i) => ({ id, extracted_data: { grade: grades[(i + 2) % 5], site: `${LOG_MARKER} ${marker} predicted ${i}` }, raw: `${LOG_MARKER} ${marker} raw ${i}`, reasoning: `${LOG_MARKER} ${marker} thought ${i}` }))),
  });
  // A second model and strategy, so that the variance decomposition has something to decompose.
  await importPredictions(t, datasetId, {
    format: 'JSONL',
    layout: 'JSON_COLUMN',
    modelName: `second-${marker}`,
    strategy: 'FEW_SHOT',
    name: `Second ${marker}`,
    content: jsonl(externalIds.map((id, i) => ({ id, extracted_data: { grade: grades[(i + 3) % 5], site: `${LOG_MARKER} ${marker} second ${i}` } }))),
  });
  const queuedRun = ok(
    await t.gql(`mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`, { i: { datasetId, modelId, name: `Run ${marker}` } }),
  ).startRun.run.id as string;
  const experiment = ok(
    await t.gql(`mutation($i: StartExperimentInput!) { startExperiment(input: $i) { experiment { id } } }`, {
      i: { datasetId, name: `Experiment ${marker}`, modelIds: [modelId], strategies: ['ZERO_SHOT'] },
    }),
  ).startExperiment.experiment.id as string;
  const task = ok(
    await t.gql(`mutation($i: StartReportImportInput!) { startReportImport(input: $i) { task { id } } }`, {
      i: { datasetId, format: 'JSONL', content: jsonl([{ id: `task-${marker}`, text: `Task report ${marker}.` }]) },
    }),
  ).startReportImport.task.id as string;
  const nested = ok(
    await t.gql(
      `query($u: ID!, $d: ID!, $r: ID!) {
        u: node(id: $u) { ... on UseCase { variables { id } } }
        d: node(id: $d) { ... on Dataset { reports(first: 1) { nodes { id annotations { id } } } } }
        r: node(id: $r) { ... on Run { predictions(first: 1) { nodes { id } } } }
      }`,
      { u: useCase.id, d: datasetId, r: imported.run.id },
    ),
  );
  const ids: Record<string, string> = {
    Project: keys.id,
    ApiKey: spareKey.id,
    UseCase: useCase.id,
    Variable: nested.u.variables[0].id,
    Dataset: datasetId,
    Report: nested.d.reports.nodes[0].id,
    Annotator: annotator.annotator.id,
    Annotation: nested.d.reports.nodes[0].annotations[0].id,
    Endpoint: registered.endpoint.id,
    Model: modelId,
    Prompt: prompt,
    Experiment: experiment,
    Run: imported.run.id,
    Prediction: nested.r.predictions.nodes[0].id,
    QueuedRun: queuedRun,
    BackgroundTask: task,
  };
  return { marker, keys, fake, ids, externalIds, allIds: new Map() };
}

/** Every global ID in a JSON value. */
function globalIdsIn(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') {
    if (fromGlobalId(value)) into.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) globalIdsIn(v, into);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) globalIdsIn(v, into);
  }
}

/** Every object reachable from `start` through the API, by node type (read with the server admin key). */
async function crawl(t: TestApp, schema: GraphQLSchema, start: string[]): Promise<Map<string, Set<string>>> {
  const seen = new Set<string>(start);
  const queue = [...start];
  while (queue.length > 0) {
    const id = queue.shift()!;
    const type = fromGlobalId(id)!.type;
    const result = await t.gql(`query($id: ID!) { node(id: $id) { ... on ${type} ${selectionOf(schema.getType(type) as never, 2, schema)} } }`, { id });
    if (result.errors) throw new Error(`crawling ${type} ${id}: ${JSON.stringify(result.errors)}`);
    const found = new Set<string>();
    globalIdsIn(result.data, found);
    for (const f of found) {
      if (seen.has(f)) continue;
      seen.add(f);
      queue.push(f);
    }
  }
  const byType = new Map<string, Set<string>>();
  for (const id of seen) {
    const type = fromGlobalId(id)!.type;
    if (!byType.has(type)) byType.set(type, new Set());
    byType.get(type)!.add(id);
  }
  return byType;
}

interface Answer {
  status: number;
  data?: unknown;
  errors?: { message: string; path?: unknown; extensions?: Record<string, unknown> }[];
  events?: unknown[];
  closed?: { code: number; reason: string };
}

/** An answer with the sent ID replaced and correlation ids dropped: what may be compared. */
function normalise(answer: Answer, sentId: string): string {
  const { status, data, errors, events, closed } = answer;
  const shown = {
    status,
    data,
    events,
    closed,
    errors: errors?.map((e) => {
      const { correlationId: _c, ...extensions } = e.extensions ?? {};
      return { message: e.message, path: e.path, extensions };
    }),
  };
  return JSON.stringify(shown).split(sentId).join('<ID>').split(rowId(sentId)).join('<UUID>');
}

/**
 * An answer without the targets of audit events: the trail names the IDs that A's own keys sent,
 * B's among them when a request of A's was refused for naming them (not B's data: A's requests).
 */
function withoutAuditTargets(answer: unknown): unknown {
  return JSON.parse(JSON.stringify(answer), (key, value: unknown) => (key === 'targets' && Array.isArray(value) ? [] : value));
}

/** Strings of B in an answer (besides what the request itself sent). */
function leaksIn(answer: unknown, foreign: Tenant, sent: unknown): string[] {
  const text = JSON.stringify(answer);
  const sentText = JSON.stringify(sent);
  const found: string[] = [];
  if (text.includes(foreign.marker)) found.push(`text marked ${foreign.marker}`);
  for (const ids of foreign.allIds.values()) {
    for (const id of ids) {
      if (sentText.includes(id)) continue;
      if (text.includes(id) || text.includes(rowId(id))) found.push(`id ${fromGlobalId(id)!.type} ${id}`);
    }
  }
  return found;
}

function codesOf(answer: Answer): string[] {
  return (answer.errors ?? []).map((e) => String(e.extensions?.code));
}

/** Subscribes over graphql-ws and waits for the end: an error, completion, or (with `first`) the first event. */
function subscribe(t: TestApp, key: string | null, op: Operation, first = false): Promise<Answer> {
  return new Promise((resolve) => {
    const answer: Answer = { status: 0, events: [] };
    let closed: { code: number; reason: string } | undefined;
    const client = createClient({
      url: `ws://127.0.0.1:${t.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: key ? { Authorization: `Bearer ${key}` } : {},
      retryAttempts: 0,
      lazy: true,
      on: { closed: (event) => void (closed = { code: (event as { code: number }).code, reason: (event as { reason: string }).reason }) },
    });
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      void client.dispose();
      resolve(answer);
    };
    // Only so that a subscription that never answers fails the case instead of the whole suite.
    const guard = setTimeout(() => {
      answer.closed = { code: -1, reason: 'no answer' };
      finish();
    }, 15_000);
    client.subscribe(op, {
      next: (value) => {
        if (value.errors) {
          answer.errors = value.errors as Answer['errors'];
          finish();
          return;
        }
        answer.events!.push(value.data);
        if (first) finish();
      },
      error: (error) => {
        if (Array.isArray(error)) answer.errors = error as Answer['errors'];
        else answer.closed = closed ?? { code: (error as { code?: number }).code ?? -1, reason: String((error as { reason?: string }).reason ?? error) };
        finish();
      },
      complete: finish,
    });
  });
}

const ROLES = ['VIEWER', 'EDITOR', 'ADMIN'] as const;

describe('isolation matrix over the live schema', () => {
  let t: TestApp;
  let schema: GraphQLSchema;
  let nodeTypes: string[];
  let a: Tenant;
  let b: Tenant;
  let ctxA: ValueContext;
  let counter = 0;
  /** Objects of no project (the server admin key), foreign to every project key. */
  const serverObjects: Record<string, string[]> = {};
  /** Problems of every case; each test fails with its own list. */
  const report = (problems: string[], what: string, message: string) => problems.push(`${what}: ${message}`);

  const keyOf = (role: (typeof ROLES)[number]) => (role === 'VIEWER' ? a.keys.viewer : role === 'EDITOR' ? a.keys.editor : a.keys.admin);

  const overrides = (): ValueContext['overrides'] => ({
    CreateApiKeyInput: () => ({ projectId: a.ids.Project, role: 'VIEWER' }),
    'CreateUseCaseInput.variables': () => STANDARD_VARIABLES,
    ImportReportsInput: (ctx) => ({ format: 'JSONL', content: jsonl([{ id: ctx.unique('report'), text: 'Matrix report, no findings.' }]) }),
    ImportAnnotationsInput: () => ({ format: 'CSV', content: csv([['id', 'grade'], ...a.externalIds.map((id) => [id, 'G1'])]) }),
    ImportPredictionsInput: () => ({
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      content: jsonl(a.externalIds.map((id) => ({ id, extracted_data: { grade: 'G1' } }))),
    }),
    ImportUseCaseConfigInput: () => ({ promptYaml: FRAMEWORK_PROMPT }),
    // An empty project bundle: every table present, no rows.
    ImportProjectBundleInput: () => ({
      content: JSON.stringify({
        format: 'reportql-project-bundle',
        version: 1,
        project: { id: 'p' },
        ...Object.fromEntries(['useCases', 'variables', 'datasets', 'reports', 'annotators', 'annotations', 'prompts', 'endpoints', 'models', 'experiments', 'runs', 'predictions'].map((k) => [k, []])),
      }),
    }),
    RegisterEndpointInput: () => ({ baseUrl: a.fake.baseUrl, timeoutMs: 5000 }),
    StartRunInput: () => ({ datasetId: a.ids.Dataset }),
    StartExperimentInput: () => ({ strategies: ['ZERO_SHOT'] }),
    // The background forms take the inputs of their synchronous mutations.
    StartReportImportInput: (ctx) => ({ format: 'JSONL', content: jsonl([{ id: ctx.unique('report'), text: 'Matrix report, no findings.' }]) }),
    StartAnnotationImportInput: () => ({ format: 'CSV', content: csv([['id', 'grade'], ...a.externalIds.map((id) => [id, 'G1'])]) }),
    StartPredictionImportInput: () => ({ format: 'JSONL', layout: 'JSON_COLUMN', content: jsonl(a.externalIds.map((id) => ({ id, extracted_data: { grade: 'G1' } }))) }),
    StartExperimentTaskInput: () => ({ strategies: ['ZERO_SHOT'] }),
    // The few-shot run against the rest (the zero-shot one): both groups hold a scored run.
    'Project.contrast.groupA': () => ({ strategies: ['FEW_SHOT'] }),
    'AdHocTextInput.text': () => 'Matrix text, no findings.',
    'ExtractInput.text': () => 'Matrix text, no findings.',
    // The root node(id:) is walked with every type of node below; walking it as a field reads A's project.
    'Query.node.id': () => a.ids.Project,
    'Query.chartImageUrl.path': () => `/charts/projects/${a.ids.Project}/ranking.svg?useCaseIds=${a.ids.UseCase}`,
  });

  beforeAll(async () => {
    t = await startTestApp();
    schema = await buildReportQlSchema();
    nodeTypes = nodeTypesOf(schema);
    a = await populate(t, 'ALPHAMARK');
    b = await populate(t, 'BRAVOMARK');
    b.allIds = await crawl(t, schema, [b.keys.id, ...Object.values(b.ids)]);
    a.allIds = await crawl(t, schema, [a.keys.id, ...Object.values(a.ids)]);
    serverObjects['ApiKey'] = [ok(await t.gql('{ viewer { apiKey { id } } }')).viewer.apiKey.id];
    ctxA = {
      schema,
      nodeTypes,
      explicitIdTypes: EXPLICIT_ID_TYPES,
      ownId: (type, key) => {
        const id = a.ids[SLOT_FIXTURES[key] ?? type];
        if (!id) throw new Unbuildable(key, `the fixtures have no ${type}`);
        return id;
      },
      unique: () => `matrix ${++counter}`,
      overrides: overrides(),
    };
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await a?.fake.close();
    await b?.fake.close();
  });

  /** Root and node-type fields, with the operation that reaches each on a node `id` of its parent. */
  function reachableFields(): { coordinate: string; parent: string; field: GraphQLField<unknown, unknown> }[] {
    const out: { coordinate: string; parent: string; field: GraphQLField<unknown, unknown> }[] = [];
    for (const type of objectTypesOf(schema)) {
      for (const field of Object.values(type.getFields())) out.push({ coordinate: `${type.name}.${field.name}`, parent: type.name, field });
    }
    return out;
  }

  /** Builds `node(id) { ... on Parent { field } }` or a root call; throws Unbuildable. */
  function operationFor(parent: string, field: GraphQLField<unknown, unknown>, parentId: string, args: Record<string, unknown>, depth: number): Operation {
    const selection = isLeafType(field.type) ? '' : selectionOf(field.type, depth, schema);
    if (parent === 'Query') return rootOperation('query', field, args, selection);
    if (parent === 'Mutation') return rootOperation('mutation', field, args, selection);
    if (parent === 'Subscription') return rootOperation('subscription', field, args, selection);
    if (!nodeTypes.includes(parent)) throw new Unbuildable(`${parent}.${field.name}`, `${parent} is not a node type: the walker reaches fields through node(id:)`);
    return nodeFieldOperation(parent, parentId, field, args, selection);
  }

  /** Object types with fields that no walk reaches (neither a root nor a node type, nor below them). */
  it('reaches every object type of the schema', () => {
    const reached = new Set<string>(['Query', 'Mutation', 'Subscription', ...nodeTypes]);
    const visit = (typeName: string) => {
      const type = schema.getType(typeName);
      if (!type || !isObjectType(type)) return;
      for (const field of Object.values(type.getFields())) {
        const inner = getNamedType(field.type);
        if (isObjectType(inner) && !reached.has(inner.name)) {
          reached.add(inner.name);
          visit(inner.name);
        }
      }
    };
    for (const name of [...reached]) visit(name);
    const unreached = objectTypesOf(schema).map((x) => x.name).filter((n) => !reached.has(n));
    expect(unreached).toEqual([]);
  });

  it('builds arguments for every field, mutation and subscription', () => {
    const unbuildable: string[] = [];
    for (const { coordinate, parent, field } of reachableFields()) {
      try {
        if (!['Query', 'Mutation', 'Subscription'].includes(parent) && !nodeTypes.includes(parent)) {
          // Fields of nested types are walked inside selections; those with required arguments must be reachable directly.
          if (field.args.some((x) => x.type.toString().endsWith('!') && x.defaultValue === undefined)) {
            throw new Unbuildable(coordinate, 'a required argument on a type that is not a node type: the walker cannot call it');
          }
          if (idSlotsOf(coordinate, field.args, nodeTypes, EXPLICIT_ID_TYPES).length > 0) {
            throw new Unbuildable(coordinate, 'an ID argument on a type that is not a node type: the walker cannot try it with foreign IDs');
          }
          continue;
        }
        const args = requiredArgsOf(coordinate, field.args, ctxA);
        for (const slot of idSlotsOf(coordinate, field.args, nodeTypes, EXPLICIT_ID_TYPES)) {
          if (slot.nodeType === null) throw new Unbuildable(`${coordinate}(${slot.path.join('.')})`, 'cannot tell which node type this ID takes: add it to EXPLICIT_ID_TYPES');
          if (slot.nodeType !== '*') withSlot(args, slot, b.ids[slot.nodeType]!, field.args, ctxA);
        }
      } catch (error) {
        if (error instanceof Unbuildable) unbuildable.push(error.message);
        else throw error;
      }
    }
    expect(unbuildable).toEqual([]);
  });

  it("node(id:) answers every object of B, through every field of its type, like an unknown ID", async () => {
    const problems: string[] = [];
    const checked = new Set<string>();
    for (const type of nodeTypes) {
      const ids = [...(b.allIds.get(type) ?? [])];
      if (ids.length === 0) {
        report(problems, type, 'B has no object of this type: extend populate()');
        continue;
      }
      const objectType = schema.getType(type) as unknown as { getFields(): Record<string, GraphQLField<unknown, unknown>> };
      for (const field of Object.values(objectType.getFields())) {
        const coordinate = `${type}.${field.name}`;
        let args: Record<string, unknown>;
        try {
          args = requiredArgsOf(coordinate, field.args, { ...ctxA, ownId: (nodeType) => b.ids[nodeType]! });
        } catch (error) {
          report(problems, coordinate, (error as Error).message);
          continue;
        }
        const foreignId = ids[0]!;
        const unknown = unknownId(type);
        const keys: [string, string | null][] = [...ROLES.map((r) => [r, keyOf(r)] as [string, string]), ['no key', null], ['revoked key', a.keys.revoked]];
        for (const [who, key] of keys) {
          const opB = operationFor(type, field, foreignId, args, WALK_DEPTH);
          const answerB = await t.gql(opB.query, opB.variables, key);
          const opU = operationFor(type, field, unknown, args, WALK_DEPTH);
          const answerU = await t.gql(opU.query, opU.variables, key);
          const what = `${who}: node(B's ${type}) { ${field.name} }`;
          check(problems, what, answerB, answerU, foreignId, unknown, opB.variables, key === null || key === a.keys.revoked ? 'UNAUTHENTICATED' : 'null');
          checked.add(coordinate);
        }
      }
      // Every other object of B of this type, by ID only.
      for (const id of ids.slice(1)) {
        for (const role of ROLES) {
          const answer = await t.gql('query($id: ID!) { node(id: $id) { id __typename } }', { id }, keyOf(role));
          if (JSON.stringify(answer.data) !== '{"node":null}' || answer.errors) report(problems, `${role}: node(B's ${type} ${id})`, JSON.stringify(answer));
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked.size).toBeGreaterThan(100);
  });

  /** Compares the answer to B's ID with the answer to an unknown one. */
  function check(problems: string[], what: string, answerB: GraphQLResponse, answerU: GraphQLResponse | Answer, foreignId: string, unknown: string, sent: unknown, expect: 'null' | 'UNAUTHENTICATED' | 'refusal' | 'like-unknown') {
    const leaks = leaksIn(answerB, b, sent);
    if (leaks.length) report(problems, what, `B's data in the answer: ${leaks.slice(0, 5).join('; ')}`);
    const nb = normalise(answerB as Answer, foreignId);
    const nu = normalise(answerU as Answer, unknown);
    if (nb !== nu) report(problems, what, `answers unlike an unknown ID:\n    B:       ${nb.slice(0, 600)}\n    unknown: ${nu.slice(0, 600)}`);
    const codes = codesOf(answerB as Answer);
    if (expect === 'UNAUTHENTICATED') {
      if (codes[0] !== 'UNAUTHENTICATED' || answerB.status !== 401) report(problems, what, `expected UNAUTHENTICATED (401), got ${answerB.status} ${codes.join(',') || 'no error'}`);
    } else if (expect === 'null') {
      if (answerB.errors?.length || JSON.stringify(answerB.data) !== '{"node":null}') report(problems, what, `expected node: null, got ${JSON.stringify(answerB).slice(0, 300)}`);
    } else if (expect === 'refusal') {
      if (codes.length === 0) report(problems, what, `not refused: ${JSON.stringify(answerB).slice(0, 300)}`);
      else if (!codes.every((c) => REFUSAL_CODES.has(c))) report(problems, what, `refused with ${codes.join(',')}: ${answerB.errors?.[0]?.message}`);
    } else if (codes.some((c) => !REFUSAL_CODES.has(c))) {
      report(problems, what, `answered ${codes.join(',')}: ${answerB.errors?.[0]?.message}`);
    }
  }

  /** The object of `tenant` an ID slot is tried with. */
  const idFor = (tenant: Tenant, slot: IdSlot) => tenant.ids[SLOT_FIXTURES[slot.key] ?? slot.nodeType!]!;

  /** Every (field, ID slot) outside the root `node`, with its field's required arguments built for A. */
  function idSlotCases(kinds: readonly string[]): { coordinate: string; parent: string; field: GraphQLField<unknown, unknown>; slot: IdSlot; args: Record<string, unknown> }[] {
    const out = [];
    for (const { coordinate, parent, field } of reachableFields()) {
      if (!kinds.includes(parent === 'Query' || parent === 'Mutation' || parent === 'Subscription' ? parent : 'Node')) continue;
      if (parent !== 'Query' && parent !== 'Mutation' && parent !== 'Subscription' && !nodeTypes.includes(parent)) continue;
      for (const slot of idSlotsOf(coordinate, field.args, nodeTypes, EXPLICIT_ID_TYPES)) {
        if (slot.nodeType === '*' || slot.nodeType === null) continue;
        out.push({ coordinate, parent, field, slot, args: requiredArgsOf(coordinate, field.args, ctxA) });
        const base = SLOT_BASES[slot.key];
        if (base) out.push({ coordinate, parent, field, slot, args: base(a) });
      }
    }
    return out;
  }

  /**
   * The keys a case is tried with: each role of A with B's object of the slot, no key and a
   * revoked key; then every other foreign object of the slot's type with A's ADMIN key.
   */
  function attempts(slot: IdSlot): { who: string; key: string | null; foreignId: string }[] {
    const primary = idFor(b, slot);
    const out: { who: string; key: string | null; foreignId: string }[] = [
      ...ROLES.map((r) => ({ who: r, key: keyOf(r), foreignId: primary })),
      { who: 'no key', key: null, foreignId: primary },
      { who: 'revoked key', key: a.keys.revoked, foreignId: primary },
    ];
    for (const id of foreignIdsOf(slot.nodeType!)) if (id !== primary) out.push({ who: 'ADMIN', key: a.keys.admin, foreignId: id });
    return out;
  }

  /** Every object of B of a type, and the server's own objects of it (the server admin key). */
  const foreignIdsOf = (type: string) => [...(b.allIds.get(type) ?? []), ...(serverObjects[type] ?? [])];

  const describeId = (id: string) => (Object.values(serverObjects).flat().includes(id) ? `the server's ${fromGlobalId(id)!.type}` : `B's ${fromGlobalId(id)!.type}`);

  it("query fields with an ID argument answer B's IDs like unknown ones", async () => {
    const problems: string[] = [];
    const cases = idSlotCases(['Query', 'Node']);
    // node(id:) takes any type: every foreign object, selected through every member of Node.
    const nodeField = schema.getQueryType()!.getFields()['node']!;
    for (const type of nodeTypes) {
      for (const foreignId of foreignIdsOf(type)) {
        for (const role of foreignId === b.ids[type] ? ROLES : (['ADMIN'] as const)) {
          const unknown = unknownId(type);
          const opB = rootOperation('query', nodeField, { id: foreignId }, selectionOf(nodeField.type, WALK_DEPTH, schema));
          const opU = rootOperation('query', nodeField, { id: unknown }, selectionOf(nodeField.type, WALK_DEPTH, schema));
          check(problems, `${role}: node(${describeId(foreignId)})`, await t.gql(opB.query, opB.variables, keyOf(role)), await t.gql(opU.query, opU.variables, keyOf(role)), foreignId, unknown, opB.variables, 'null');
        }
      }
    }
    for (const { coordinate, parent, field, slot, args } of cases) {
      const type = slot.nodeType!;
      for (const { who, key, foreignId } of attempts(slot)) {
        const unknown = unknownId(type);
        const opB = operationFor(parent, field, a.ids[parent] ?? '', withSlot(args, slot, foreignId, field.args, ctxA), WALK_DEPTH);
        const opU = operationFor(parent, field, a.ids[parent] ?? '', withSlot(args, slot, unknown, field.args, ctxA), WALK_DEPTH);
        const what = `${who}: ${coordinate}(${slot.path.join('.')}: ${describeId(foreignId)})`;
        check(problems, what, await t.gql(opB.query, opB.variables, key), await t.gql(opU.query, opU.variables, key), foreignId, unknown, opB.variables, key === null || key === a.keys.revoked ? 'UNAUTHENTICATED' : 'like-unknown');
      }
    }
    expect(problems).toEqual([]);
    expect(cases.length).toBeGreaterThan(5);
  });

  it("mutations refuse B's IDs like unknown ones and write nothing", async () => {
    const problems: string[] = [];
    const mutation = schema.getMutationType()!;
    const cases = idSlotCases(['Mutation']);
    const covered = new Set(cases.map((c) => c.coordinate));
    for (const { coordinate, field, slot, args } of cases) {
      const type = slot.nodeType!;
      for (const { who, key, foreignId } of attempts(slot)) {
        const unknown = unknownId(type);
        const opB = operationFor('Mutation', field, '', withSlot(args, slot, foreignId, field.args, ctxA), PAYLOAD_DEPTH);
        const opU = operationFor('Mutation', field, '', withSlot(args, slot, unknown, field.args, ctxA), PAYLOAD_DEPTH);
        const what = `${who}: ${coordinate}(${slot.path.join('.')}: ${describeId(foreignId)})`;
        const before = await databaseChecksum(t.dataSource);
        const answerB = await t.gql(opB.query, opB.variables, key);
        const after = await databaseChecksum(t.dataSource);
        if (before !== after) report(problems, what, `wrote to ${changedTables(before, after).join(', ')}`);
        const answerU = await t.gql(opU.query, opU.variables, key);
        check(problems, what, answerB, answerU, foreignId, unknown, opB.variables, key === null || key === a.keys.revoked ? 'UNAUTHENTICATED' : 'refusal');
      }
    }
    // Mutations without any ID argument (createProject): no key of A may use them to touch anything.
    for (const field of Object.values(mutation.getFields())) {
      if (covered.has(`Mutation.${field.name}`)) continue;
      const args = requiredArgsOf(`Mutation.${field.name}`, field.args, ctxA);
      for (const [who, key] of [...ROLES.map((r) => [r, keyOf(r)] as [string, string]), ['no key', null], ['revoked key', a.keys.revoked]] as [string, string | null][]) {
        const op = operationFor('Mutation', field, '', args, PAYLOAD_DEPTH);
        const before = await databaseChecksum(t.dataSource);
        const answer = await t.gql(op.query, op.variables, key);
        const after = await databaseChecksum(t.dataSource);
        const leaks = leaksIn(answer, b, op.variables);
        if (leaks.length) report(problems, `${who}: ${field.name}`, `B's data in the answer: ${leaks.join('; ')}`);
        const codes = codesOf(answer as Answer);
        if (codes.length === 0) report(problems, `${who}: ${field.name}`, 'a mutation without an ID went through for a project key: say in this suite what it may touch');
        else if (!codes.every((c) => REFUSAL_CODES.has(c))) report(problems, `${who}: ${field.name}`, `refused with ${codes.join(',')}`);
        if (before !== after) report(problems, `${who}: ${field.name}`, `wrote to ${changedTables(before, after).join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
    expect(cases.length).toBeGreaterThan(15);
  });

  it("subscriptions refuse B's IDs like unknown ones, with no event", async () => {
    const problems: string[] = [];
    const cases = idSlotCases(['Subscription']);
    for (const { coordinate, field, slot, args } of cases) {
      const type = slot.nodeType!;
      const foreignId = idFor(b, slot);
      const unknown = unknownId(type);
      const keys: [string, string | null][] = [...ROLES.map((r) => [r, keyOf(r)] as [string, string]), ['no key', null], ['revoked key', a.keys.revoked]];
      for (const [who, key] of keys) {
        const opB = operationFor('Subscription', field, '', withSlot(args, slot, foreignId, field.args, ctxA), PAYLOAD_DEPTH);
        const opU = operationFor('Subscription', field, '', withSlot(args, slot, unknown, field.args, ctxA), PAYLOAD_DEPTH);
        const what = `${who}: ${coordinate}(${slot.path.join('.')}: B's ${type})`;
        const answerB = await subscribe(t, key, opB);
        const answerU = await subscribe(t, key, opU);
        const leaks = leaksIn(answerB, b, opB.variables);
        if (leaks.length) report(problems, what, `B's data in the answer: ${leaks.join('; ')}`);
        if (answerB.events!.length > 0) report(problems, what, `${answerB.events!.length} events`);
        const nb = normalise(answerB, foreignId);
        const nu = normalise(answerU, unknown);
        if (nb !== nu) report(problems, what, `answers unlike an unknown ID:\n    B:       ${nb}\n    unknown: ${nu}`);
        const codes = codesOf(answerB);
        if (key === a.keys.revoked) {
          if (answerB.closed?.code !== 4403 && codes[0] !== 'UNAUTHENTICATED') report(problems, what, `expected the connection refused, got ${JSON.stringify(answerB)}`);
        } else if (key === null) {
          if (codes[0] !== 'UNAUTHENTICATED') report(problems, what, `expected UNAUTHENTICATED, got ${JSON.stringify(answerB)}`);
        } else if (codes[0] !== 'NOT_FOUND') {
          report(problems, what, `expected NOT_FOUND, got ${JSON.stringify(answerB)}`);
        }
      }
      // The same subscription on A's own object works (so the refusal above is about the ID).
      const own = await subscribe(t, a.keys.viewer, operationFor('Subscription', field, '', withSlot(args, slot, idFor(a, slot), field.args, ctxA), PAYLOAD_DEPTH), true);
      if (own.errors || own.closed) report(problems, `VIEWER: ${coordinate} on A's own ${type}`, JSON.stringify(own));
    }
    expect(problems).toEqual([]);
    expect(cases.length).toBe(Object.keys(schema.getSubscriptionType()!.getFields()).length);
  });

  it("A's own objects, walked field by field by each role, hold nothing of B", async () => {
    const problems: string[] = [];
    let walked = 0;
    for (const { coordinate, parent, field } of reachableFields()) {
      if (parent === 'Mutation' || parent === 'Subscription') continue;
      if (parent !== 'Query' && !nodeTypes.includes(parent)) continue;
      const args = requiredArgsOf(coordinate, field.args, ctxA);
      for (const role of ROLES) {
        let depth = WALK_DEPTH;
        let answer: GraphQLResponse;
        for (;;) {
          const op = operationFor(parent, field, a.ids[parent] ?? '', args, depth);
          answer = await t.gql(op.query, op.variables, keyOf(role));
          // A selection the cost limit refuses is walked one level shallower.
          if (depth > 1 && answer.errors?.[0]?.extensions?.['maxCost'] !== undefined) {
            depth--;
            continue;
          }
          break;
        }
        walked++;
        const leaks = leaksIn(withoutAuditTargets(answer), b, {});
        if (leaks.length) report(problems, `${role}: ${coordinate}`, `B's data: ${leaks.slice(0, 5).join('; ')}`);
        const codes = codesOf(answer as Answer);
        const allowed = role === 'ADMIN' ? [] : ['FORBIDDEN'];
        if (codes.some((c) => !allowed.includes(c))) report(problems, `${role}: ${coordinate}`, `answered ${codes.join(',')}: ${answer.errors?.[0]?.message}`);
      }
    }
    expect(problems).toEqual([]);
    expect(walked).toBeGreaterThan(300);
  });

  it('startRun does not ignore a useCaseId given with a dataset', async () => {
    const START = 'mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }';
    const other = await createUseCase(t, a.keys.id);
    const before = await databaseChecksum(t.dataSource);
    const base = { datasetId: a.ids.Dataset, modelId: a.ids.Model };
    const own = failure(await t.gql(START, { i: { ...base, useCaseId: other.id } }, a.keys.editor), 'BAD_USER_INPUT');
    expect(own.extensions?.field).toBe('useCaseId');
    const foreign = await t.gql(START, { i: { ...base, useCaseId: b.ids.UseCase } }, a.keys.editor);
    failure(foreign, 'NOT_FOUND');
    const unknown = unknownId('UseCase');
    expect(normalise(foreign as Answer, b.ids.UseCase!)).toBe(normalise((await t.gql(START, { i: { ...base, useCaseId: unknown } }, a.keys.editor)) as Answer, unknown));
    expect(await databaseChecksum(t.dataSource)).toBe(before);
    // The dataset's own use case may be named.
    ok(await t.gql(START, { i: { ...base, useCaseId: a.ids.UseCase } }, a.keys.editor));
  });

  it('the arguments built for A are valid: every mutation goes through for its ADMIN (positive control)', async () => {
    const problems: string[] = [];
    const mutation = schema.getMutationType()!;
    // Destructive ones last, so that every other one finds its objects.
    const order = (name: string) => (name === 'deleteUseCase' ? 2 : name.startsWith('revoke') ? 1 : 0);
    const fields = Object.values(mutation.getFields()).sort((x, y) => order(x.name) - order(y.name));
    for (const field of fields) {
      const args = requiredArgsOf(`Mutation.${field.name}`, field.args, ctxA);
      const op = operationFor('Mutation', field, '', args, 1);
      const key = field.name === 'createProject' || field.name === 'importProjectBundle' ? t.adminKey : a.keys.admin;
      const answer = await t.gql(op.query, op.variables, key);
      const codes = codesOf(answer as Answer);
      if (codes.some((c) => c !== 'CONFLICT')) report(problems, field.name, `${codes.join(',')}: ${answer.errors?.[0]?.message} with ${JSON.stringify(op.variables).slice(0, 300)}`);
    }
    expect(problems).toEqual([]);
  });
});
