import { randomUUID } from 'node:crypto';
import { LOG_MARKER } from './test-log';
import type { GraphQLResponse, TestApp } from './test-app';

/** A GraphQL error as the API sends it. */
export interface ApiError {
  message: string;
  path?: string[];
  extensions?: Record<string, any>;
}

/** The data of a successful response; fails the test with the errors otherwise. */
export function ok<T = Record<string, any>>(result: GraphQLResponse<T>): T {
  if (result.errors?.length || !result.data) {
    throw new Error(`expected success, got HTTP ${result.status}: ${JSON.stringify(result.errors ?? result)}`);
  }
  return result.data;
}

/** The first error of a failed response, after checking its `extensions.code`. */
export function failure(result: GraphQLResponse<any>, code: string): ApiError {
  const error = result.errors?.[0];
  if (!error) throw new Error(`expected ${code}, got data ${JSON.stringify(result.data)}`);
  if (error.extensions?.code !== code) {
    throw new Error(`expected ${code}, got ${String(error.extensions?.code)}: ${error.message}`);
  }
  return error;
}

/** Global IDs the server never issued: a well-formed one of a type, and a malformed string. */
export const MALFORMED_ID = 'definitely-not-a-global-id';
export function unknownId(type: string): string {
  return globalId(type, randomUUID());
}

/** The server's global ID encoding (base64url of "Type:uuid"), to forge IDs in tests. */
export function globalId(type: string, uuid: string): string {
  return Buffer.from(`${type}:${uuid}`, 'utf8').toString('base64url');
}

/** Row uuid behind one of our global IDs (for direct SQL in tests). */
export function rowId(globalId: string): string {
  const decoded = Buffer.from(globalId, 'base64url').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1);
}

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

export const CREATE_PROJECT = /* GraphQL */ `
  mutation ($input: CreateProjectInput!) {
    createProject(input: $input) {
      project { id name }
      adminKey { secret apiKey { id role serverAdmin prefix } }
    }
  }`;

export const CREATE_API_KEY = /* GraphQL */ `
  mutation ($input: CreateApiKeyInput!) {
    createApiKey(input: $input) { secret apiKey { id name role serverAdmin prefix revokedAt project { id } } }
  }`;

export const REVOKE_API_KEY = /* GraphQL */ `
  mutation ($input: RevokeApiKeyInput!) { revokeApiKey(input: $input) { apiKey { id revokedAt } } }`;

export const VARIABLE_FIELDS = /* GraphQL */ `
  id key type description options aliases collapseMap default tolerance weight order graphStep missingTokens
  dependsOn { key values }`;

export const CREATE_USE_CASE = /* GraphQL */ `
  mutation ($input: CreateUseCaseInput!) {
    createUseCase(input: $input) {
      useCase { id name description language reportType tags missingTokens variables { ${VARIABLE_FIELDS} } }
    }
  }`;

export const UPDATE_USE_CASE = /* GraphQL */ `
  mutation ($input: UpdateUseCaseInput!) {
    updateUseCase(input: $input) {
      useCase { id name description language tags missingTokens variables { ${VARIABLE_FIELDS} } }
    }
  }`;

export const DELETE_USE_CASE = /* GraphQL */ `
  mutation ($input: DeleteUseCaseInput!) { deleteUseCase(input: $input) { deletedId } }`;

export const CREATE_DATASET = /* GraphQL */ `
  mutation ($input: CreateDatasetInput!) {
    createDataset(input: $input) { dataset { id name language provenance reportCount useCase { id } } }
  }`;

export const IMPORT_REPORTS = /* GraphQL */ `
  mutation ($input: ImportReportsInput!) {
    importReports(input: $input) { inserted updated dataset { id reportCount } }
  }`;

export const IMPORT_ANNOTATIONS = /* GraphQL */ `
  mutation ($input: ImportAnnotationsInput!) {
    importAnnotations(input: $input) { reports values unknownColumns annotator { id name kind isReference } }
  }`;

