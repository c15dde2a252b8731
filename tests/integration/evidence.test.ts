import type { RunExecutor } from '../../src/jobs/executor';
import { fakeQuotes, startFakeLlm, type FakeLlm, type QuoteKind } from '../support/fake-llm/fake-llm-server';
import { ok } from '../support/graphql-fixtures';
import { parseWithPython } from '../support/python-parse';
import { collect, expectedValues, RUN_VARIABLES, setUpRuns, startExecutor, waitForStatus, wsClient, type RunSetup } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

/** Reports with Dutch and Czech diacritics, a combining accent and an emoji, and the answer they ask for. */
function evidenceReport(i: number): string {
  return (
    `Verslag ${i}: excisie van een naevus op de rug, patiënt één keer gezien; café\u0301 🙂.\n` +
    `Nález: žádné známky malignity, okraje čisté (${i} mm).\nANSWER: ${JSON.stringify(expectedValues(i))}`
  );
}

const STATUS_OF_KIND: Record<QuoteKind, string> = { EXACT: 'EXACT', CASE_AND_SPACE: 'NORMALISED', SLIGHTLY_WRONG: 'FUZZY', INVENTED: 'UNALIGNED' };
const KEYS = RUN_VARIABLES.map((v) => v.key);
const FIELDS = 'fields { key value evidence { quote status start end text occurrences } }';
const START_RUN = /* GraphQL */ `mutation($i: StartRunInput!) { startRun(input: $i) { run { id } } }`;
const PREDICTIONS = /* GraphQL */ `query($id: ID!) { node(id: $id) { ... on Run { predictions(first: 50) { nodes { report { externalId text } ${FIELDS} } } } } }`;
const EXTRACT = /* GraphQL */ `mutation($i: ExtractInput!) { extract(input: $i) { status values ${FIELDS} } }`;

interface Field {
  key: string;
  value: unknown;
  evidence: { quote: string; status: string; start: number | null; end: number | null; text: string | null; occurrences: number }[];
}

/** Every field's spans are the fake's quotes of the text, with the status their kind implies and offsets that slice the text to the span. */
function expectEvidence(fields: Field[], text: string, seed: number): void {
  const quotes = fakeQuotes(text, KEYS, seed);
  expect(fields.map((f) => f.key)).toEqual(KEYS);
  for (const field of fields) {
    const expected = quotes[field.key]!;
    expect(field.evidence.map((e) => [e.quote, e.status])).toEqual(expected.map((q) => [q.quote, STATUS_OF_KIND[q.kind]]));
    for (const span of field.evidence) {
      if (span.status === 'UNALIGNED') {
        expect(span).toMatchObject({ start: null, end: null, text: null, occurrences: 0 });
      } else {
        expect(text.slice(span.start!, span.end!)).toBe(span.text);
        expect(span.occurrences).toBeGreaterThanOrEqual(1);
      }
    }
  }
}

