import { listTag } from '../../src/db/pagination';
import type { RunExecutor } from '../../src/jobs/executor';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import {
  CREATE_DATASET,
  CREATE_PROMPT,
  CREATE_USE_CASE,
  createLoadedDataset,
  createProject,
  failure,
  IMPORT_ANNOTATIONS,
  IMPORT_PREDICTIONS,
  IMPORT_REPORTS,
  importAnnotations,
  jsonl,
  ok,
  rowId,
  STANDARD_VARIABLES,
  UPDATE_USE_CASE,
} from '../support/graphql-fixtures';
import { predictionRows, setUpRuns, startExecutor, waitForStatus, type RunSetup } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const IMPORT_CONFIG = `mutation($i: ImportUseCaseConfigInput!) { importUseCaseConfig(input: $i) { useCase { id } } }`;
const START_RUN = `mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`;
const EXTRACT = `mutation($i: ExtractInput!) { extract(input: $i) { status error errorCode values raw prediction { status errorCode } } }`;

const deepJson = (depth: number): unknown => JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
const forgeCursor = (cursor: Record<string, unknown>) => Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');

describe('input hygiene: values are refused, never altered, and never reach PostgreSQL as an internal error', () => {
  let t: TestApp;
  let projectId: string;
  let datasetId: string;
  let useCaseId: string;

  beforeAll(async () => {
    t = await startTestApp();
    projectId = (await createProject(t, 'Hygiene')).id;
    const loaded = await createLoadedDataset(t, projectId);
    datasetId = loaded.datasetId;
    useCaseId = loaded.useCase.id;
  });
  afterAll(() => t.close());

  /** No stored text anywhere holds U+FFFD, which is what a lone surrogate became. */
  async function expectNoReplacementCharacter(): Promise<void> {
    const rows = (await t.dataSource.query(
      `SELECT 'use_cases' AS t FROM use_cases WHERE use_cases::text LIKE '%' || chr(65533) || '%'
       UNION ALL SELECT 'variables' FROM variables WHERE variables::text LIKE '%' || chr(65533) || '%'
       UNION ALL SELECT 'reports' FROM reports WHERE reports::text LIKE '%' || chr(65533) || '%'
       UNION ALL SELECT 'prompts' FROM prompts WHERE prompts::text LIKE '%' || chr(65533) || '%'
       UNION ALL SELECT 'datasets' FROM datasets WHERE datasets::text LIKE '%' || chr(65533) || '%'
       UNION ALL SELECT 'annotations' FROM annotations WHERE annotations::text LIKE '%' || chr(65533) || '%'
       UNION ALL SELECT 'predictions' FROM predictions WHERE predictions::text LIKE '%' || chr(65533) || '%'`,
    )) as { t: string }[];
    expect(rows).toEqual([]);
  }

  /** POSTs a body written by hand, for what JSON.stringify cannot write (1e400). */
  async function rawPost(body: string) {
    const response = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` }, body });
    return { ...((await response.json()) as Record<string, any>), status: response.status } as any;
  }

  describe('lone UTF-16 surrogates', () => {
    it('in a string argument or a JSON value: BAD_USER_INPUT naming the field, nothing stored as U+FFFD', async () => {
      const cases: [string, string, Record<string, unknown>, string][] = [
        ['use case name', CREATE_USE_CASE, { input: { projectId, name: 'cut \ud800', variables: STANDARD_VARIABLES } }, 'name'],
        ['use case description', CREATE_USE_CASE, { input: { projectId, name: 'lone low', description: 'x\udc00', variables: STANDARD_VARIABLES } }, 'description'],
        ['variable default', CREATE_USE_CASE, { input: { projectId, name: 'lone default', variables: [{ key: 'a', type: 'FREE_TEXT', default: { v: ['\ud83d'] } }] } }, 'variables[0].default.v[0]'],
        ['variable option', CREATE_USE_CASE, { input: { projectId, name: 'lone option', variables: [{ key: 'a', type: 'CATEGORICAL', options: ['G1', 'G\ud800'] }] } }, 'variables[0].options[1]'],
        ['tag', UPDATE_USE_CASE, { input: { id: useCaseId, tags: ['ok', '\udfff'] } }, 'tags[1]'],
        ['dataset name', CREATE_DATASET, { input: { useCaseId, name: 'd\ud800' } }, 'name'],
        ['prompt system', CREATE_PROMPT, { input: { useCaseId, name: 'p', system: 'rules \ud800' } }, 'system'],
        ['prompt settings key', CREATE_PROMPT, { input: { useCaseId, name: 'p', settings: { 'k\ud800': 1 } } }, 'settings'],
        ['annotator name', IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'A\ud800', format: 'CSV', content: 'id,grade\nR1,G1\n' } }, 'annotatorName'],
      ];
      for (const [what, document, variables, field] of cases) {
        const error = failure(await t.gql(document, variables), 'BAD_USER_INPUT');
        expect([what, error.extensions?.field, error.message]).toEqual([what, field, expect.stringMatching(/lone UTF-16 surrogate/)]);
      }
      const search = await t.gql(`query ($p: ID!, $s: String) { project(id: $p) { useCases(search: $s) { totalCount } } }`, { p: projectId, s: 'mel\ud800' });
      expect(failure(search, 'BAD_USER_INPUT').extensions?.field).toBe('search');
      // A well-formed pair is text like any other.
      ok(await t.gql(CREATE_DATASET, { input: { useCaseId, name: 'set 𝔸 🧬' } }));
      await expectNoReplacementCharacter();
    });

    it('in an uploaded file (escaped in JSON, raw in CSV): a row or file error; nothing is written', async () => {
      const before = Number((await t.dataSource.query('SELECT count(*) AS n FROM reports'))[0].n);
      const reports = failure(
        await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: '{"id":"S1","text":"ok"}\n{"id":"S2","text":"cut \\ud800 here"}\n{"id":"S3","text":"t","m":{"\\udc00":1}}\n' } }),
        'BAD_USER_INPUT',
      );
      expect(reports.extensions?.rowErrors).toEqual([
        { row: 2, line: 2, field: 'text', reason: expect.stringMatching(/^field 'text' contains a lone UTF-16 surrogate/) },
        { row: 3, line: 3, field: 'm', reason: expect.stringMatching(/has a key that contains a lone UTF-16 surrogate/) },
      ]);
      const csv = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'CSV', content: 'id,text\nS1,ok\nS2,"half \ud83d"\n' } }), 'BAD_USER_INPUT');
      expect(csv.extensions?.rowErrors).toEqual([{ row: 0, line: 3, reason: expect.stringMatching(/^the file contains a lone UTF-16 surrogate/) }]);
      const annotations = failure(
        await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'A', format: 'JSON', content: '[{"id":"R1","site":"arm \\ud800"}]' } }),
        'BAD_USER_INPUT',
      );
      expect(annotations.extensions?.rowErrors).toEqual([{ row: 1, field: 'site', reason: expect.stringMatching(/lone UTF-16 surrogate/) }]);
      // In model output decoded from the raw text (a JSON escape inside a string of the file).
      const predictions = failure(
        await t.gql(IMPORT_PREDICTIONS, {
          input: { datasetId, format: 'JSONL', layout: 'RAW_OUTPUT', modelName: 'm', content: jsonl([{ id: 'R1', raw_output: '{"site": "arm \\ud800"}' }]) },
        }),
        'BAD_USER_INPUT',
      );
      expect(predictions.extensions?.rowErrors).toEqual([{ row: 1, reason: expect.stringMatching(/^the model output contains a lone UTF-16 surrogate/) }]);
      expect(Number((await t.dataSource.query('SELECT count(*) AS n FROM reports'))[0].n)).toBe(before);
      expect(Number((await t.dataSource.query('SELECT count(*) AS n FROM runs'))[0].n)).toBe(0);
      await expectNoReplacementCharacter();
    });
  });

  it('a request body that is not valid UTF-8 is refused, not decoded with U+FFFD in place of its bytes', async () => {
    const json = JSON.stringify({ query: 'mutation ($i: ImportReportsInput!) { importReports(input: $i) { inserted } }', variables: { i: { datasetId, format: 'CSV', content: 'id,text\nU1,@@\n' } } });
    const at = json.indexOf('@@');
    const body = Buffer.concat([Buffer.from(json.slice(0, at)), Buffer.from('geïnfiltreerd', 'latin1'), Buffer.from(json.slice(at + 2))]);
    const response = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` }, body });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ errors: [{ message: 'The request body is not valid UTF-8', extensions: { code: 'BAD_USER_INPUT' } }] });
    expect(Number((await t.dataSource.query(`SELECT count(*) AS n FROM reports WHERE external_id = 'U1'`))[0].n)).toBe(0);
    // The same text in UTF-8 is a report like any other.
    const utf8 = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` }, body: json.replace('@@', 'geïnfiltreerd') });
    expect(((await utf8.json()) as { data: { importReports: { inserted: number } } }).data.importReports.inserted).toBe(1);
  });

  describe('NUL characters that appear only after decoding', () => {
    it('YAML "\\0" and a JSON "\\u0000" inside an example output: BAD_USER_INPUT on promptYaml', async () => {
      const prompt = (extra: string) => `field_instructions:\n  - name: grade\n    type: string\n${extra}task: "Extract {json_template}"\n`;
      const yamlNul = failure(await t.gql(IMPORT_CONFIG, { i: { projectId, name: 'yaml nul', promptYaml: prompt('    default: "G\\0"\n') } }), 'BAD_USER_INPUT');
      expect(yamlNul.extensions).toMatchObject({ field: 'promptYaml', reason: 'BAD_CONFIG' });
      expect(yamlNul.message).toBe('prompt config: field_instructions[0].default contains a NUL character');
      const example = failure(
        await t.gql(IMPORT_CONFIG, { i: { projectId, name: 'example nul', promptYaml: `${prompt('')}examples:\n  - input: r\n    output: '{"grade": "G1\\u0000"}'\n` } }),
        'BAD_USER_INPUT',
      );
      expect(example.extensions?.field).toBe('promptYaml');
      const model = failure(
        await t.gql(IMPORT_CONFIG, { i: { projectId, name: 'model nul', promptYaml: prompt(''), modelYaml: 'model: "m\\0"\n' } }),
        'BAD_USER_INPUT',
      );
      expect(model.extensions?.field).toBe('modelYaml');
      expect(Number((await t.dataSource.query(`SELECT count(*) AS n FROM use_cases WHERE name IN ('yaml nul', 'example nul', 'model nul')`))[0].n)).toBe(0);
    });

    it('a JSON "\\u0000" in imported model output is removed like a literal NUL, also after parsing the raw output', async () => {
      const result = ok(
        await t.gql(IMPORT_PREDICTIONS, {
          input: { datasetId, format: 'JSONL', layout: 'RAW_OUTPUT', modelName: 'nul model', content: jsonl([{ id: 'R1', raw_output: '{"site": "arm\\u0000", "grade": "G1"}' }]) },
        }),
      );
      const [stored] = (await t.dataSource.query('SELECT parsed, cells->\'site\' AS site FROM predictions WHERE run_id = $1', [rowId(result.importPredictions.run.id)])) as {
        parsed: Record<string, unknown>;
        site: { value: string };
      }[];
      expect(stored!.parsed).toEqual({ site: 'arm', grade: 'G1' });
      expect(stored!.site.value).toBe('arm');
    });
  });

  describe('JSON nested deeper than 64 levels, and numbers out of range', () => {
    it('in a JSON argument, an imported file and a YAML config: BAD_USER_INPUT naming the field', async () => {
      ok(await t.gql(CREATE_USE_CASE, { input: { projectId, name: 'deep 64', variables: [{ key: 'a', type: 'FREE_TEXT', default: deepJson(64) }] } }));
      const deep = failure(await t.gql(CREATE_USE_CASE, { input: { projectId, name: 'deep 65', variables: [{ key: 'a', type: 'FREE_TEXT', default: deepJson(65) }] } }), 'BAD_USER_INPUT');
      expect(deep.extensions?.field).toMatch(/^variables\[0\]\.default(\.a)+$/);
      expect(deep.message).toMatch(/nested deeper than 64 levels/);
      // Deeper than JSON.stringify can write: the body is written by hand.
      const input = JSON.stringify({ datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'm', content: '{"id":"R1","extracted_data":{}}' });
      const config = '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000);
      const veryDeep = await rawPost(JSON.stringify({ query: IMPORT_PREDICTIONS, variables: { input: '@' } }).replace('"@"', `${input.slice(0, -1)},"config":${config}}`));
      expect(veryDeep.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: expect.stringMatching(/^config(\.a)+$/) });
      const file = failure(
        await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content: JSON.stringify({ id: 'D1', text: 't', meta: deepJson(100) }) } }),
        'BAD_USER_INPUT',
      );
      expect(file.extensions?.rowErrors).toEqual([{ row: 1, line: 1, field: expect.stringMatching(/^meta(\.a)+$/), reason: expect.stringMatching(/nested deeper than 64 levels/) }]);
      const yaml = failure(
        await t.gql(IMPORT_CONFIG, { i: { projectId, name: 'deep yaml', promptYaml: `field_instructions:\n  - name: a\n    default: ${'['.repeat(100)}${']'.repeat(100)}\n` } }),
        'BAD_USER_INPUT',
      );
      expect(yaml.extensions?.field).toBe('promptYaml');
      expect(yaml.message).toMatch(/nested deeper than 64 levels/);
    });

    it('lists nested deeper than 64 levels in a JSON argument are refused like objects, before anything walks them', async () => {
      const lists = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
      const prompt = (settings: string) =>
        rawPost(JSON.stringify({ query: CREATE_PROMPT, variables: { input: { useCaseId, name: 'nested lists', settings: '@' } } }).replace('"@"', settings));
      for (const depth of [65, 100_000]) {
        const refused = await prompt(lists(depth));
        expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: expect.stringMatching(/^settings(\[0\])+$/) });
        expect(refused.errors?.[0]?.message).toMatch(/nested deeper than 64 levels/);
      }
      const within = await prompt(lists(64));
      expect(within.errors).toBeUndefined();
      const input = JSON.stringify({ datasetId, format: 'JSONL', layout: 'WIDE', modelName: 'm', content: '{"id":"R1"}' });
      const columnMap = await rawPost(JSON.stringify({ query: IMPORT_PREDICTIONS, variables: { input: '@' } }).replace('"@"', `${input.slice(0, -1)},"columnMap":${lists(100_000)}}`));
      expect(columnMap.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: expect.stringMatching(/^columnMap(\[0\])+/) });
    });

    it('1e400 in a JSON literal, in JSON variables and in an imported file is refused, never stored as null', async () => {
      const literal = failure(
        await t.gql(`mutation ($p: ID!) { createUseCase(input: { projectId: $p, name: "inf literal", variables: [{ key: "a", type: FREE_TEXT, default: { n: 1e400 } }] }) { useCase { id } } }`, { p: projectId }),
        'BAD_USER_INPUT',
      );
      expect(literal.extensions?.field).toBe('variables[0].default.n');
      const variables = await rawPost(
        `{"query":"mutation ($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }","variables":{"i":{"projectId":"${projectId}","name":"inf variable","variables":[{"key":"a","type":"FREE_TEXT","default":[1, -1e400]}]}}}`,
      );
      expect(variables.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'variables[0].default[1]' });
      for (const [format, content] of [
        ['JSON', '[{"id":"N1","text":"t","size":1e400}]'],
        ['JSONL', '{"id":"N1","text":"t","size":-1e999}'],
        ['JSONL', '{"id":"N1","text":"t","size":1e-400}'],
      ] as const) {
        const error = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format, content } }), 'BAD_USER_INPUT');
        expect(error.extensions?.rowErrors[0]).toMatchObject({ row: 1, reason: expect.stringMatching(/number out of range/) });
      }
      const annotation = failure(await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId, annotatorName: 'N', format: 'JSONL', content: '{"id":"R1","breslow_mm":1e400}' } }), 'BAD_USER_INPUT');
      expect(annotation.extensions?.rowErrors[0].reason).toMatch(/number out of range/);
      const yaml = failure(
        await t.gql(IMPORT_CONFIG, { i: { projectId, name: 'inf yaml', promptYaml: 'field_instructions:\n  - name: a\n    type: number\n    default: 1e400\n' } }),
        'BAD_USER_INPUT',
      );
      expect(yaml.message).toMatch(/field_instructions\[0\]\.default holds a number out of range/);
      const stored = (await t.dataSource.query(`SELECT count(*) AS n FROM reports WHERE external_id = 'N1'`)) as { n: string }[];
      expect(Number(stored[0]!.n)).toBe(0);
    });
  });

  describe('forged cursors whose key is out of the column range', () => {
    it('are BAD_USER_INPUT on after, for timestamp, integer and id keys', async () => {
      const id = '0b6f1c8e-3d2a-4c5b-9e7f-1a2b3c4d5e6f';
      const useCases = listTag('e.created_at', rowId(projectId));
      const reports = listTag('e.ordinal', rowId(datasetId));
      const USE_CASES = `query ($p: ID!, $after: String) { project(id: $p) { useCases(first: 2, after: $after) { nodes { id } } } }`;
      const REPORTS = `query ($d: ID!, $after: String) { node(id: $d) { ... on Dataset { reports(first: 2, after: $after) { nodes { id } } } } }`;
      const forged: [string, string, Record<string, unknown>][] = [
        ['timestamp key not a date', USE_CASES, { p: projectId, after: forgeCursor({ k: 'k', i: id, l: useCases }) }],
        ['timestamp that does not exist', USE_CASES, { p: projectId, after: forgeCursor({ k: '2024-02-30T00:00:00.000Z', i: id, l: useCases }) }],
        ['timestamp in year 0', USE_CASES, { p: projectId, after: forgeCursor({ k: '0000-01-01T00:00:00.000Z', i: id, l: useCases }) }],
        ['ordinal beyond int4', REPORTS, { d: datasetId, after: forgeCursor({ k: 2 ** 31, i: id, l: reports }) }],
        ['ordinal beyond int8', REPORTS, { d: datasetId, after: forgeCursor({ k: 1e20, i: id, l: reports }) }],
        ['id not a uuid', REPORTS, { d: datasetId, after: forgeCursor({ k: 1, i: "1' OR '1'='1", l: reports }) }],
        ['not base64url', REPORTS, { d: datasetId, after: 'eyJr+/==' }],
      ];
      for (const [what, document, variables] of forged) {
        const error = failure(await t.gql(document, variables), 'BAD_USER_INPUT');
        expect([what, error.extensions?.field]).toEqual([what, 'after']);
      }
      // A real cursor still pages.
      const first = ok(await t.gql(`query ($d: ID!) { node(id: $d) { ... on Dataset { reports(first: 2) { pageInfo { endCursor } } } } }`, { d: datasetId }));
      const next = ok(await t.gql(REPORTS, { d: datasetId, after: first.node.reports.pageInfo.endCursor }));
      expect(next.node.reports.nodes).toHaveLength(2);
    });
  });

  describe('caps on what a use case, a dataset and a prompt hold', () => {
    const variable = (i: number) => ({ key: `v${i}`, type: 'FREE_TEXT' });

    it('200 variables, 1,000 options, 100 tags and 100 missing tokens: one more is BAD_USER_INPUT naming the field', async () => {
      ok(await t.gql(CREATE_USE_CASE, { input: { projectId, name: '200 variables', variables: Array.from({ length: 200 }, (_, i) => variable(i)) } }));
      for (const [what, input, field] of [
        ['5000 variables', { name: 'many', variables: Array.from({ length: 5000 }, (_, i) => variable(i)) }, 'variables'],
        ['201 variables', { name: 'many', variables: Array.from({ length: 201 }, (_, i) => variable(i)) }, 'variables'],
        ['1001 options', { name: 'many', variables: [{ key: 'c', type: 'CATEGORICAL', options: Array.from({ length: 1001 }, (_, i) => `o${i}`) }] }, 'variables[0].options'],
        ['101 tags', { name: 'many', tags: Array.from({ length: 101 }, (_, i) => `t${i}`), variables: [variable(0)] }, 'tags'],
        ['101 missing tokens', { name: 'many', missingTokens: Array.from({ length: 101 }, (_, i) => `m${i}`), variables: [variable(0)] }, 'missingTokens'],
        ['101 variable missing tokens', { name: 'many', variables: [{ ...variable(0), missingTokens: Array.from({ length: 101 }, (_, i) => `m${i}`) }] }, 'variables[0].missingTokens'],
      ] as const) {
        const error = failure(await t.gql(CREATE_USE_CASE, { input: { projectId, ...input } }), 'BAD_USER_INPUT');
        expect([what, error.extensions?.field]).toEqual([what, field]);
      }
      const update = failure(await t.gql(UPDATE_USE_CASE, { input: { id: useCaseId, variables: Array.from({ length: 201 }, (_, i) => variable(i)) } }), 'BAD_USER_INPUT');
      expect(update.extensions?.field).toBe('variables');
      expect(failure(await t.gql(UPDATE_USE_CASE, { input: { id: useCaseId, tags: Array.from({ length: 101 }, (_, i) => `t${i}`) } }), 'BAD_USER_INPUT').extensions?.field).toBe('tags');
      const yaml = Array.from({ length: 201 }, (_, i) => `  - name: v${i}\n    type: string\n`).join('');
      const config = failure(await t.gql(IMPORT_CONFIG, { i: { projectId, name: 'many yaml', promptYaml: `field_instructions:\n${yaml}` } }), 'BAD_USER_INPUT');
      expect([config.extensions?.field, config.message]).toEqual(['promptYaml', expect.stringMatching(/at most 200 variables/)]);
      expect(Number((await t.dataSource.query(`SELECT count(*) AS n FROM use_cases WHERE name IN ('many', 'many yaml')`))[0].n)).toBe(0);
    });

    it('100 examples per prompt and 50 annotators per dataset', async () => {
      const examples = (n: number) => Array.from({ length: n }, () => ({ input: 'report', output: { grade: 'G1' } }));
      ok(await t.gql(CREATE_PROMPT, { input: { useCaseId, name: 'hundred', examples: examples(100) } }));
      expect(failure(await t.gql(CREATE_PROMPT, { input: { useCaseId, name: 'too many', examples: examples(101) } }), 'BAD_USER_INPUT').extensions?.field).toBe('examples');

      const { datasetId: fresh } = await createLoadedDataset(t, projectId);
      for (let i = 0; i < 50; i++) await importAnnotations(t, fresh, `reader ${i}`, 'CSV', 'id,grade\nR1,G1\n');
      const fiftyFirst = failure(await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId: fresh, annotatorName: 'reader 50', format: 'CSV', content: 'id,grade\nR1,G1\n' } }), 'BAD_USER_INPUT');
      expect(fiftyFirst.extensions?.field).toBe('annotatorName');
      // An existing annotator is still corrected.
      ok(await t.gql(IMPORT_ANNOTATIONS, { input: { datasetId: fresh, annotatorName: 'reader 7', format: 'CSV', content: 'id,grade\nR1,G2\n' } }));
      expect(Number((await t.dataSource.query('SELECT count(*) AS n FROM annotators WHERE dataset_id = $1', [rowId(fresh)]))[0].n)).toBe(50);
    });
  });
});

describe('what an endpoint answers: text that cannot be stored fails the report with UNSTORABLE', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let worker: RunExecutor;
  let setup: RunSetup;
  /** Answers by report: a NUL in the content, a lone surrogate, a JSON "\u0000" and "\ud800" inside the answer, and two clean ones. */
  const answers = [
    '{"diagnosis": "melanoma", "breslow_mm": 1.2}\u0000',
    '{"diagnosis": "naevus", "breslow_mm": 0.4} cut \ud800',
    '{"diagnosis": "melanoma\\u0000", "breslow_mm": 1.0}',
    '{"diagnosis": "naevus", "note": "\\ud800"}',
    '{"diagnosis": "carcinoma", "breslow_mm": 2.0}',
    '{"diagnosis": "naevus", "note": "a\\\\u0000b"}',
  ];

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: [{ id: 'fake-model', maxModelLen: 32768 }] });
    setup = await setUpRuns(t, fake.baseUrl, { reports: answers.length, texts: (i) => `Report ${i}: lesion.` });
    worker = await startExecutor(t);
    fake.setHandler((body) => {
      const messages = (body.messages ?? []) as { content: string }[];
      const i = Number(/Report (\d+):/.exec(messages.map((m) => m.content).join('\n'))?.[1] ?? 4);
      return { content: answers[i]!, usage: { promptTokens: 10, completionTokens: 5 } };
    });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await fake.close();
  });

  it('a run: those reports FAILED with UNSTORABLE, the others stored exactly, the run finishes PARTIAL', async () => {
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run;
    await waitForStatus(t, run.id, ['PARTIAL', 'SUCCEEDED', 'FAILED']);
    const rows = await predictionRows(t, run.id);
    expect(rows.map((r) => [r.status, r.error_code])).toEqual([
      ['FAILED', 'UNSTORABLE'],
      ['FAILED', 'UNSTORABLE'],
      ['FAILED', 'UNSTORABLE'],
      ['FAILED', 'UNSTORABLE'],
      ['SUCCEEDED', null],
      ['SUCCEEDED', null],
    ]);
    expect(rows[0]!.error).toBe("the endpoint's answer cannot be stored: a value contains a NUL character");
    expect(rows[1]!.error).toMatch(/lone UTF-16 surrogate/);
    // Six characters backslash-u-0-0-0-0 are text, not a NUL: kept as the model wrote them.
    const [kept] = (await t.dataSource.query(`SELECT parsed FROM predictions p JOIN reports r ON r.id = p.report_id WHERE p.run_id = $1 AND r.ordinal = 5`, [rowId(run.id)])) as {
      parsed: Record<string, unknown>;
    }[];
    expect(kept!.parsed).toEqual({ diagnosis: 'naevus', note: 'a\\u0000b' });
    expect((await waitForStatus(t, run.id, ['PARTIAL'])).progress).toMatchObject({ succeeded: 2, failed: 4 });
  });

  it('extract: status FAILED with errorCode UNSTORABLE, and a stored FAILED prediction when asked to store', async () => {
    const call = (i: number, store = false) =>
      t.gql(EXTRACT, { i: { modelId: setup.modelId, useCaseId: setup.useCaseId, text: `Report ${i}: lesion again.`, reportId: `x${i}`, ...(store ? { store: { datasetId: setup.datasetId } } : {}) } });
    for (const i of [0, 1, 2, 3]) {
      const result = ok(await call(i)).extract;
      expect([i, result.status, result.errorCode, result.raw]).toEqual([i, 'FAILED', 'UNSTORABLE', []]);
    }
    const stored = ok(await call(2, true)).extract;
    expect(stored).toMatchObject({ status: 'FAILED', errorCode: 'UNSTORABLE', prediction: { status: 'FAILED', errorCode: 'UNSTORABLE' } });
    expect(ok(await call(4)).extract).toMatchObject({ status: 'SUCCEEDED', values: { diagnosis: 'carcinoma', breslow_mm: 2 } });
  });
});