export const CREATE_PROMPT = /* GraphQL */ `
  mutation ($input: CreatePromptInput!) {
    createPrompt(input: $input) {
      prompt { id name version system fieldInstructions task exampleIntro final settings examples { name input reasoning output } }
    }
  }`;

export const IMPORT_PREDICTIONS = /* GraphQL */ `
  mutation ($input: ImportPredictionsInput!) {
    importPredictions(input: $input) {
      imported missingReports
      run {
        id name status source strategy config
        model { id servedName endpoint { id } }
        dataset { id } prompt { id version }
        progress { total succeeded failed pending }
      }
    }
  }`;

/** Every prediction of a run with its per-variable fields (first 200). */
export const RUN_PREDICTIONS = /* GraphQL */ `
  query ($id: ID!) {
    node(id: $id) {
      ... on Run {
        predictions(first: 200) {
          totalCount
          nodes {
            id status raw reasoning values parsed finishReason
            report { externalId }
            fields { key value valid missing invalidCategory skipped }
          }
        }
      }
    }
  }`;

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/** One variable of every type, with aliases and a collapse map: the default test use case. */
export const STANDARD_VARIABLES = [
  {
    key: 'grade',
    type: 'CATEGORICAL',
    description: 'Tumour grade',
    options: ['G1', 'G2', 'G3', 'Not specified'],
    aliases: { 'graad 1': 'G1', 'graad 2': 'G2', 'graad 3': 'G3' },
  },
  { key: 'metastasis', type: 'BINARY', options: ['Yes', 'No', 'Not specified'], aliases: { ja: 'Yes', nee: 'No' } },
  { key: 'breslow_mm', type: 'NUMERIC', tolerance: 0.05 },
  { key: 'site', type: 'FREE_TEXT' },
  { key: 'organs', type: 'LIST' },
  { key: 'mitoses', type: 'EXACT_STRING' },
  {
    key: 'birads',
    type: 'CATEGORICAL',
    options: ['3', '4A', '4B', '4C', '5'],
    collapseMap: { '4A': '4', '4B': '4', '4C': '4' },
  },
];

/**
 * Five Dutch/Czech reports as JSON Lines (external ids R1…R5). Each carries the log marker:
 * report text must never reach a log line (the global teardown checks the run's logs).
 */
export const REPORT_TEXTS: Record<string, string> = {
  R1: `Melanoom bovenrug links, Breslow 1,4 mm. Graad 2. Geen metastasen. [${LOG_MARKER}-report-R1]`,
  R2: `Česká přítomnost metastáz, één geïnfiltreerd lymfeklier; long en lever. [${LOG_MARKER}-report-R2]`,
  R3: `Nodulair melanoom onderbeen, Breslow 3,1 mm, mitosen 6/mm2. [${LOG_MARKER}-report-R3]`,
  R4: `Re-excisie zonder restmelanoom. [${LOG_MARKER}-report-R4]`,
  R5: `Mamma: BI-RADS 4B laesie, biopsie geadviseerd. [${LOG_MARKER}-report-R5]`,
};

/** An endpoint API key for fixtures: write-only, so in no answer and no log line. */
export const ENDPOINT_API_KEY = `sk-${LOG_MARKER}-endpoint-key`;

export function reportsJsonl(texts: Record<string, string> = REPORT_TEXTS): string {
  return Object.entries(texts)
    .map(([id, text]) => JSON.stringify({ id, text, source: 'test' }))
    .join('\n');
}

