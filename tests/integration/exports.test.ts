import { createApiKey, createDataset, createLoadedDataset, createProjectWithKeys, csv, importAnnotations, importPredictions, importReports, jsonl, ok, SECOND_ANNOTATOR_ROWS, STANDARD_REFERENCE, unknownId, type ProjectKeys } from '../support/graphql-fixtures';
import { PREDICTION_PAGE_SIZE } from '../../src/modules/export/export.service';
import { parseWithPython } from '../support/python-parse';
import { startTestApp, type TestApp } from '../support/test-app';

/** Report ids and values that a careless CSV writer breaks: commas, quotes, line breaks, non-ASCII. */
const AWKWARD_ID = 'R6, "quoted"\nsecond line';
const AWKWARD_SITE = 'rug, links; "bovenrug"\r\nčást zad';

const SCORE_FIELDS = `variables { variable { key } metric n estimate { value ciLow ciHigh confidence resamples } conditional { value } collapsed { value } validity
  invalid { category count } interRaterAgreement { value ciLow ciHigh confidence resamples } }`;

describe('exports: predictions, per-variable scores and leaderboards as CSV and JSON', () => {
  let t: TestApp;
  let keys: ProjectKeys;
  let useCaseId: string;
  let datasetId: string;
  let runIds: string[];
  let variableKeys: string[];

  const download = (path: string, key: string | null = keys.viewer) =>
    fetch(`http://127.0.0.1:${t.port}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  beforeAll(async () => {
    t = await startTestApp();
    keys = await createProjectWithKeys(t, 'Exports');
    const loaded = await createLoadedDataset(t, keys.id);
    useCaseId = loaded.useCase.id;
    datasetId = loaded.datasetId;
    variableKeys = loaded.useCase.variables.map((v) => v.key);
    await importReports(t, datasetId, jsonl([{ id: AWKWARD_ID, text: 'Melanoom, Breslow 2 mm.' }]));
    const reference = STANDARD_REFERENCE + csv([[AWKWARD_ID, 'G3', 'Yes', '2', '']]).trimEnd() + '\n';
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', reference, { isReference: true });
    const second = csv([...SECOND_ANNOTATOR_ROWS, [AWKWARD_ID, 'G3', 'Yes', '2', '']]);
    await importAnnotations(t, datasetId, 'Annotator B', 'CSV', second);
    const ids = ['R1', 'R2', 'R3', 'R4', 'R5', AWKWARD_ID];
    const grades = [['G2', 'G3', 'G1', 'G1', 'G2', 'G3'], ['G1', 'G3', 'G1', 'G3', 'G2', 'weird']];
    runIds = [];
    for (const [r, runGrades] of grades.entries()) {
      const run = await importPredictions(t, datasetId, {
        format: 'JSONL',
        layout: 'JSON_COLUMN',
        modelName: `model-${r}`,
        strategy: r === 0 ? 'ZERO_SHOT' : 'FEW_SHOT',
        content: jsonl(ids.map((id, i) => ({ id, extracted_data: { grade: runGrades[i], metastasis: i % 2 ? 'Yes' : 'No', breslow_mm: i === 2 ? 3.1 : '1,4', site: AWKWARD_SITE, organs: ['lever', 'long, links'] } }))),
      });
      runIds.push(run.run.id);
    }
    // A transport failure is data: the prediction keeps its status and code.
    await t.dataSource.query(`UPDATE predictions SET status = 'FAILED', error_code = 'HTTP_503' WHERE report_ordinal = (SELECT min(report_ordinal) FROM predictions) AND run_id = (SELECT run_id FROM predictions ORDER BY created_at DESC LIMIT 1)`);
  });
  afterAll(() => t.close());

  it("a run's predictions: the CSV and the JSON read by Python equal Run.predictions of GraphQL, and each download is audited", async () => {
    const runId = runIds[1]!;
    const graph = ok(
      await t.gql(
        `query ($id: ID!) { node(id: $id) { ... on Run { predictions(first: 100) { nodes { status errorCode report { externalId } fields { key value valid missing invalidCategory skipped } } } } } }`,
        { id: runId },
        keys.viewer,
      ),
    ).node.predictions.nodes as { status: string; errorCode: string | null; report: { externalId: string }; fields: { key: string; value: unknown; invalidCategory: string | null }[] }[];
    expect(graph.map((p) => p.status)).toContain('FAILED');
    const auditBefore = Number((await t.dataSource.query(`SELECT coalesce(sum(objects), 0) AS n FROM audit_events WHERE action = 'PREDICTIONS'`))[0].n);

    const csvResponse = await download(`/exports/runs/${runId}/predictions.csv`);
    expect(csvResponse.status).toBe(200);
    expect(csvResponse.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8/);
    const body = await csvResponse.text();
    // RFC 4180: records end with CRLF; a line break inside a field is quoted.
    expect(body.endsWith('\r\n')).toBe(true);
    const parsed = parseWithPython(body, 'csv');
    expect(parsed.header).toEqual(['report_external_id', 'status', 'error_code', ...variableKeys, ...variableKeys.map((k) => `${k}.invalid`)]);
    expect(parsed.rows).toHaveLength(graph.length);
    const cellOf = (value: unknown) => (value === null ? '' : typeof value === 'string' ? value : typeof value === 'number' ? String(value) : JSON.stringify(value));
    graph.forEach((p, i) => {
      const row = parsed.rows[i];
      expect(row.report_external_id).toBe(p.report.externalId);
      expect(row.status).toBe(p.status);
      expect(row.error_code).toBe(p.errorCode ?? '');
      for (const f of p.fields) {
        expect(row[f.key]).toBe(cellOf(f.value));
        expect(row[`${f.key}.invalid`]).toBe(f.invalidCategory ?? '');
      }
    });
    expect(parsed.rows.map((r: any) => r.report_external_id)).toContain(AWKWARD_ID);
    expect(parsed.rows.find((r: any) => r.report_external_id === 'R3').breslow_mm).toBe('3.1');
    expect(parsed.rows.find((r: any) => r.status === 'SUCCEEDED').site).toBe(graph.find((p) => p.status === 'SUCCEEDED')!.fields.find((f) => f.key === 'site')!.value);
    expect(JSON.parse(parsed.rows[1].organs)).toEqual(graph[1]!.fields.find((f) => f.key === 'organs')!.value);

    const jsonResponse = await download(`/exports/runs/${runId}/predictions.json`);
    expect(jsonResponse.headers.get('content-type')).toMatch(/^application\/json/);
    const document = parseWithPython(await jsonResponse.text(), 'json');
    expect(document.run).toEqual(expect.objectContaining({ id: runId, strategy: 'FEW_SHOT' }));
    expect(document.variables).toEqual(variableKeys);
    expect(
      document.predictions.map((p: any) => ({ status: p.status, errorCode: p.errorCode, report: { externalId: p.reportExternalId }, fields: variableKeys.map((key) => ({ key, ...p.fields[key] })) })),
    ).toEqual(graph);
    expect(document.predictions.map((p: any) => p.values)).toEqual(graph.map((p) => Object.fromEntries(p.fields.map((f) => [f.key, f.value]))));

    // Each prediction sent counts as a read of patient data, as Prediction.values does in GraphQL.
    const auditAfter = Number((await t.dataSource.query(`SELECT coalesce(sum(objects), 0) AS n FROM audit_events WHERE action = 'PREDICTIONS'`))[0].n);
    expect(auditAfter - auditBefore).toBe(2 * graph.length);
    const [row] = await t.dataSource.query(`SELECT kind, transport, key_name FROM audit_events WHERE action = 'PREDICTIONS' ORDER BY at DESC LIMIT 1`);
    expect(row).toEqual({ kind: 'READ', transport: 'HTTP', key_name: 'viewer key' });

    // The filters of Run.predictions(filter:) select the same rows.
    let sent = 0;
    for (const [query, filter] of [['status=FAILED', { status: 'FAILED' }], ['hasInvalid=true', { hasInvalid: true }], ['status=SUCCEEDED&hasInvalid=true', { status: 'SUCCEEDED', hasInvalid: true }]] as const) {
      const expected = ok(
        await t.gql(`query ($id: ID!, $f: PredictionFilter) { node(id: $id) { ... on Run { predictions(first: 100, filter: $f) { nodes { report { externalId } } } } } }`, { id: runId, f: filter }, keys.viewer),
      ).node.predictions.nodes.map((p: any) => p.report.externalId);
      const filtered = parseWithPython(await (await download(`/exports/runs/${runId}/predictions.csv?${query}`)).text(), 'csv');
      expect(filtered.rows.map((r: any) => r.report_external_id)).toEqual(expected);
      expect(expected.length).toBeGreaterThan(0);
      sent += expected.length;
    }
    expect((await download(`/exports/runs/${runId}/predictions.csv?status=MAYBE`)).status).toBe(400);
    // A filtered download counts the predictions it sent, no more.
    const auditFiltered = Number((await t.dataSource.query(`SELECT coalesce(sum(objects), 0) AS n FROM audit_events WHERE action = 'PREDICTIONS'`))[0].n);
    expect(auditFiltered - auditAfter).toBe(sent);
  });

  it('predictions are paged from the database: a run over 1,201 reports arrives whole and in report order', async () => {
    const big = await createDataset(t, useCaseId, 'large set', keys.admin);
    const ids = Array.from({ length: 1201 }, (_, i) => `B${String(i).padStart(4, '0')}`);
    await importReports(t, big, jsonl(ids.map((id) => ({ id, text: `Report ${id}` }))), {}, keys.admin);
    const run = await importPredictions(t, big, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'bulk', content: jsonl(ids.map((id, i) => ({ id, extracted_data: { grade: ['G1', 'G2', 'G3'][i % 3] } }))) }, keys.admin);
    const parsed = parseWithPython(await (await download(`/exports/runs/${run.run.id}/predictions.csv`)).text(), 'csv');
    expect(parsed.rows.map((r: any) => r.report_external_id)).toEqual(ids);
    expect(parsed.rows.map((r: any) => r.grade)).toEqual(ids.map((_, i) => ['G1', 'G2', 'G3'][i % 3]));
    const document = parseWithPython(await (await download(`/exports/runs/${run.run.id}/predictions.json`)).text(), 'json');
    expect(document.predictions).toHaveLength(1201);
    // The service hands the rows over one database page at a time.
    const viewerPrincipal = await t.services.apiKeys.authenticate(`Bearer ${keys.viewer}`);
    const data = await t.services.exports.predictions(viewerPrincipal, Buffer.from(run.run.id, 'base64url').toString('utf8').split(':')[1]!);
    const pages: number[] = [];
    for await (const page of data.pages()) pages.push(page.length);
    expect(pages).toEqual([PREDICTION_PAGE_SIZE, PREDICTION_PAGE_SIZE, 1201 - 2 * PREDICTION_PAGE_SIZE]);
  });

  it('?spreadsheet=true marks text cells a spreadsheet would take for a formula, keeps numbers, and is CSV only', async () => {
    const own = await createLoadedDataset(t, keys.id, { name: 'Formulas' });
    await importReports(t, own.datasetId, jsonl([{ id: '=HYPERLINK("x")', text: 'Naevus.' }, { id: '@SUM(A1)', text: 'Naevus.' }]));
    const run = await importPredictions(t, own.datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'model-formulas',
      content: jsonl([
        { id: '=HYPERLINK("x")', extracted_data: { grade: 'G1', breslow_mm: -1.5, site: '+cmd|calc', organs: ['-x'] } },
        { id: '@SUM(A1)', extracted_data: { grade: 'G2', breslow_mm: 2, site: '-2+3', organs: [] } },
      ]),
    });
    type Parsed = { header: string[]; rows: Record<string, string>[] };
    const plain = parseWithPython(await (await download(`/exports/runs/${run.run.id}/predictions.csv`)).text(), 'csv') as Parsed;
    const marked = parseWithPython(await (await download(`/exports/runs/${run.run.id}/predictions.csv?spreadsheet=true`)).text(), 'csv') as Parsed;
    expect(marked.header).toEqual(plain.header);
    expect(marked.rows.length).toBe(plain.rows.length);
    const rowOf = (parsed: Parsed, id: string) => parsed.rows.find((r) => r['report_external_id'] === id)!;
    for (const id of ['=HYPERLINK("x")', '@SUM(A1)']) {
      expect(rowOf(plain, id)).toBeDefined();
      expect(rowOf(marked, `'${id}`)).toBeDefined();
    }
    expect(rowOf(plain, '=HYPERLINK("x")')['site']).toBe('+cmd|calc');
    expect(rowOf(marked, `'=HYPERLINK("x")`)['site']).toBe("'+cmd|calc");
    expect(rowOf(marked, "'@SUM(A1)")['site']).toBe("'-2+3");
    // a number is a number, negative or not; cells that start otherwise are unchanged
    expect(rowOf(marked, `'=HYPERLINK("x")`)['breslow_mm']).toBe('-1.5');
    expect(rowOf(marked, "'@SUM(A1)")['grade']).toBe('G2');
    expect(rowOf(marked, "'@SUM(A1)")['status']).toBe('SUCCEEDED');
    const json = await download(`/exports/runs/${run.run.id}/predictions.json?spreadsheet=true`);
    expect(json.status).toBe(400);
    expect(((await json.json()) as { errors: { extensions: { code: string; field: string } }[] }).errors[0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'spreadsheet' });
    const board = await download(`/exports/use-cases/${useCaseId}/leaderboard.csv?datasetId=${datasetId}&spreadsheet=true`);
    expect(board.status).toBe(200);
  });

  it('per-variable scores with the same statistics options as GraphQL equal Run.scores', async () => {
    const query = `/exports/use-cases/${useCaseId}/scores.csv?datasetId=${encodeURIComponent(datasetId)}&resamples=200&seed=7&confidence=0.9`;
    const parsed = parseWithPython(await (await download(query)).text(), 'csv');
    const document = parseWithPython(await (await download(query.replace('scores.csv', 'scores.json'))).text(), 'json');
    expect(document.options).toEqual(expect.objectContaining({ resamples: 200, seed: 7, confidence: 0.9, scoring: 'EFFECTIVE', collapsed: false }));
    for (const runId of runIds) {
      const scores = ok(
        await t.gql(`query ($id: ID!) { node(id: $id) { ... on Run { name scores(options: { resamples: 200, seed: 7, confidence: 0.9 }) { ${SCORE_FIELDS} } } } }`, { id: runId }, keys.viewer),
      ).node;
      const csvRows = parsed.rows.filter((r: any) => r.run_id === runId);
      const jsonRows = document.scores.filter((r: any) => r.runId === runId);
      expect(csvRows.map((r: any) => r.variable)).toEqual(scores.scores.variables.map((v: any) => v.variable.key));
      scores.scores.variables.forEach((v: any, i: number) => {
        const row = csvRows[i];
        expect(row.run_name).toBe(scores.name);
        expect(row.metric).toBe(v.metric);
        expect(Number(row.n)).toBe(v.n);
        expect(Number(row.estimate)).toBe(v.estimate.value);
        expect(row.estimate_ci_low === '' ? null : Number(row.estimate_ci_low)).toBe(v.estimate.ciLow);
        expect(row.estimate_ci_high === '' ? null : Number(row.estimate_ci_high)).toBe(v.estimate.ciHigh);
        expect(Number(row.validity)).toBe(v.validity);
        expect(row.inter_rater_agreement === '' ? null : Number(row.inter_rater_agreement)).toBe(v.interRaterAgreement?.value ?? null);
        for (const c of v.invalid) expect(Number(row[`invalid_${c.category.toLowerCase()}`])).toBe(c.count);
        expect(jsonRows[i].estimate).toEqual(v.estimate);
        expect(jsonRows[i].interRaterAgreement).toEqual(v.interRaterAgreement);
      });
    }
    expect(parsed.rows.some((r: any) => r.inter_rater_agreement !== '')).toBe(true);
  });

  it('the leaderboard at both levels, with options, equals UseCase.leaderboard', async () => {
    for (const level of ['RUN', 'MODEL']) {
      const board = ok(
        await t.gql(
          `query ($u: ID!, $d: ID!, $level: RankingLevel!) { node(id: $u) { ... on UseCase { leaderboard(datasetId: $d, level: $level, options: { resamples: 150, seed: 3, scoring: CONDITIONAL }) {
            method exact score lowerBound voterCount entries { rank rankCiLow rankCiHigh strategy run { id name } model { id servedName } macroAverage { value ciLow ciHigh confidence resamples } } } } } }`,
          { u: useCaseId, d: datasetId, level },
          keys.viewer,
        ),
      ).node.leaderboard;
      const path = `/exports/use-cases/${useCaseId}/leaderboard.csv?datasetId=${datasetId}&level=${level}&resamples=150&seed=3&scoring=CONDITIONAL`;
      const parsed = parseWithPython(await (await download(path)).text(), 'csv');
      expect(parsed.rows).toHaveLength(board.entries.length);
      board.entries.forEach((e: any, i: number) => {
        const row = parsed.rows[i];
        expect(Number(row.rank)).toBe(e.rank);
        expect(row.rank_ci_low === '' ? null : Number(row.rank_ci_low)).toBe(e.rankCiLow);
        expect(row.rank_ci_high === '' ? null : Number(row.rank_ci_high)).toBe(e.rankCiHigh);
        expect(row.run_id).toBe(e.run.id);
        expect(row.model).toBe(e.model.servedName);
        expect(Number(row.macro_average)).toBe(e.macroAverage.value);
        expect(Number(row.macro_average_ci_low)).toBe(e.macroAverage.ciLow);
      });
      const document = parseWithPython(await (await download(path.replace('leaderboard.csv', 'leaderboard.json'))).text(), 'json');
      expect({ method: document.method, exact: document.exact, score: document.score, lowerBound: document.lowerBound, voterCount: document.voterCount }).toEqual({
        method: board.method,
        exact: board.exact,
        score: board.score,
        lowerBound: board.lowerBound,
        voterCount: board.voterCount,
      });
      expect(document.entries.map((e: any) => ({ rank: e.rank, runId: e.runId, modelId: e.modelId, macroAverage: e.macroAverage }))).toEqual(
        board.entries.map((e: any) => ({ rank: e.rank, runId: e.run.id, modelId: e.model.id, macroAverage: e.macroAverage })),
      );
    }
  });

  it('errors are JSON with a code and a status, and never repeat what the caller sent', async () => {
    const expectError = async (response: Response, status: number, code: string) => {
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe(code);
      expect(JSON.stringify(body)).not.toMatch(/EVIL|<script>/);
      return body.errors[0]!;
    };
    const predictions = `/exports/runs/${runIds[0]}/predictions.csv`;
    await expectError(await download(predictions, null), 401, 'UNAUTHENTICATED');
    await expectError(await download(predictions, keys.revoked), 401, 'UNAUTHENTICATED');
    await expectError(await download(predictions, 'EVIL<script>'), 401, 'UNAUTHENTICATED');
    // Another project's key sees nothing: the run does not exist for it.
    const other = await createProjectWithKeys(t, 'Someone else');
    await expectError(await download(predictions, other.admin), 404, 'NOT_FOUND');
    await expectError(await download(`/exports/runs/${unknownId('Run')}/predictions.csv`), 404, 'NOT_FOUND');
    await expectError(await download(`/exports/runs/EVIL<script>/predictions.csv`), 400, 'BAD_USER_INPUT');
    await expectError(await download(`/exports/runs/${runIds[0]}/predictions.EVIL`), 404, 'NOT_FOUND');
    await expectError(await download(`${predictions}?EVIL=1`), 400, 'BAD_USER_INPUT');
    const scores = `/exports/use-cases/${useCaseId}/scores.csv?datasetId=${datasetId}`;
    const bad = await expectError(await download(`${scores}&resamples=EVIL`), 400, 'BAD_USER_INPUT');
    expect(bad.message).toContain('resamples');
    await expectError(await download(`${scores}&resamples=20000`), 400, 'BAD_USER_INPUT');
    await expectError(await download(`${scores}&confidence=2`), 400, 'BAD_USER_INPUT');
    await expectError(await download(`/exports/use-cases/${useCaseId}/scores.csv`), 400, 'BAD_USER_INPUT');
    await expectError(await download(`/exports/use-cases/${useCaseId}/leaderboard.csv?datasetId=${datasetId}&level=EVIL`), 400, 'BAD_USER_INPUT');
    await expectError(await download(`/exports/use-cases/${useCaseId}/leaderboard.csv?datasetId=${unknownId('Dataset')}`), 404, 'NOT_FOUND');
    // A key without a project role to read gets FORBIDDEN from nothing here: VIEWER may read every export.
    const viewer = await createApiKey(t, keys.id, 'VIEWER', keys.admin);
    expect((await download(scores, viewer.secret)).status).toBe(200);
  });
});

