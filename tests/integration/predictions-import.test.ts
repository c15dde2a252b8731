import {
  CREATE_PROMPT,
  createDataset,
  createLoadedDataset,
  createProjectWithKeys,
  createUseCase,
  csv,
  expectAccessErrors,
  failure,
  IMPORT_PREDICTIONS,
  importPredictions,
  importReports,
  jsonl,
  MALFORMED_ID,
  ok,
  predictionFields,
  RUN_PREDICTIONS,
  rowId,
  type ProjectKeys,
  type UseCaseFixture,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const ALL_VALID_R1 = {
  grade: 'graad 2',
  metastasis: 'nee',
  breslow_mm: '1,4',
  site: 'bovenrug links',
  organs: ['long', ' lever '],
  mitoses: '2/mm2',
  birads: '4B',
};

const NORMALISED_R1 = { grade: 'G2', metastasis: 'No', breslow_mm: 1.4, site: 'bovenrug links', organs: ['long', 'lever'], mitoses: '2/mm2', birads: '4B' };

interface PredictionNode {
  id: string;
  status: string;
  raw: string | null;
  reasoning: string | null;
  values: Record<string, unknown> | null;
  parsed: Record<string, unknown> | null;
  report: { externalId: string };
}

describe('prediction imports', () => {
  let t: TestApp;
  let a: ProjectKeys;
  let b: ProjectKeys;
  let useCase: UseCaseFixture;
  let datasetId: string;

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Prediction project A');
    b = await createProjectWithKeys(t, 'Prediction project B');
    ({ useCase, datasetId } = await createLoadedDataset(t, a.id, { name: 'Imported runs' }));
  });
  afterAll(() => t.close());

  async function predictionsOf(runId: string): Promise<Record<string, PredictionNode>> {
    const nodes = ok(await t.gql(RUN_PREDICTIONS, { id: runId })).node.predictions.nodes as PredictionNode[];
    return Object.fromEntries(nodes.map((p) => [p.report.externalId, p]));
  }

  async function counts(): Promise<{ runs: number; models: number; predictions: number }> {
    const [row] = (await t.dataSource.query(
      `SELECT (SELECT count(*)::int FROM runs WHERE project_id = $1) AS runs,
              (SELECT count(*)::int FROM models WHERE project_id = $1) AS models,
              (SELECT count(*)::int FROM predictions WHERE project_id = $1) AS predictions`,
      [rowId(a.id)],
    )) as [{ runs: number; models: number; predictions: number }];
    return row;
  }

  it('RAW_OUTPUT: parses model output like an executed run; missing reports make the run PARTIAL', async () => {
    const content = jsonl([
      { id: 'R1', raw_output: `<think>Graad 2 staat in de conclusie.</think>\n\`\`\`json\n${JSON.stringify(ALL_VALID_R1)}\n\`\`\`` },
      { id: 'R2', raw_output: '{"grade": "G5", "metastasis": "Yes", "breslow_mm": "3-4", "birads": "4A or 4B", "site": "Not specified", "mitoses": "onbekend"}' },
      { id: 'R3', raw_output: 'I cannot answer this question.' },
    ]);
    const payload = ok(
      await t.gql(IMPORT_PREDICTIONS, { input: { datasetId, format: 'JSONL', layout: 'RAW_OUTPUT', modelName: 'org/model-8b', content } }, a.editor),
    ).importPredictions;
    expect(payload).toMatchObject({ imported: 3, missingReports: 2 });
    expect(payload.run).toMatchObject({
      name: 'org/model-8b · ZERO_SHOT (imported)',
      status: 'PARTIAL',
      source: 'IMPORTED',
      strategy: 'ZERO_SHOT',
      model: { servedName: 'org/model-8b', endpoint: null },
      dataset: { id: datasetId },
      prompt: null,
      progress: { total: 5, succeeded: 3, failed: 0 },
    });
    expect(payload.run.config).toEqual({ imported: { layout: 'RAW_OUTPUT', format: 'JSONL', rows: 3 } });

    const predictions = await predictionsOf(payload.run.id);
    expect(Object.keys(predictions).sort()).toEqual(['R1', 'R2', 'R3']);
    expect(predictions.R1).toMatchObject({ status: 'SUCCEEDED', reasoning: 'Graad 2 staat in de conclusie.', values: NORMALISED_R1 });
    expect(predictions.R1!.raw).toContain('<think>');
    expect(predictions.R1!.parsed).toEqual(ALL_VALID_R1);

    const fields = await predictionFields(t, payload.run.id);
    expect(Object.values(fields.R1!).every((f) => f.valid && f.invalidCategory === null)).toBe(true);
    expect(Object.keys(fields.R1!)).toEqual(useCase.variables.map((v) => v.key));
    // docs/scoring.md §1 and §3: the invalid-output taxonomy.
    expect(fields.R2!.grade).toEqual({ key: 'grade', value: null, valid: false, missing: false, invalidCategory: 'OTHER', skipped: false });
    expect(fields.R2!.breslow_mm).toMatchObject({ valid: false, invalidCategory: 'AMBIGUOUS' });
    expect(fields.R2!.birads).toMatchObject({ valid: false, invalidCategory: 'MULTI_VALUED' });
    expect(fields.R2!.organs).toMatchObject({ valid: false, missing: false, invalidCategory: 'MISSING' });
    expect(fields.R2!.site).toEqual({ key: 'site', value: null, valid: true, missing: true, invalidCategory: null, skipped: false });
    expect(fields.R2!.mitoses).toMatchObject({ valid: true, missing: false, value: 'onbekend' });
    expect(fields.R2!.metastasis).toMatchObject({ valid: true, value: 'Yes' });
    expect(Object.values(fields.R3!).map((f) => f.invalidCategory)).toEqual(useCase.variables.map(() => 'MISSING'));

    const filtered = ok(
      await t.gql(
        `query ($id: ID!) { node(id: $id) { ... on Run {
           invalid: predictions(filter: { hasInvalid: true }) { totalCount nodes { report { externalId } } }
           clean: predictions(filter: { hasInvalid: false }) { totalCount nodes { report { externalId } } } } } }`,
        { id: payload.run.id },
      ),
    ).node;
    expect(filtered.invalid.nodes.map((p: PredictionNode) => p.report.externalId).sort()).toEqual(['R2', 'R3']);
    expect(filtered.clean).toEqual({ totalCount: 1, nodes: [{ report: { externalId: 'R1' } }] });
  });

  it('JSON_COLUMN: an object in JSON Lines, a JSON string or a Python dict literal in CSV', async () => {
    const prompt = ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: useCase.id, name: 'few-shot' } })).createPrompt.prompt;
    const fromJsonl = await importPredictions(t, datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'json-column-model',
      strategy: 'FEW_SHOT',
      name: 'few-shot run',
      promptId: prompt.id,
      config: { temperature: 0, seed: 7 },
      content: jsonl(['R1', 'R2', 'R3', 'R4', 'R5'].map((id) => ({ id, extracted_data: id === 'R1' ? ALL_VALID_R1 : { grade: 'G1' } }))),
    });
    expect(fromJsonl).toMatchObject({ imported: 5, missingReports: 0 });
    expect(fromJsonl.run).toMatchObject({ name: 'few-shot run', status: 'SUCCEEDED', strategy: 'FEW_SHOT', prompt: { id: prompt.id, version: 1 } });
    expect(fromJsonl.run.config).toEqual({ temperature: 0, seed: 7, imported: { layout: 'JSON_COLUMN', format: 'JSONL', rows: 5 } });
    expect((await predictionsOf(fromJsonl.run.id)).R1!.values).toEqual(NORMALISED_R1);

    const content = csv([
      ['report', 'output', 'model_text'],
      ['R1', JSON.stringify(ALL_VALID_R1), 'raw R1'],
      ['R2', "{'grade': 'G3', 'metastasis': None, 'organs': ['long', 'lever'], 'breslow_mm': 2.0, 'site': 'één geïnfiltreerd', 'birads': True}", 'raw R2'],
      ['R3', "{'grade': 'G1'", 'raw R3'],
      ['R4', '', ''],
    ]);
    const fromCsv = await importPredictions(t, datasetId, {
      format: 'CSV',
      layout: 'JSON_COLUMN',
      modelName: 'json-column-model',
      idField: 'report',
      objectField: 'output',
      rawField: 'model_text',
      content,
    });
    expect(fromCsv).toMatchObject({ imported: 4, missingReports: 1, run: { status: 'PARTIAL', model: { id: fromJsonl.run.model.id } } });
    const predictions = await predictionsOf(fromCsv.run.id);
    expect(predictions.R1!.values).toEqual(NORMALISED_R1);
    expect(predictions.R1!.raw).toBe('raw R1');
    expect(predictions.R2!.values).toMatchObject({ grade: 'G3', metastasis: null, organs: ['long', 'lever'], breslow_mm: 2, site: 'één geïnfiltreerd' });
    const fields = await predictionFields(t, fromCsv.run.id);
    expect(fields.R2!.metastasis).toMatchObject({ valid: true, missing: true });
    expect(fields.R2!.birads).toMatchObject({ valid: false, invalidCategory: 'OUT_OF_FORMAT' });
    // An unreadable object: every field OUT_OF_FORMAT. No object at all: every field MISSING.
    expect(Object.values(fields.R3!).map((f) => f.invalidCategory)).toEqual(useCase.variables.map(() => 'OUT_OF_FORMAT'));
    expect(Object.values(fields.R4!).map((f) => f.invalidCategory)).toEqual(useCase.variables.map(() => 'MISSING'));
    expect(predictions.R4!.raw).toBeNull();
  });

  it('WIDE: one column per variable, with a column map', async () => {
    const content = csv([
      ['id', 'grade', 'metastasis', 'breslow_mm', 'BI-RADS', 'text_out'],
      ['R1', 'graad 3', 'ja', '0,8', '4C', 'full answer'],
      ['R2', 'G2', '', 'about 2', '4', 'second'],
    ]);
    const payload = await importPredictions(t, datasetId, {
      format: 'CSV',
      layout: 'WIDE',
      modelName: 'wide-model',
      columnMap: { birads: 'BI-RADS' },
      rawField: 'text_out',
      content,
    });
    expect(payload).toMatchObject({ imported: 2, missingReports: 3 });
    const predictions = await predictionsOf(payload.run.id);
    expect(predictions.R1!.values).toMatchObject({ grade: 'G3', metastasis: 'Yes', breslow_mm: 0.8, birads: '4C' });
    expect(predictions.R1!.raw).toBe('full answer');
    const fields = await predictionFields(t, payload.run.id);
    expect(fields.R1!.site).toMatchObject({ valid: false, invalidCategory: 'MISSING' });
    expect(fields.R2!.metastasis).toMatchObject({ valid: true, missing: true });
    expect(fields.R2!.breslow_mm).toMatchObject({ valid: false, invalidCategory: 'AMBIGUOUS' });
    expect(fields.R2!.birads).toMatchObject({ valid: false, invalidCategory: 'OTHER' });
  });

  it('takes per-prediction tokens and latency, so imported runs have usage too', async () => {
    const content = csv([
      ['id', 'grade', 'prompt_tokens', 'completion_tokens', 'latency'],
      ['R1', 'G1', '1200', '80', '950.4'],
      ['R2', 'G2', 1000, 40, 450],
      ['R3', 'G3', '', '', ''],
    ]);
    const usage = { promptTokensField: 'prompt_tokens', completionTokensField: 'completion_tokens', latencyMsField: 'latency' };
    const payload = await importPredictions(t, datasetId, { format: 'CSV', layout: 'WIDE', modelName: 'usage-model', content, ...usage });
    const run = ok(
      await t.gql(
        `query($id: ID!) { node(id: $id) { ... on Run { usage { promptTokens completionTokens meanLatencyMs latencyP50Ms latencyP95Ms tokensPerSecond }
          predictions(first: 5) { nodes { report { externalId } promptTokens completionTokens latencyMs } } } } }`,
        { id: payload.run.id },
      ),
    ).node;
    // Latency statistics are over the predictions that have one (R3 has none).
    expect(run.usage).toMatchObject({ promptTokens: 2200, completionTokens: 120, meanLatencyMs: 700, latencyP50Ms: 700, tokensPerSecond: null });
    expect(run.usage.latencyP95Ms).toBeCloseTo(450 + 0.95 * 500, 9);
    expect(run.predictions.nodes.map((p: { promptTokens: number | null; latencyMs: number | null }) => [p.promptTokens, p.latencyMs])).toEqual([
      [1200, 950],
      [1000, 450],
      [null, null],
    ]);
    const bad = failure(
      await t.gql(IMPORT_PREDICTIONS, {
        input: { datasetId, format: 'CSV', layout: 'WIDE', modelName: 'usage-model', ...usage, content: csv([['id', 'grade', 'prompt_tokens', 'completion_tokens', 'latency'], ['R1', 'G1', '12.5', '-1', 'slow']]) },
      }),
      'BAD_USER_INPUT',
    );
    expect(bad.extensions!.rowErrors.map((e: { field: string }) => e.field)).toEqual(['prompt_tokens', 'completion_tokens', 'latency']);
  });

  it('MEDICAL_RECORD_LLM_CSV: the framework output with Python dict literals', async () => {
    const content = csv([
      ['patientID', 'Text', 'raw_output', 'reasoning', 'extracted_data', 'candidates'],
      [
        'R1',
        'Melanoom, graad 2.',
        '```json\n{"grade": "G2"}\n```',
        "['Stap 1: graad.', 'Stap 2: metastasen.']",
        "{'grade': 'graad 2', 'metastasis': 'nee', 'breslow_mm': 1.4, 'organs': ['long', 'lever'], 'site': 'bovenrug links', 'mitoses': '2/mm2', 'birads': '4B'}",
        "[{'temperature': 0.3, 'extracted_data': {'grade': 'G2'}}, {'temperature': 0.9, 'extracted_data': {'grade': 'G3'}}]",
      ],
      ['R2', 'Česká přítomnost metastáz', 'I cannot answer.', 'I cannot answer.', '', ''],
      ['R3', 'x', 'raw', '', "{'grade': 'G1', 'breslow_mm': '3-4', 'birads': '4A or 4B', 'metastasis': 'misschien'}", ''],
    ]);
    const payload = await importPredictions(t, datasetId, {
      format: 'CSV',
      layout: 'MEDICAL_RECORD_LLM_CSV',
      modelName: 'framework-model',
      strategy: 'SELF_CONSISTENCY',
      content,
    });
    expect(payload).toMatchObject({ imported: 3, missingReports: 2, run: { source: 'IMPORTED', strategy: 'SELF_CONSISTENCY', status: 'PARTIAL' } });
    const predictions = await predictionsOf(payload.run.id);
    expect(predictions.R1!.values).toEqual(NORMALISED_R1);
    expect(predictions.R1!.reasoning).toBe('Stap 1: graad.\n\nStap 2: metastasen.');
    expect(predictions.R1!.raw).toBe('```json\n{"grade": "G2"}\n```');
    const samples = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on Prediction { samples } } }', { id: predictions.R1!.id })).node.samples;
    expect(samples).toEqual([
      { temperature: 0.3, extracted_data: { grade: 'G2' } },
      { temperature: 0.9, extracted_data: { grade: 'G3' } },
    ]);
    const fields = await predictionFields(t, payload.run.id);
    expect(Object.values(fields.R2!).every((f) => !f.valid && f.invalidCategory === 'MISSING')).toBe(true);
    expect(fields.R3!.breslow_mm.invalidCategory).toBe('AMBIGUOUS');
    expect(fields.R3!.birads.invalidCategory).toBe('MULTI_VALUED');
    expect(fields.R3!.metastasis.invalidCategory).toBe('OTHER');
    expect(fields.R3!.site.invalidCategory).toBe('MISSING');
  });

  it('reuses the imported model of the same name and lists runs by filter', async () => {
    const useCase2 = await createUseCase(t, a.id);
    const dataset2 = await createDataset(t, useCase2.id);
    await importPredictionsFor(dataset2, 'shared-model');
    const first = await importPredictionsFor(datasetId, 'shared-model');
    const second = await importPredictionsFor(datasetId, 'shared-model');
    expect(second.run.model.id).toBe(first.run.model.id);
    const models = ok(await t.gql('query ($id: ID!) { project(id: $id) { models(first: 200) { nodes { servedName } } } }', { id: a.id })).project.models.nodes;
    expect(models.filter((m: { servedName: string }) => m.servedName === 'shared-model')).toHaveLength(1);

    const runs = ok(
      await t.gql(
        `query ($id: ID!, $model: ID!) { node(id: $id) { ... on UseCase {
           byModel: runs(filter: { modelId: $model, source: IMPORTED }) { totalCount nodes { id } }
           executed: runs(filter: { source: EXECUTED }) { totalCount } } } }`,
        { id: useCase.id, model: first.run.model.id },
      ),
    ).node;
    expect(runs.byModel.totalCount).toBe(2);
    expect(runs.byModel.nodes.map((r: { id: string }) => r.id).sort()).toEqual([first.run.id, second.run.id].sort());
    expect(runs.executed.totalCount).toBe(0);

    async function importPredictionsFor(id: string, modelName: string) {
      if (id !== datasetId) {
        await t.gql('mutation ($input: ImportReportsInput!) { importReports(input: $input) { inserted } }', {
          input: { datasetId: id, format: 'JSONL', content: jsonl([{ id: 'R1', text: 'x' }]) },
        });
      }
      return importPredictions(t, id, { format: 'JSONL', layout: 'JSON_COLUMN', modelName, content: jsonl([{ id: 'R1', extracted_data: { grade: 'G1' } }]) });
    }
  });

  it('rejects unknown reports, repeated ids and missing columns, writing nothing', async () => {
    const before = await counts();
    const importFile = (input: Record<string, unknown>) =>
      t.gql(IMPORT_PREDICTIONS, { input: { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'never-created', ...input } });

    const unknown = failure(
      await importFile({ content: jsonl([{ id: 'R1', extracted_data: {} }, { id: 'R99', extracted_data: {} }, { id: 'R98', extracted_data: {} }]) }),
      'BAD_USER_INPUT',
    );
    expect(unknown.extensions?.rowErrors).toEqual([
      { row: 2, reason: 'report "R99" is not in the dataset' },
      { row: 3, reason: 'report "R98" is not in the dataset' },
    ]);
    expect(unknown.message).toContain('row 2');

    const repeated = failure(await importFile({ content: jsonl([{ id: 'R1', extracted_data: {} }, { id: 'R1', extracted_data: {} }]) }), 'BAD_USER_INPUT');
    expect((repeated.extensions?.rowErrors as { row: number }[]).map((e) => e.row)).toEqual([2]);

    const noColumn = failure(await importFile({ content: jsonl([{ id: 'R1', output: {} }]) }), 'BAD_USER_INPUT');
    expect((noColumn.extensions?.rowErrors as { row: number; field: string }[])[0]).toMatchObject({ row: 0, field: 'extracted_data' });

    const rawNotString = failure(await importFile({ layout: 'RAW_OUTPUT', content: jsonl([{ id: 'R1', raw_output: 5 }]) }), 'BAD_USER_INPUT');
    expect((rawNotString.extensions?.rowErrors as { field: string }[])[0]!.field).toBe('raw_output');

    const framework = failure(
      await importFile({ format: 'CSV', layout: 'MEDICAL_RECORD_LLM_CSV', content: 'case,extracted_data\nR1,{}\n' }),
      'BAD_USER_INPUT',
    );
    expect((framework.extensions?.rowErrors as { row: number }[])[0]!.row).toBe(0);

    failure(await importFile({ content: '' }), 'BAD_USER_INPUT');
    expect(failure(await importFile({ modelName: '  ', content: jsonl([{ id: 'R1', extracted_data: {} }]) }), 'BAD_USER_INPUT').extensions?.field).toBe(
      'modelName',
    );
    expect(await counts()).toEqual(before);
  });

  it('reads a file of several chunks as it arrives: all rows or none, every problem listed in row order', async () => {
    const big = await createDataset(t, useCase.id, 'Several chunks');
    const N = 2500;
    await importReports(t, big, jsonl(Array.from({ length: N }, (_, i) => ({ id: `B${i}`, text: `report ${i}` }))));
    const rows = Array.from({ length: N }, (_, i) => ({ id: `B${i}`, extracted_data: { grade: `G${1 + (i % 3)}` }, tokens: i % 7 }));
    const before = await counts();
    const importFile = (content: string, modelName: string) =>
      t.gql(IMPORT_PREDICTIONS, { input: { datasetId: big, format: 'JSONL', layout: 'JSON_COLUMN', modelName, promptTokensField: 'tokens', content } });

    // Problems in three different chunks, the first of them after rows were checked clean and written.
    const broken = rows.map((r) => ({ ...r }));
    broken[1499] = { ...broken[1499]!, id: 'B3' };
    broken[2399] = { ...broken[2399]!, id: 'elsewhere' };
    broken[700] = { ...broken[700]!, tokens: -1 };
    const rejected = failure(await importFile(jsonl(broken), 'chunked-never'), 'BAD_USER_INPUT');
    expect(rejected.extensions?.rowErrors).toEqual([
      { row: 701, field: 'tokens', reason: 'tokens must be a whole number from 0 to 2147483647' },
      { row: 1500, line: 1500, field: 'id', reason: "duplicate external id 'B3' (also in row 4)" },
      { row: 2400, reason: 'report "elsewhere" is not in the dataset' },
    ]);
    expect(await counts()).toEqual(before);

    const payload = await importPredictions(t, big, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'chunked', promptTokensField: 'tokens', content: jsonl(rows) });
    expect(payload).toMatchObject({ imported: N, missingReports: 0, run: { status: 'SUCCEEDED' } });
    const [stored] = (await t.dataSource.query(
      `SELECT count(*)::int AS n, count(DISTINCT p.report_id)::int AS reports, sum(p.prompt_tokens)::int AS tokens, max(r.prompt_tokens)::int AS run_tokens,
              max(r.succeeded_count)::int AS succeeded, max(r.config->'imported'->>'rows') AS config_rows
       FROM predictions p JOIN runs r ON r.id = p.run_id WHERE r.id = $1`,
      [rowId(payload.run.id)],
    )) as [{ n: number; reports: number; tokens: number; run_tokens: number; succeeded: number; config_rows: string }];
    const tokens = rows.reduce((sum, r) => sum + r.tokens, 0);
    expect(stored).toEqual({ n: N, reports: N, tokens, run_tokens: tokens, succeeded: N, config_rows: String(N) });
  });

  it('checks the prompt: another use case or project is NOT_FOUND, a malformed id BAD_USER_INPUT', async () => {
    const before = await counts();
    const otherUseCase = await createUseCase(t, a.id);
    const otherPrompt = ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: otherUseCase.id, name: 'elsewhere' } })).createPrompt.prompt;
    const foreignUseCase = await createUseCase(t, b.id);
    const foreignPrompt = ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: foreignUseCase.id, name: 'of B' } }, b.editor)).createPrompt.prompt;
    const input = { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'prompted', content: jsonl([{ id: 'R1', extracted_data: {} }]) };
    failure(await t.gql(IMPORT_PREDICTIONS, { input: { ...input, promptId: otherPrompt.id } }, a.editor), 'NOT_FOUND');
    failure(await t.gql(IMPORT_PREDICTIONS, { input: { ...input, promptId: foreignPrompt.id } }, a.editor), 'NOT_FOUND');
    const malformed = failure(await t.gql(IMPORT_PREDICTIONS, { input: { ...input, promptId: MALFORMED_ID } }, a.editor), 'BAD_USER_INPUT');
    expect(malformed.extensions?.field).toBe('promptId');
    expect((await counts()).runs).toBe(before.runs);
  });

  it('enforces access', async () => {
    const before = await counts();
    const foreignUseCase = await createUseCase(t, b.id);
    const foreign = await createDataset(t, foreignUseCase.id);
    await expectAccessErrors(
      t,
      IMPORT_PREDICTIONS,
      { datasetId, format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'guarded', content: jsonl([{ id: 'R1', extracted_data: { grade: 'G1' } }]) },
      { keys: a, forbiddenKeys: [a.viewer], idField: 'datasetId', foreignId: foreign, unknownType: 'Dataset' },
    );
    expect(await counts()).toEqual(before);
    // Runs and predictions of project A are invisible to project B.
    const runId = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on UseCase { runs(first: 1) { nodes { id } } } } }', { id: useCase.id })).node
      .runs.nodes[0].id;
    expect(ok(await t.gql(RUN_PREDICTIONS, { id: runId }, b.admin)).node).toBeNull();
    expect(ok(await t.gql(RUN_PREDICTIONS, { id: runId }, a.viewer)).node.predictions.totalCount).toBeGreaterThan(0);
  });
});