describe('evidence through the public API', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let worker: RunExecutor;
  let setup: RunSetup;
  const REPORTS = 6;

  beforeAll(async () => {
    t = await startTestApp();
    fake = await startFakeLlm({ models: [{ id: 'fake-model', maxModelLen: 32768 }], answerFromReport: true });
    setup = await setUpRuns(t, fake.baseUrl, { reports: REPORTS, maxConcurrency: 2, texts: evidenceReport });
    worker = await startExecutor(t);
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('a run with evidence QUOTES stores spans that slice the report text, statuses as the quote kinds imply, the values untouched, in the query and in predictionAdded', async () => {
    fake.configure({ evidenceSeed: 1, latencyMs: 200 });
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId, strategy: 'CHAIN_OF_THOUGHT', evidence: 'QUOTES', constrained: true } })).startRun.run;
    const client = wsClient(t);
    const added = collect(client, `subscription($id: ID!) { predictionAdded(runId: $id) { report { text } ${FIELDS} } }`, { id: run.id });
    const state = await waitForStatus(t, run.id, ['SUCCEEDED', 'PARTIAL', 'FAILED']);
    expect(state.status).toBe('SUCCEEDED');
    const events = await added.done;
    await client.dispose();

    // Both variables of the fake's seed 1: changed case and spacing (NORMALISED) and slightly wrong (FUZZY).
    expect(Object.values(fakeQuotes('any report text long enough to quote from', KEYS, 1)).map((l) => l[0]!.kind)).toEqual(['CASE_AND_SPACE', 'SLIGHTLY_WRONG']);
    const body = fake.chatRequests()[0]!;
    expect(JSON.stringify(body.messages)).toContain('copied verbatim');
    expect(JSON.stringify((body.response_format as { json_schema: { schema: object } }).json_schema.schema)).toContain('"evidence"');

    const nodes = ok(await t.gql(PREDICTIONS, { id: run.id })).node.predictions.nodes as { report: { externalId: string; text: string }; fields: Field[] }[];
    expect(nodes).toHaveLength(REPORTS);
    for (const [i, node] of nodes.entries()) {
      expectEvidence(node.fields, node.report.text, 1);
      // The quotes never reach a value.
      expect(Object.fromEntries(node.fields.map((f) => [f.key, f.value]))).toEqual(expectedValues(i));
    }
    expect(events.length).toBeGreaterThanOrEqual(1);
    for (const event of events) expectEvidence(event.predictionAdded.fields, event.predictionAdded.report.text, 1);

    // The exports: one `<key>.evidence` column per variable with the spans as JSON, and the spans in the JSON's fields.
    const download = async (file: string) => (await fetch(`http://127.0.0.1:${t.port}/exports/runs/${run.id}/${file}`, { headers: { authorization: `Bearer ${t.adminKey}` } })).text();
    const { header, rows: csv } = parseWithPython(await download('predictions.csv'), 'csv') as { header: string[]; rows: Record<string, string>[] };
    expect(header.slice(-2)).toEqual(['diagnosis.evidence', 'breslow_mm.evidence']);
    const json = JSON.parse(await download('predictions.json')) as { predictions: { fields: Record<string, { evidence: Field['evidence'] }> }[] };
    expect(csv).toHaveLength(REPORTS);
    for (const [i, node] of nodes.entries()) {
      for (const field of node.fields) {
        expect(JSON.parse(csv[i]![`${field.key}.evidence`]!)).toEqual(field.evidence);
        expect(json.predictions[i]!.fields[field.key]!.evidence).toEqual(field.evidence);
      }
    }
  });

  it('an extract call with evidence QUOTES answers with the aligned spans (exact and invented quotes)', async () => {
    fake.configure({ evidenceSeed: 3, latencyMs: 0 });
    const text = evidenceReport(4);
    const payload = ok(await t.gql(EXTRACT, { i: { modelId: setup.modelId, useCaseId: setup.useCaseId, text, evidence: 'QUOTES' } })).extract;
    expect(payload.status).toBe('SUCCEEDED');
    expect(payload.values).toEqual(expectedValues(4));
    expect(Object.values(fakeQuotes(text, KEYS, 3)).map((l) => l[0]!.kind)).toEqual(['INVENTED', 'EXACT']);
    expectEvidence(payload.fields, text, 3);
  });

  it('without evidence the request sent to the endpoint is byte-identical to the one sent when no evidence setting is given, and fields have no spans', async () => {
    fake.configure({ latencyMs: 0 });
    const text = evidenceReport(2);
    const given = { modelId: setup.modelId, useCaseId: setup.useCaseId, text, strategy: 'CHAIN_OF_THOUGHT', constrained: true };
    const unset = ok(await t.gql(EXTRACT, { i: given })).extract;
    const none = ok(await t.gql(EXTRACT, { i: { ...given, evidence: 'NONE' } })).extract;
    const [a, b] = fake.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.rawBody);
    expect(a).toBe(b);
    expect(a).not.toContain('evidence');
    for (const payload of [unset, none]) {
      expect(payload.values).toEqual(expectedValues(2));
      expect((payload.fields as Field[]).every((f) => f.evidence.length === 0)).toBe(true);
    }
  });
});