describe('exports and charts for a browser front-end on another origin', () => {
  const FRONT_END = 'http://localhost:5173';
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ http: { corsOrigins: [FRONT_END] } });
  });
  afterAll(() => t.close());

  it('answers the preflight of an allowed origin and lets it read a download; another origin gets no CORS header', async () => {
    for (const path of ['/exports/runs/x/predictions.csv', '/charts/use-cases/x/heatmap.svg']) {
      const preflight = await fetch(`http://127.0.0.1:${t.port}${path}`, {
        method: 'OPTIONS',
        headers: { origin: FRONT_END, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(FRONT_END);
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    }
    const project = await createProjectWithKeys(t, 'CORS exports');
    const { useCase, datasetId } = await createLoadedDataset(t, project.id);
    await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true });
    const path = `/exports/use-cases/${useCase.id}/leaderboard.csv?datasetId=${datasetId}`;
    const allowed = await fetch(`http://127.0.0.1:${t.port}${path}`, { headers: { origin: FRONT_END, authorization: `Bearer ${project.viewer}` } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(FRONT_END);
    // the front-end may read the file name the server gives the download
    expect(allowed.headers.get('access-control-expose-headers')?.split(',')).toContain('Content-Disposition');
    expect(allowed.headers.get('content-disposition')).toMatch(/^attachment; filename="leaderboard-.+\.csv"$/);
    const other = await fetch(`http://127.0.0.1:${t.port}${path}`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${project.viewer}` } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
