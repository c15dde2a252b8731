import { ExtractionError } from '../../../src/extraction/errors';
import type { ExtractionResult } from '../../../src/extraction/types';
import { ExecutorAbort } from '../../../src/jobs/failure';
import { predictionOutcome, succeededRow, unstorableRow } from '../../../src/jobs/prediction-outcome';
import { TERMINAL_RUN_STATUSES } from '../../../src/jobs/run-status';
import { LlmError } from '../../../src/llm/llm-error';

const KEY = { projectId: 'p', runId: 'r', reportId: 'x' };
const SETTINGS = { deadlineMs: 5000, secrets: ['sk-secret-1234'], reportText: 'Grade G2 tumour, 14 mm.' };

function result(overrides: Partial<ExtractionResult> = {}): ExtractionResult {
  return {
    strategy: 'PROMPT_GRAPH',
    values: { size: 4 },
    cells: { size: { status: 'VALUE', value: 4 }, site: { status: 'MISSING' } },
    json: { size: 4 },
    raw: ['{"size": 4}', ''],
    reasoning: ['', 'because'],
    parseError: null,
    finishReason: 'stop',
    truncated: false,
    inputTruncated: true,
    latencyMs: 12.6,
    promptTokens: 10,
    completionTokens: 5,
    attempts: 3,
    calls: 2,
    skipped: ['site'],
    ...overrides,
  };
}

describe('a prediction outcome', () => {
  it('stores an answered report as SUCCEEDED with its skipped cells marked and its outputs joined', () => {
    const outcome = predictionOutcome(KEY, { result: result() }, SETTINGS);
    expect(outcome.status).toBe('SUCCEEDED');
    expect(outcome.latencyMs).toBe(13);
    expect(outcome.row).toEqual({
      ...KEY,
      status: 'SUCCEEDED',
      values: { size: 4 },
      cells: { size: { status: 'VALUE', value: 4 }, site: { status: 'MISSING', skipped: true } },
      parsed: { size: 4 },
      raw: '{"size": 4}',
      reasoning: 'because',
      samples: null,
      finishReason: 'stop',
      latencyMs: 13,
      promptTokens: 10,
      completionTokens: 5,
      attempts: 3,
      error: null,
      errorCode: null,
      inputTruncated: true,
      evidence: null,
    });
  });

  it('aligns the quotes of an answer with evidence to the whole report text, in the stored row', () => {
    // The report was cut for the prompt; the span is still found in the stored text.
    const quotes = { size: ['14 mm', 'GRADE  g2', 'Grade G2 tumor', 'lymph nodes'], site: [] };
    const outcome = predictionOutcome(KEY, { result: result({ quotes }) }, SETTINGS);
    expect(outcome.status).toBe('SUCCEEDED');
    const evidence = outcome.row.evidence!;
    expect(Object.keys(evidence)).toEqual(['size', 'site']);
    expect(evidence.site).toEqual([]);
    expect(evidence.size!.map((q) => q.status)).toEqual(['EXACT', 'NORMALISED', 'FUZZY', 'UNALIGNED']);
    for (const q of evidence.size!) {
      if (q.status === 'UNALIGNED') expect([q.start, q.end, q.text, q.occurrences]).toEqual([null, null, null, 0]);
      else expect(SETTINGS.reportText.slice(q.start!, q.end!)).toBe(q.text);
    }
    expect(evidence.size![0]).toEqual({ quote: '14 mm', status: 'EXACT', start: 17, end: 22, text: '14 mm', occurrences: 1 });
  });

  it('fails an answer whose quotes cannot be stored with UNSTORABLE', () => {
    const outcome = predictionOutcome(KEY, { result: result({ quotes: { size: ['cut \ud800 off'] } }) }, SETTINGS);
    expect(outcome.row.errorCode).toBe('UNSTORABLE');
    expect(outcome.row.evidence).toBeNull();
  });

  it('fails an answer that cannot be stored with UNSTORABLE, keeping the usage of its calls and none of its text', () => {
    const outcome = predictionOutcome(KEY, { result: result({ raw: 'cut \ud800 off', values: { size: 'a\u0000b' } }) }, SETTINGS);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.row).toMatchObject({ ...KEY, status: 'FAILED', errorCode: 'UNSTORABLE', attempts: 3, latencyMs: 13, raw: null, values: null, cells: {} });
    expect(outcome.row.error).toMatch(/^the endpoint's answer cannot be stored/);
    expect(outcome.status === 'FAILED' && outcome.failure).toMatchObject({ code: 'UNSTORABLE', attempts: 3, transient: false, message: outcome.row.error });
  });

  it('fails a report whose strategy threw with the failure code, its attempts and the time until then', () => {
    const outcome = predictionOutcome(KEY, { error: new LlmError('HTTP_ERROR', 'upstream text', { status: 503, attempts: 4 }), latencyMs: 70 }, SETTINGS);
    expect(outcome).toMatchObject({ status: 'FAILED', latencyMs: 70, failure: { code: 'HTTP_503', transient: true } });
    expect(outcome.row).toMatchObject({ ...KEY, status: 'FAILED', errorCode: 'HTTP_503', attempts: 4, latencyMs: 70, error: 'the endpoint answered HTTP 503 (after 4 attempts)' });
    const late = predictionOutcome(KEY, { error: new ExecutorAbort('DEADLINE'), latencyMs: 5001 }, SETTINGS);
    expect(late.row).toMatchObject({ errorCode: 'DEADLINE', error: 'the report did not finish within its deadline of 5000 ms', attempts: 1 });
  });

  it('redacts the secrets from the stored message and the failure alike', () => {
    const outcome = predictionOutcome(KEY, { error: new ExtractionError('BAD_INPUT', 'bad key sk-secret-1234 given'), latencyMs: 1 }, SETTINGS);
    expect(outcome.row.error).toBe('bad key [redacted] given');
    expect(outcome.status === 'FAILED' && outcome.failure.message).toBe('bad key [redacted] given');
  });

  it('turns a row PostgreSQL refused into an UNSTORABLE one in our own words', () => {
    const row = succeededRow(KEY, result(), "");
    expect(unstorableRow(row, Object.assign(new Error('invalid input syntax'), { code: '22P02' }))).toMatchObject({
      ...KEY,
      status: 'FAILED',
      errorCode: 'UNSTORABLE',
      error: "the endpoint's answer could not be stored",
      attempts: 3,
      latencyMs: 13,
      raw: null,
    });
  });
});

describe('run statuses', () => {
  it('names the statuses a run ends in', () => {
    expect([...TERMINAL_RUN_STATUSES].sort()).toEqual(['CANCELLED', 'FAILED', 'PARTIAL', 'SUCCEEDED']);
  });
});