/** RFC 4180 CSV: every cell quoted when it needs to be. */
export function csv(rows: readonly (readonly (string | number | null)[])[]): string {
  const cell = (v: string | number | null) => {
    const s = v === null ? '' : String(v);
    return /[",\n\r;\t]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return rows.map((r) => r.map(cell).join(',')).join('\n') + '\n';
}

export function jsonl(records: readonly unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Builders (each fails the test on an API error)
// ---------------------------------------------------------------------------------------------

export interface ProjectKeys {
  id: string;
  name: string;
  admin: string;
  adminKeyId: string;
  editor: string;
  viewer: string;
  /** An EDITOR key that has been revoked. */
  revoked: string;
}

export async function createProject(t: TestApp, name: string): Promise<{ id: string; adminKey: string; adminKeyId: string }> {
  const data = ok(await t.gql(CREATE_PROJECT, { input: { name } }));
  return { id: data.createProject.project.id, adminKey: data.createProject.adminKey.secret, adminKeyId: data.createProject.adminKey.apiKey.id };
}

export async function createApiKey(
  t: TestApp,
  projectId: string,
  role: 'ADMIN' | 'EDITOR' | 'VIEWER',
  key: string = t.adminKey,
): Promise<{ id: string; secret: string }> {
  const data = ok(await t.gql(CREATE_API_KEY, { input: { projectId, role, name: `${role.toLowerCase()} key` } }, key));
  return { id: data.createApiKey.apiKey.id, secret: data.createApiKey.secret };
}

/** A project with one key of each role. */
export async function createProjectWithKeys(t: TestApp, name: string): Promise<ProjectKeys> {
  const project = await createProject(t, name);
  const editor = await createApiKey(t, project.id, 'EDITOR', project.adminKey);
  const viewer = await createApiKey(t, project.id, 'VIEWER', project.adminKey);
  const revoked = await createApiKey(t, project.id, 'EDITOR', project.adminKey);
  ok(await t.gql(REVOKE_API_KEY, { input: { id: revoked.id } }, project.adminKey));
  return {
    id: project.id,
    name,
    admin: project.adminKey,
    adminKeyId: project.adminKeyId,
    editor: editor.secret,
    viewer: viewer.secret,
    revoked: revoked.secret,
  };
}

/**
 * The access errors every tenant-scoped mutation shares: no key and a revoked key are
 * UNAUTHENTICATED; `forbiddenKeys` (roles below the needed one) are FORBIDDEN; in `idField`,
 * another project's object or an unknown ID is NOT_FOUND and a malformed ID BAD_USER_INPUT.
 * `input` must be valid for the project of `keys` apart from the key's role.
 */
export async function expectAccessErrors(
  t: TestApp,
  document: string,
  input: Record<string, unknown>,
  options: { keys: ProjectKeys; forbiddenKeys: string[]; idField: string; foreignId: string; unknownType: string },
): Promise<void> {
  const { keys, idField } = options;
  const anonymous = await t.gql(document, { input }, null);
  expect(anonymous.status).toBe(401);
  failure(anonymous, 'UNAUTHENTICATED');
  failure(await t.gql(document, { input }, keys.revoked), 'UNAUTHENTICATED');
  for (const key of options.forbiddenKeys) failure(await t.gql(document, { input }, key), 'FORBIDDEN');
  failure(await t.gql(document, { input: { ...input, [idField]: options.foreignId } }, keys.admin), 'NOT_FOUND');
  failure(await t.gql(document, { input: { ...input, [idField]: unknownId(options.unknownType) } }, keys.admin), 'NOT_FOUND');
  const malformed = failure(await t.gql(document, { input: { ...input, [idField]: MALFORMED_ID } }, keys.admin), 'BAD_USER_INPUT');
  expect(malformed.extensions?.field).toBe(idField);
}

export interface UseCaseFixture {
  id: string;
  variables: { id: string; key: string }[];
}

export async function createUseCase(
  t: TestApp,
  projectId: string,
  input: Record<string, unknown> = {},
  key: string = t.adminKey,
): Promise<UseCaseFixture> {
  const data = ok(
    await t.gql(CREATE_USE_CASE, { input: { projectId, name: `use case ${randomUUID().slice(0, 8)}`, variables: STANDARD_VARIABLES, ...input } }, key),
  );
  return data.createUseCase.useCase;
}

export async function createDataset(t: TestApp, useCaseId: string, name = 'test set', key: string = t.adminKey): Promise<string> {
  return ok(await t.gql(CREATE_DATASET, { input: { useCaseId, name } }, key)).createDataset.dataset.id;
}

export async function importReports(
  t: TestApp,
  datasetId: string,
  content: string = reportsJsonl(),
  extra: Record<string, unknown> = {},
  key: string = t.adminKey,
): Promise<{ inserted: number; updated: number }> {
  return ok(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content, ...extra } }, key)).importReports;
}

export async function importAnnotations(
  t: TestApp,
  datasetId: string,
  annotatorName: string,
  format: 'CSV' | 'JSON' | 'JSONL',
  content: string,
  extra: Record<string, unknown> = {},
  key: string = t.adminKey,
): Promise<{ reports: number; values: number; unknownColumns: string[]; annotator: { id: string; isReference: boolean } }> {
  return ok(await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName, format, content, ...extra } }, key)).importAnnotations;
}

export async function importPredictions(
  t: TestApp,
  datasetId: string,
  input: Record<string, unknown>,
  key: string = t.adminKey,
): Promise<Record<string, any>> {
  return ok(await t.gql(IMPORT_PREDICTIONS, { input: { datasetId, ...input } }, key)).importPredictions;
}

/** A use case with the standard variables, a dataset and the five reports. */
export async function createLoadedDataset(
  t: TestApp,
  projectId: string,
  input: Record<string, unknown> = {},
): Promise<{ useCase: UseCaseFixture; datasetId: string }> {
  const useCase = await createUseCase(t, projectId, input);
  const datasetId = await createDataset(t, useCase.id);
  await importReports(t, datasetId);
  return { useCase, datasetId };
}

/** Fields of one prediction by report external id and variable key. */
export async function predictionFields(
  t: TestApp,
  runId: string,
  key: string = t.adminKey,
): Promise<Record<string, Record<string, { value: unknown; valid: boolean; missing: boolean; invalidCategory: string | null; skipped: boolean }>>> {
  const data = ok(await t.gql(RUN_PREDICTIONS, { id: runId }, key));
  const out: Record<string, Record<string, any>> = {};
  for (const p of data.node.predictions.nodes) {
    out[p.report.externalId] = Object.fromEntries(p.fields.map((f: { key: string }) => [f.key, f]));
  }
  return out;
}

/** Statements that are not the request's own work: the API-key check and transaction control. */
export function isBookkeeping(sql: string): boolean {
  const s = sql.trim().toUpperCase();
  if (/^(START TRANSACTION|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE SAVEPOINT)/.test(s)) return true;
  // The project revision is looked up once per request when this process does not know it from
  // a notification yet: a constant per request, present or not by timing.
  return /"API_KEYS"|\bAPI_KEYS\b|\bANALYTICS_CHANGES\b/.test(s);
}

/** Reference annotations for R1…R5 of the standard use case. */
export const STANDARD_REFERENCE = csv([
  ['id', 'grade', 'metastasis', 'breslow_mm', 'mitoses'],
  ['R1', 'G2', 'No', '1.4', `3/HPF ${LOG_MARKER}-annotation`],
  ['R2', 'G3', 'Yes', '', ''],
  ['R3', 'G1', 'No', '3.1', `6/mm2 ${LOG_MARKER}-annotation`],
  ['R4', 'Not specified', 'No', '', ''],
  ['R5', 'G2', 'Not specified', '', ''],
]);

/** A second annotator's rows for R1…R5 (header first), disagreeing with the reference here and there. */
export const SECOND_ANNOTATOR_ROWS: readonly string[][] = [
  ['id', 'grade', 'metastasis', 'breslow_mm', 'mitoses'],
  ['R1', 'G2', 'No', '1.4', '3/HPF'],
  ['R2', 'G2', 'Yes', '', ''],
  ['R3', 'G1', 'Yes', '3.1', ''],
  ['R4', 'Not specified', 'No', '', ''],
  ['R5', 'G1', 'Not specified', '', ''],
];

/** A JSON_COLUMN predictions file for R1…R5 with the given grades. */
export function standardPredictions(grades: string[]): string {
  return jsonl(['R1', 'R2', 'R3', 'R4', 'R5'].map((id, i) => ({ id, extracted_data: { grade: grades[i], metastasis: 'No', breslow_mm: '1,4' } })));
}
